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
#include "storage/rocksdb_crc32c.h"

#include <string_view>

#include "storage/crc32c.h"

uint32_t __wrap__ZN7rocksdb6crc32c6ExtendEjPKcm(uint32_t crc, const char* data, size_t size) {
  if (tarde::storage::crc32c_in_hardware()) {
    return tarde::storage::crc32c(std::string_view(data, size), crc);
  }
  return __real__ZN7rocksdb6crc32c6ExtendEjPKcm(crc, data, size);
}
