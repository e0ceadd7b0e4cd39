#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/timer_wheel.h"
#include "storage/records.h"
#include "storage/store.h"

namespace tarde::engine {

// DueTimers is the in-memory window over the on-disk `due` index: it keeps in
// a TimerWheel only the due entries it has paged in, and pages more in, in
// (fire_at_ms, tx_id) key order and at most page_limit at a time, as time
// reaches them. It exists so that memory does not grow with the number of
// pending retries (docs/design.md "Time"): ten million entries on
// disk cost a page, not ten million nodes.
//
// The pager's cursor is a key. Every key at or below it is "paged": it was
// read into memory (or kept by on_put), and has since fired or been deleted
// or is still in memory. Every key above it lives only on disk. Because
// fired entries leave memory, each entry on disk fires once per start().
// The horizon bounds how far ahead of now a page may read, so that the paged
// range, and with it the entries on_put must keep in memory, stays short.
//
// The disk is the truth and this is a rebuildable cache: the caller writes an
// entry to the store first and then calls on_put (or on_delete), on the same
// thread. Fired entries must be deleted by the caller (in the transition's
// batch); start() on the same store fires again whatever is still there.
//
// When one batch replaces a tx's entry, call on_delete for the removed key
// before on_put for the added one: if both keys are equal, the other order
// would drop from memory an entry that is on disk.
//
// Owned by the engine for the life of the server; the Store must outlive it.
// Not thread-safe: call it from the engine's one thread. Store read errors
// come back as the Store's Status and leave the pager where it was, so the
// next poll() retries the same page.
class DueTimers {
 public:
  struct Options {
    // How far past now a page may read. Longer means fewer scans when
    // entries are sparse, and more entries kept in memory by on_put.
    int64_t horizon_ms = 60'000;
    // The most entries one page (one scan) reads. It bounds the entries one
    // poll() can fire from disk.
    size_t page_limit = 4096;
    // The most entries memory holds. Entries written inside the paged range
    // (a burst enqueued due within the horizon) are kept, the earliest
    // first; above the limit the latest are left to the pager, so a burst of
    // any size costs at most this many, about 220 bytes each (28 MB). A
    // burst of 300,000 drained 5 % slower with 16,384 than with all of it
    // in memory: its pages are read during the drain (docs/benchmarks.md).
    size_t memory_limit = 131072;
  };

  // Requires: options.horizon_ms >= 0, options.page_limit >= 1,
  // options.memory_limit >= 1 (a page is then no longer than memory).
  DueTimers(storage::Store& store, Options options);

  // (Re)loads: forgets everything in memory, sets time to now_ms and reads
  // the first page (entries in key order with fire_at_ms <= now_ms +
  // horizon_ms, at most page_limit). Overdue entries come out at the next
  // poll(). On a read error nothing is paged and the next poll() pages.
  [[nodiscard]] Status start(int64_t now_ms);

  // Called right after entry was written to the store. Keeps it in memory
  // when its key is in the paged range (the pager will not read it again),
  // replacing an in-memory entry with the same key; otherwise leaves it to
  // be paged later. Memory full, the latest keys in it (this one, perhaps)
  // leave it and the paged range ends below them. Returns whether it was
  // kept in memory.
  // Before start() nothing is paged, so nothing is kept.
  // Requires: entry.tx_id is a valid tx_id (non-empty).
  bool on_put(const storage::DueEntry& entry);

  // Called right after the due entry (fire_at_ms, tx_id) was deleted from the
  // store: drops it from memory if it is there, in O(1). Other entries of the
  // same tx_id (with another fire time) are left alone.
  void on_delete(int64_t fire_at_ms, std::string_view tx_id);

  // Appends to out, in (fire_at_ms) order, at most `limit` of the entries
  // due by now_ms; they leave memory. Entries in memory come first (every
  // paged key is below every unpaged one); only when memory has nothing due
  // does a call page in, at most one page, and only if the unpaged part of
  // the index may hold entries due by now_ms. So one call's work stays
  // bounded (docs/design.md "Time": move due retries in bounded chunks),
  // also when a burst kept by on_put comes due at once: when more may be
  // due, next_wake_ms() is <= now_ms afterwards, and the caller polls again.
  // If now_ms is earlier than the previous poll's (a wall-clock step back),
  // memory is reloaded from disk first, so that nothing fires before its
  // time by the new clock.
  // On a read error returns it, with out unchanged and the cursor where it
  // was (memory too, unless it was just reloaded).
  // Requires: start() was called (even if it failed).
  [[nodiscard]] Status poll(int64_t now_ms, std::vector<storage::DueEntry>& out,
                            size_t limit = std::numeric_limits<size_t>::max());

  // When poll() should next be called: the earlier of the wheel's next busy
  // slot (a lower bound of the earliest in-memory entry) and the earliest
  // time an entry not yet paged may be due, which is the cursor's time when
  // the cursor stopped inside a millisecond, or else the fire time of the
  // first entry seen beyond the paged range (lowered by every on_put beyond
  // it). A value <= now means "poll now". nullopt when nothing is in memory
  // and the index holds nothing beyond the paged range, or before start().
  // A wake may find nothing to do (a deleted entry, a cascade); it is never
  // later than an entry's fire time.
  std::optional<int64_t> next_wake_ms() const;

  // The entries held in memory: at most memory_limit.
  size_t in_memory() const;

  // Whether the entry (fire_at_ms, tx_id), which the caller knows is on
  // disk, was forgotten: its key is paged, so the pager will not read it
  // again, yet memory does not hold it. A fired entry whose transition
  // wrote nothing stays on disk that way and would wait for a restart; the
  // reconciler gives it back with on_put. False before start().
  bool forgot(int64_t fire_at_ms, std::string_view tx_id) const;

 private:
  // Where paging stopped. kNothing: nothing paged yet. kKey: every key <=
  // (fire_at_ms, tx_id) is paged. kThrough: every key with fire time <=
  // fire_at_ms is paged.
  struct Cursor {
    enum class Kind { kNothing, kKey, kThrough };
    Kind kind = Kind::kNothing;
    int64_t fire_at_ms = 0;
    std::string tx_id;
  };

  // An in-memory entry's place in key order, which is the `due` family's.
  struct Key {
    int64_t fire_at_ms = 0;
    std::string tx_id;
  };
  struct KeyView {
    int64_t fire_at_ms = 0;
    std::string_view tx_id;
  };
  struct KeyOrder {
    using is_transparent = void;
    static KeyView view(const Key& key) { return {key.fire_at_ms, key.tx_id}; }
    static KeyView view(const KeyView& key) { return key; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      const KeyView x = view(a);
      const KeyView y = view(b);
      return x.fire_at_ms != y.fire_at_ms ? x.fire_at_ms < y.fire_at_ms : x.tx_id < y.tx_id;
    }
  };

  bool is_paged(int64_t fire_at_ms, std::string_view tx_id) const;
  std::optional<int64_t> unpaged_min_ms() const;
  [[nodiscard]] Status read_page(int64_t now_ms);
  void keep(const storage::DueEntry& entry);
  // Above memory_limit, the latest keys leave memory for the disk alone.
  void shrink();
  void fire(int64_t now_ms, std::vector<storage::DueEntry>& out, size_t limit);
  void reset(int64_t now_ms);

  storage::Store& store_;
  const Options options_;
  bool started_ = false;
  TimerWheel<storage::DueEntry> wheel_;
  // One handle per in-memory entry, in key order, so that on_delete cancels
  // it, a key is never in memory twice, and shrink() finds the latest.
  std::map<Key, TimerWheel<storage::DueEntry>::Handle, KeyOrder> handles_;
  Cursor cursor_;
  // With a kThrough cursor: a lower bound of the fire times beyond it on
  // disk, or nullopt when there are none.
  std::optional<int64_t> beyond_min_ms_;
  std::vector<TimerWheel<storage::DueEntry>::Fired> fired_;  // reused by fire()
};

}  // namespace tarde::engine
