#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "storage/records.h"

// The compact layout (format byte 2, storage/FORMAT.md "Compact values") of
// the two values every transition writes, TxRecord and EventRecord: integers
// as varints, no archive flag and no class versions. It exists because the
// cereal layout spent 8 bytes on every integer and length, which made a
// transaction record with a 128-byte payload about 450 bytes: every
// transition paid for those bytes in the WAL, the memtable, and each flush
// and compaction. Pure functions; any thread.
namespace tarde::storage::compact_record {

// Appends the whole value, format byte included. Requires: validate(record).
void append_tx(std::string& out, const TxRecord& record);
void append_event(std::string& out, const EventRecord& event);

// Reads a value whose first byte is kCompactValueFormat. On ok the record is
// complete but not yet validated; otherwise corruption saying what is wrong:
// another format byte, truncation, bytes left over, a varint that is longer
// than it needs to be or too large for its field, a flag byte other than 0
// or 1. Strict, so that the encoding of a record is unique.
[[nodiscard]] Status read_tx(std::string_view bytes, TxRecord* record);
[[nodiscard]] Status read_event(std::string_view bytes, EventRecord* event);

}  // namespace tarde::storage::compact_record
