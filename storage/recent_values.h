#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/string_hash.h"
#include "storage/kv.h"

namespace tarde::storage {

// RecentValues remembers the values of recently committed or read keys of
// one column family, so that the engine's next read of a record it just
// wrote or read (RESERVE and RESPOND read the record ENQUEUE wrote a moment
// ago; RESPOND reads the one RESERVE read from a table file) is a hash
// lookup instead of a RocksDB Get.
//
// It is a cache of what the base store holds: StagedKv fills it only with
// values whose group the base has committed, or that it read from the base
// for a key no uncommitted group holds, so a hit equals what the base would
// return. Memory is bounded by kBytesMax; the oldest insertions are
// evicted first, and replacing a key's value keeps its place (a record
// rewritten by RESERVE and RESPOND costs no queue entry).
//
// A value remembered as read later (ReadLater::kYes: a record whose request
// waits in `ready`, or whose retry fires soon) is held apart, within
// kHeldBytesMax, and is not evicted until a newer value of its key replaces
// it or it is forgotten. A burst of retries fires thousands of requests
// ahead of their hand-outs; kept first in, first out with the recent
// values, the record each hand-out needs would be the oldest there, gone
// before it is read. A value that does not fit in the held bound is
// remembered as a recent one. Owned by a StagedKv; one thread, like its
// owner.
class RecentValues {
 public:
  // About 2,500 records of 300 bytes: still far more than the transactions
  // a busy server touches twice within a few commits (64 connections keep
  // about 128 between ENQUEUE and RESPOND; retries at 1000/s reread records
  // written a second before), and small enough for its lookups to stay in
  // the CPU's caches. At 8 MB they cost 2-3 % more server CPU per W1 cycle
  // (docs/benchmarks.md).
  static constexpr size_t kBytesMax = 1 << 20;
  // About 80,000 records of 300 bytes, waiting in `ready` or due soon
  // (storage/store.cc says which): a burst of 100,000 due at once fires
  // tens of thousands ahead of the hand-outs, and its fires and hand-outs
  // then read them from here instead of the table files.
  static constexpr size_t kHeldBytesMax = 32 << 20;
  // What one entry costs besides its key and value bytes (nodes, the queue).
  static constexpr size_t kEntryOverheadBytes = 96;

  // The remembered value of key, or nullopt when none is remembered (which
  // says nothing about the base).
  const std::string* find(std::string_view key) const;
  // Remembers the value the base holds for key, replacing an older one;
  // held apart when it will be read later and the held bound has room.
  void remember(const std::string& key, std::string value, ReadLater read_later = ReadLater::kNo);
  // The key was deleted in the base (or its value is unknown): forget it.
  void forget(const std::string& key);
  void clear();
  // The bytes of the recent values, and of the held ones.
  size_t bytes() const { return bytes_; }
  size_t held_bytes() const { return held_bytes_; }
  size_t size() const { return values_.size(); }

 private:
  // The stamp of a held entry, which no queue entry has.
  static constexpr uint64_t kHeld = 0;
  struct Entry {
    std::string value;
    uint64_t stamp = kHeld;  // a recent value's: matches the queue entry that may evict it
  };
  // Takes the entry's bytes off its bound, before it is replaced or erased.
  void release(const std::string& key, const Entry& entry);
  void evict_to_fit();
  static size_t cost(const std::string& key, const std::string& value) {
    return key.size() + value.size() + kEntryOverheadBytes;
  }

  std::unordered_map<std::string, Entry, StringHash, std::equal_to<>> values_;
  // Insertion order of the recent values, for eviction; an element whose
  // stamp no longer matches its key's entry (or whose key is gone) is a
  // leftover of a forgotten or held value and is skipped.
  std::deque<std::pair<std::string, uint64_t>> order_;
  uint64_t next_stamp_ = kHeld + 1;
  size_t bytes_ = 0;
  size_t held_bytes_ = 0;
  size_t held_count_ = 0;
};

}  // namespace tarde::storage
