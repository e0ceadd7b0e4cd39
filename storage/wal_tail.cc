#include "storage/wal_tail.h"

#include <algorithm>

#include "storage/crc32c.h"

namespace tarde::storage {
namespace {

constexpr size_t kBlockBytes = 32768;
constexpr size_t kHeaderBytes = 7;  // crc32c (4), length (2), type (1)

// RocksDB's record types (db/log_format.h) that tarde's WALs hold; the
// recyclable ones (5-8, another header) are never written, since tarde does
// not recycle WAL files.
enum RecordType : uint8_t {
  kFull = 1,
  kFirst = 2,
  kMiddle = 3,
  kLast = 4,
  kSetCompression = 9,
  kTimestampSizes = 10,
};

uint32_t fixed32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint32_t>(u[0]) | (static_cast<uint32_t>(u[1]) << 8) |
         (static_cast<uint32_t>(u[2]) << 16) | (static_cast<uint32_t>(u[3]) << 24);
}

uint32_t unmask(uint32_t masked) {
  const uint32_t rotated = masked - 0xa282ead8u;
  return (rotated >> 17) | (rotated << 15);
}

// What the physical record at `pos` is.
enum class Physical {
  kIntact,    // its checksum matches
  kDamaged,   // a sane header (known type, a length within the block) whose
              // checksum does not match: the length still finds the next record
  kUnusable,  // zeros, an unknown type, a length past the block or the file
};

Physical read_record(std::string_view bytes, size_t pos, uint8_t* type, size_t* length) {
  const size_t left_in_block = kBlockBytes - pos % kBlockBytes;
  if (bytes.size() - pos < kHeaderBytes) return Physical::kUnusable;
  const char* header = bytes.data() + pos;
  *length = static_cast<unsigned char>(header[4]) | (static_cast<unsigned char>(header[5]) << 8);
  *type = static_cast<uint8_t>(header[6]);
  const bool known =
      (*type >= kFull && *type <= kLast) || *type == kSetCompression || *type == kTimestampSizes;
  if (!known || kHeaderBytes + *length > left_in_block ||
      kHeaderBytes + *length > bytes.size() - pos) {
    return Physical::kUnusable;
  }
  const uint32_t crc = crc32c(bytes.substr(pos + 6, 1 + *length));
  return unmask(fixed32(header)) == crc ? Physical::kIntact : Physical::kDamaged;
}

}  // namespace

WalTail find_wal_tail(std::string_view bytes) {
  size_t pos = 0;
  size_t end = 0;             // after the last whole logical record
  bool in_fragments = false;  // a FIRST was read, its LAST not yet
  bool broken = false;        // something not intact was met
  while (pos < bytes.size()) {
    const size_t left_in_block = kBlockBytes - pos % kBlockBytes;
    if (left_in_block < kHeaderBytes) {  // a block's trailer: zeros
      pos += left_in_block;
      continue;
    }
    uint8_t type = 0;
    size_t length = 0;
    const Physical physical = read_record(bytes, pos, &type, &length);
    if (physical == Physical::kUnusable) {
      // Zeros, or a header that cannot be followed: the rest of this block
      // cannot be read.
      broken = true;
      in_fragments = false;
      pos += left_in_block;
      continue;
    }
    const bool starts_record =
        type == kFull || type == kFirst || type == kSetCompression || type == kTimestampSizes;
    pos += kHeaderBytes + length;
    if (physical == Physical::kDamaged || starts_record == in_fragments) {
      // A checksum that does not match, or fragments out of order.
      broken = true;
      in_fragments = false;
      continue;
    }
    if (broken) {
      // An intact record after a broken one: a fragment of the torn record
      // is harmless, a record that starts here means damage before the tail.
      if (starts_record) return WalTail{bytes.size(), false, true};
      continue;
    }
    in_fragments = type == kFirst || type == kMiddle;
    if (!in_fragments) end = pos;
  }
  const std::string_view after = bytes.substr(end);
  const bool dropped = std::any_of(after.begin(), after.end(), [](char c) { return c != '\0'; });
  return WalTail{end, dropped, false};
}

}  // namespace tarde::storage
