#pragma once

#include <string>
#include <string_view>

#include "storage/records.h"

// Direct coders of the cereal layout of storage/FORMAT.md with the
// little-endian flag: writers and readers of the index values DueValue and
// ReadyValue, and readers of TxRecord and EventRecord as stores before
// format 4 hold them (this build writes those two in the compact layout,
// storage/compact_record.h). They exist because going through cereal's
// archives cost more than the rest of a transition's storage work;
// storage/codec.cc stays the reference and the only public entry point.
// Pure functions; any thread.
namespace tarde::storage::record_bytes {

// Appends the whole value (format byte included). Requires: validate(value).
void append_due(std::string& out, const DueValue& value);
void append_ready(std::string& out, const ReadyValue& value);

// Reads a value written with the little-endian flag. Returns false for
// anything else, well-formed or not (big-endian flag, unknown version,
// truncation, trailing bytes, a bool that is not 0 or 1): the caller then
// decodes with cereal, which gives the authoritative answer and error. On
// true the record is complete but not yet validated. read_event and read_tx
// read versions 1 and 2 of their struct.
bool read_tx(std::string_view bytes, TxRecord* record);
bool read_event(std::string_view bytes, EventRecord* event);
bool read_due(std::string_view bytes, DueValue* value);
bool read_ready(std::string_view bytes, ReadyValue* value);

}  // namespace tarde::storage::record_bytes
