#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "storage/records.h"

namespace tarde::storage {

// DecodedRecords remembers transaction records in their decoded form beside
// the bytes they decode from, so that reading a record the engine has just
// written or read (RESERVE and RESPOND read what ENQUEUE wrote a moment ago)
// costs a comparison of bytes instead of a decode: a decode took about 2,600
// instructions of a W1 command's 34,000 (docs/benchmarks.md).
//
// An entry says only "these bytes decode to this record", which stays true
// whatever happens to the store: a hit needs the bytes read now to equal the
// remembered ones, so a record rewritten since, a failed commit or an
// evicted slot can never hand back a wrong record, and nothing needs to be
// invalidated. Slots are chosen by a hash of the tx_id (one per tx_id, a
// newer record replacing an older one). Memory is bounded by kSlots and
// kRecordBytesMax; slots are allocated on the first remember, so a Store
// that never reads or writes records (a tool's) costs nothing. Owned by a
// Store; one thread, like its owner.
class DecodedRecords {
 public:
  // 64 connections in W1 keep about 128 records between ENQUEUE and
  // RESPOND: 1024 slots keep most of them (about one in ten is replaced by
  // a colliding tx_id first) for about 0.5 MB of slots plus their records.
  static constexpr size_t kSlots = 1024;
  // A record larger than this (its payload, mostly) is not kept: the slots
  // then hold at most about 2 MB, and a decode is cheap beside what
  // copying such a payload around costs anyway.
  static constexpr size_t kRecordBytesMax = 1024;
  static_assert((kSlots & (kSlots - 1)) == 0, "a power of two: a slot is a mask of the hash");

  // The record `bytes` decode to when remembered for tx_id; nullptr
  // otherwise (which says nothing about the bytes).
  const TxRecord* find(std::string_view tx_id, std::string_view bytes) const;
  // Remembers that `bytes` decode to `record`, copying both into the
  // tx_id's slot (whose strings keep their capacity: a slot reused by
  // records of similar size allocates nothing). Requires: decode_tx(bytes)
  // equals record (encode_tx(record) gives such bytes).
  void remember(std::string_view bytes, const TxRecord& record);

 private:
  struct Slot {
    std::string bytes;  // empty: the slot holds nothing
    TxRecord record;
  };
  static size_t slot_of(std::string_view tx_id);

  std::vector<Slot> slots_;
};

}  // namespace tarde::storage
