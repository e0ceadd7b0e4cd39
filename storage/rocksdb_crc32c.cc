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
//
// RocksDB's WAL writer also joins each record's type to its payload with
// crc32c::Crc32cCombine, multiplications of polynomials in software: about
// 2,000 instructions for a record of a few hundred bytes (they grow with the
// number of bits of the length, not with the length). At one connection,
// where every command is a record of a few hundred bytes, 5 % of a
// command's instructions. Carrying the first CRC over the payload's length
// in zeros with the CPU's instruction takes a step per 8 bytes, so records
// up to kCombineInHardwareMax bytes go that way, and longer ones (a group
// of many commands) to RocksDB's code, whose cost does not grow with them.
#include "storage/rocksdb_crc32c.h"

#include <string_view>

#include "storage/crc32c.h"

namespace {

// About where the two cost the same: 256 steps of the instruction, each
// waiting for the last, against RocksDB's fixed cost.
constexpr size_t kCombineInHardwareMax = 2048;

}  // namespace

uint32_t __wrap__ZN7rocksdb6crc32c6ExtendEjPKcm(uint32_t crc, const char* data, size_t size) {
  if (tarde::storage::crc32c_in_hardware()) {
    return tarde::storage::crc32c(std::string_view(data, size), crc);
  }
  return __real__ZN7rocksdb6crc32c6ExtendEjPKcm(crc, data, size);
}

uint32_t __wrap__ZN7rocksdb6crc32c13Crc32cCombineEjjm(uint32_t crc1, uint32_t crc2,
                                                      size_t crc2len) {
  if (crc2len <= kCombineInHardwareMax && tarde::storage::crc32c_in_hardware()) {
    return tarde::storage::crc32c_combine(crc1, crc2, crc2len);
  }
  return __real__ZN7rocksdb6crc32c13Crc32cCombineEjjm(crc1, crc2, crc2len);
}
