#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "storage/records.h"
#include "storage/value_format.h"

// Value encodings of every column family (specified in storage/FORMAT.md).
// A value is one format byte followed by the record: kValueFormat and a
// cereal portable binary archive, or, for TxRecord and EventRecord since
// store format 4, kCompactValueFormat and the compact layout (the decoders
// of those two read both). Encoders assert that the record is valid (an
// out-of-range enum is a programming error); decoders never throw: malformed,
// truncated or trailing bytes, an unknown format byte or class version, and
// out-of-range enums all come back as corruption naming what failed. All
// functions are pure and may be called from any thread.
namespace tarde::storage {

// Record checks shared by encoders (as asserts) and decoders (as corruption).
Status validate(const TxRecord& record);
Status validate(const EventRecord& event);
Status validate(const DueValue& value);
Status validate(const ReadyValue& value);
Status validate(const DeadLetter& letter);
Status validate(const QueueConfig& config);

std::string encode_tx(const TxRecord& record);
Result<TxRecord> decode_tx(std::string_view bytes);

std::string encode_event(const EventRecord& event);
Result<EventRecord> decode_event(std::string_view bytes);

std::string encode_due_value(const DueValue& value);
Result<DueValue> decode_due_value(std::string_view bytes);

std::string encode_ready_value(const ReadyValue& value);
Result<ReadyValue> decode_ready_value(std::string_view bytes);

// The cereal reference of the values the direct coder handles: tests check
// that both produce and accept the same bytes.
std::string encode_tx_with_cereal_for_test(const TxRecord& record);
std::string encode_event_with_cereal_for_test(const EventRecord& event);
std::string encode_due_with_cereal_for_test(const DueValue& value);
std::string encode_ready_with_cereal_for_test(const ReadyValue& value);
Result<TxRecord> decode_tx_with_cereal_for_test(std::string_view bytes);
Result<EventRecord> decode_event_with_cereal_for_test(std::string_view bytes);

std::string encode_dead_letter(const DeadLetter& letter);
Result<DeadLetter> decode_dead_letter(std::string_view bytes);

std::string encode_queue_config(const QueueConfig& config);
Result<QueueConfig> decode_queue_config(std::string_view bytes);

// The meta "format" value: the version as a 4-byte big-endian uint32 (no
// format byte, so that any future build can read it).
std::string encode_format_version(uint32_t version);
Result<uint32_t> decode_format_version(std::string_view bytes);

}  // namespace tarde::storage
