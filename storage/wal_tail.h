#pragma once

#include <cstdint>
#include <string_view>

namespace tarde::storage {

// Where the replay of a RocksDB WAL should stop. tarde's WAL files are given
// their size up front (wal_file_system.h), so after a crash the unwritten
// part reads as zeros, and a write cut short by a power loss can leave a
// record whose first bytes reached the disk and whose rest reads as zeros.
// Such a record belongs to the one commit in flight, whose reply was never
// sent (it waits for the fdatasync): replay should drop it, as it drops a
// record cut short at the end of a file that grows. RocksDB itself reports
// it as a checksum mismatch and refuses to open.
//
// The scan follows RocksDB's log format (32 KiB blocks of records: a masked
// crc32c of type and payload, a 2-byte length, a type; a long record split
// in FIRST, MIDDLE and LAST fragments). `end` is the end of the last whole,
// intact logical record. Past it there may be zeros, a partial record or
// fragments of a torn one. When an intact record starts after a damaged one,
// the damage is not a tail: `damaged` is set, `end` is the whole file, and
// RocksDB's replay refuses it as before (docs/design.md, "Damaged data
// directories").
struct WalTail {
  uint64_t end = 0;
  // Bytes other than zeros come after `end`: a record was dropped.
  bool dropped = false;
  bool damaged = false;
};
WalTail find_wal_tail(std::string_view bytes);

}  // namespace tarde::storage
