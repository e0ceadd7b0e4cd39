#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tarde::storage {

// CRC-32C (Castagnoli), the checksum of RocksDB's WAL records, which the
// WAL's tail scan (wal_tail.h) verifies. Uses the CPU's crc32 instruction
// where it has one (SSE 4.2), a table otherwise; both give the same value.
uint32_t crc32c(std::string_view bytes, uint32_t crc = 0);
// The table version alone, for tests that compare the two.
uint32_t crc32c_portable(std::string_view bytes, uint32_t crc = 0);
// Whether crc32c() uses the CPU's instruction on this machine.
bool crc32c_in_hardware();
// The CRC-32C of some bytes A followed by `second_size` bytes B, from
// crc32c(A) and crc32c(B): the first CRC carried over B's length in zeros,
// then the second added. Takes time in proportion to `second_size` (the
// CPU's instruction does 8 zero bytes in one step), so it suits short B.
uint32_t crc32c_combine(uint32_t first, uint32_t second, size_t second_size);
// The table version alone, for tests that compare the two.
uint32_t crc32c_combine_portable(uint32_t first, uint32_t second, size_t second_size);

}  // namespace tarde::storage
