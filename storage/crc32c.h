#pragma once

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

}  // namespace tarde::storage
