#pragma once

#include <cstddef>
#include <cstdint>

// The names the linker's --wrap gives two functions of RocksDB in every
// program that links tarde_storage (CMakeLists.txt): RocksDB's calls reach
// __wrap_, defined in storage/rocksdb_crc32c.cc, and __real_ is RocksDB's
// own code. Any thread.
extern "C" {
// rocksdb::crc32c::Extend(uint32_t, const char*, size_t): the CRC-32C of
// `size` bytes at `data`, continuing `crc` (0 for a new one).
uint32_t __real__ZN7rocksdb6crc32c6ExtendEjPKcm(uint32_t crc, const char* data, size_t size);
uint32_t __wrap__ZN7rocksdb6crc32c6ExtendEjPKcm(uint32_t crc, const char* data, size_t size);
// rocksdb::crc32c::Crc32cCombine(uint32_t, uint32_t, size_t): the CRC-32C of
// A followed by B, from A's CRC, B's CRC and B's size. RocksDB's WAL writer
// calls it once per record, to join the record type's CRC to the payload's.
uint32_t __real__ZN7rocksdb6crc32c13Crc32cCombineEjjm(uint32_t crc1, uint32_t crc2, size_t crc2len);
uint32_t __wrap__ZN7rocksdb6crc32c13Crc32cCombineEjjm(uint32_t crc1, uint32_t crc2, size_t crc2len);
}
