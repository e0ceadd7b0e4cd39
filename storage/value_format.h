#pragma once

#include <cstdint>

// The constants of the value layout (storage/FORMAT.md, "Values"), defined
// once for both coders that write it: codec.cc through cereal, and
// record_bytes.cc by hand for the two values every transition touches.
// Every number here is stored on disk; changing one is a format change.
namespace tarde::storage {

// The leading byte of every cereal-encoded value. A new value layout gets a
// new byte and the old reader stays.
inline constexpr uint8_t kValueFormat = 1;

// The leading byte of the compact layout (storage/compact_record.h) in which
// TxRecord and EventRecord are written since store format 4. Values of
// kValueFormat are still read.
inline constexpr uint8_t kCompactValueFormat = 2;

// The class version of every persisted struct, written once per type per
// value before the type's first fields (cereal's CEREAL_CLASS_VERSION).
inline constexpr uint32_t kClassVersion = 1;

// QueueConfig's class version: 2 added history_max, stuck_after_ms and
// paused. Version 1 values are still read (the new fields take their
// defaults).
inline constexpr uint32_t kQueueConfigVersion = 2;

// EventRecord's class version: 2 added due_at_ms (the instant a timer fire
// was due). Version 1 values are still read, by both coders (due_at_ms 0).
inline constexpr uint32_t kEventRecordVersion = 2;

// TxRecord's class version: 2 added first_event and newest_event (the audit
// events a record holds itself, store format 3). Version 1 values are still
// read, by both coders (neither event held).
inline constexpr uint32_t kTxRecordVersion = 2;

// The byte cereal's portable binary archive writes first: 1 when the writer
// was little-endian. Values written here always carry it; the hand coder
// reads only this form and leaves any other to cereal.
inline constexpr uint8_t kLittleEndianFlag = 1;

}  // namespace tarde::storage
