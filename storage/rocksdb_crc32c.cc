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
// crc32c::Crc32cCombine, a software multiplication of polynomials for each
// bit set in the payload's length: about 2,000 instructions for a record
// of a few hundred bytes, 5 % of a command's at one connection, where every
// command is a record. Carrying the first CRC over the payload's length in
// zeros with the CPU's instruction takes a step per 8 bytes. On this
// project's machines RocksDB's code took about 35 ns per bit set in the
// length (140 ns for 300 bytes, 220 for 1,000, 37 for 2,048) and the
// instruction about 0.1 ns per byte (27, 96 and 200 ns), so a length goes
// to the instruction when it is at most kCombineBytesPerBit times its
// number of bits, and otherwise to RocksDB's code.
#include "storage/rocksdb_crc32c.h"

#include <bit>
#include <string_view>

#include "storage/crc32c.h"

namespace {

// Below where the two cost the same (about 350 bytes per bit set).
constexpr size_t kCombineBytesPerBit = 256;

}  // namespace

uint32_t __wrap__ZN7rocksdb6crc32c6ExtendEjPKcm(uint32_t crc, const char* data, size_t size) {
  if (tarde::storage::crc32c_in_hardware()) {
    return tarde::storage::crc32c(std::string_view(data, size), crc);
  }
  return __real__ZN7rocksdb6crc32c6ExtendEjPKcm(crc, data, size);
}

uint32_t __wrap__ZN7rocksdb6crc32c13Crc32cCombineEjjm(uint32_t crc1, uint32_t crc2,
                                                      size_t crc2len) {
  const auto bits = static_cast<size_t>(std::popcount(crc2len));
  if (crc2len <= kCombineBytesPerBit * bits && tarde::storage::crc32c_in_hardware()) {
    return tarde::storage::crc32c_combine(crc1, crc2, crc2len);
  }
  return __real__ZN7rocksdb6crc32c13Crc32cCombineEjjm(crc1, crc2, crc2len);
}
