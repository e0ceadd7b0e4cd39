#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tarde::testing {

// A file's bytes, whole (an empty string when it cannot be read).
std::string file_bytes(const std::string& path);

// Where the records of a WAL a test wrote end. A WAL's size is set ahead of
// its data (storage/wal_file_system.h), the reserved part reading as zeros;
// the tests' records all end with a byte other than zero.
size_t wal_data_end(std::string_view wal);

// Whether any block of the file below `below` bytes is allocated but
// unwritten (reserved by fallocate, never written), from the file system's
// extent map; nullopt when the file system does not say (no FIEMAP).
std::optional<bool> has_unwritten_blocks(const std::string& path, size_t below);

}  // namespace tarde::testing
