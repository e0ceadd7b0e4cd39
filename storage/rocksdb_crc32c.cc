// RocksDB's CRC-32C, computed with the CPU's crc32 instruction.
//
// Debian builds its RocksDB portable, so the library's crc32c::Extend, which
// checksums every WAL record it writes and every table block its flushes
// and compactions write, is the table-driven one: 3 % of the user-space
// instructions of a W1 command (docs/benchmarks.md). The link of every
// program that links tarde_storage redirects RocksDB's calls to
// rocksdb::crc32c::Extend here (`--wrap`, CMakeLists.txt), and this
// computes the same function with storage/crc32c.h, in hardware where the
// CPU has the instruction and with RocksDB's own code otherwise. The values
// are the same either way: CRC-32C is one function, whatever computes it
// (tests/storage/rocksdb_crc32c_test.cc compares the two).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "storage/crc32c.h"

extern "C" {
// RocksDB's own rocksdb::crc32c::Extend(uint32_t, const char*, size_t),
// under the name the linker's --wrap gives the original.
uint32_t __real__ZN7rocksdb6crc32c6ExtendEjPKcm(uint32_t crc, const char* data, size_t size);

// What RocksDB's calls to rocksdb::crc32c::Extend reach: the CRC-32C of
// `size` bytes at `data`, continuing `crc` (0 for a new one).
uint32_t __wrap__ZN7rocksdb6crc32c6ExtendEjPKcm(uint32_t crc, const char* data, size_t size) {
  if (!tarde::storage::crc32c_in_hardware()) {
    return __real__ZN7rocksdb6crc32c6ExtendEjPKcm(crc, data, size);
  }
  return tarde::storage::crc32c(std::string_view(data, size), crc);
}
}
