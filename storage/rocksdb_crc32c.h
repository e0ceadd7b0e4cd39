#pragma once

#include <cstddef>
#include <cstdint>

// The two names the linker's --wrap gives rocksdb::crc32c::Extend(uint32_t,
// const char*, size_t) in every program that links tarde_storage
// (CMakeLists.txt): RocksDB's calls reach __wrap_, defined in
// storage/rocksdb_crc32c.cc, and __real_ is RocksDB's own code. Both
// compute the CRC-32C of `size` bytes at `data`, continuing `crc` (0 for a
// new one). Any thread.
extern "C" {
uint32_t __real__ZN7rocksdb6crc32c6ExtendEjPKcm(uint32_t crc, const char* data, size_t size);
uint32_t __wrap__ZN7rocksdb6crc32c6ExtendEjPKcm(uint32_t crc, const char* data, size_t size);
}
