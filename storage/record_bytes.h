#pragma once

#include <string>
#include <string_view>

#include "storage/records.h"

// Direct writers and readers of the values every transition touches
// (TxRecord, EventRecord and the index values DueValue and ReadyValue), byte
// for byte the cereal layout of
// storage/FORMAT.md with the little-endian flag. They exist because going
// through cereal's archives cost more than the rest of a transition's
// storage work; storage/codec.cc stays the reference and the only public
// entry point. Pure functions; any thread.
namespace tarde::storage::record_bytes {

// Appends the whole value (format byte included). Requires: validate(record).
void append_tx(std::string& out, const TxRecord& record);
void append_event(std::string& out, const EventRecord& event);
void append_due(std::string& out, const DueValue& value);
void append_ready(std::string& out, const ReadyValue& value);

// Reads a value written with the little-endian flag. Returns false for
// anything else, well-formed or not (big-endian flag, unknown version,
// truncation, trailing bytes, a bool that is not 0 or 1): the caller then
// decodes with cereal, which gives the authoritative answer and error. On
// true the record is complete but not yet validated. append_event and
// append_tx write version 2 of their struct; read_event and read_tx read
// versions 1 and 2.
bool read_tx(std::string_view bytes, TxRecord* record);
bool read_event(std::string_view bytes, EventRecord* event);
bool read_due(std::string_view bytes, DueValue* value);
bool read_ready(std::string_view bytes, ReadyValue* value);

}  // namespace tarde::storage::record_bytes
