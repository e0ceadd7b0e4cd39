#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "storage/store.h"

namespace tarde::engine {

// ReadyQueue is the in-memory head of one queue's `ready` index: the requests
// waiting for a dispatcher, in hand-out order (ready_at_ms, seq). Only a
// bounded head is in memory; the rest stays in the `ready` column family and
// is paged in, a page at a time, when the head runs dry. It exists so that
// memory does not grow with the number of ready requests (docs/design.md
// "Memory": a burst of a million due retries costs a page, not a million
// nodes).
//
// The pager's cursor is a key. Every entry at or below it is "paged": in
// memory, or handed out (a lease keeps its entry on disk), or deleted. Every
// entry above it lives only on disk. When on_put would grow the head beyond
// memory_limit, the largest keys leave memory and the cursor moves back to
// the largest key kept: they are read again later. A request that is leased
// may therefore be read again while its lease runs; the caller skips those.
//
// The floor is a key no entry still to be handed out is below, in memory or
// on disk: the smaller of the head's first key and the successor of the last
// key handed out (or the floor the queue started from). Entries handed out
// and still on disk (leased) are below it; the caller bounds those. Persisted
// now and then (Engine), it lets a restart start reading at the floor instead
// of at the start of the queue's range, past the deletions of every entry
// handed out since compaction last ran (docs/design.md "Traps").
//
// The disk is the truth: the caller writes (or deletes) an entry in the store
// first and then calls on_put (or on_erase), on the same thread. Owned by
// the Engine; the Store must outlive it. Not thread-safe. Store read errors
// come back as the Store's Status and leave the queue as it was.
class ReadyQueue {
 public:
  using Key = std::pair<int64_t, uint64_t>;  // (ready_at_ms, seq)
  struct Item {
    std::string tx_id;
    uint32_t attempt = 0;
  };
  struct Options {
    // Entries read from disk per page: one page per refill of an empty head.
    size_t page_limit = 1024;
    // The most entries the head holds; above it on_put pushes the largest
    // out to disk. Bounds the memory of one queue (~100 bytes an entry).
    size_t memory_limit = 4096;
  };

  // Requires: options.page_limit >= 1, options.memory_limit >= page_limit.
  ReadyQueue(std::string queue, Options options);

  // Forgets memory: the next front() reads the first page from disk, from
  // the floor.
  void reset();
  // Where reading starts: the caller knows that no entry of the queue on
  // disk is below floor. Call before the first front() (or after reset()).
  void start_from(Key floor);
  // See the class comment. Never above a key on_put was given since.
  Key floor() const;
  // How many entries pop_front() has dropped since construction.
  uint64_t pops() const { return pops_; }

  // Called right after the entry was written to the store: kept in memory
  // when its key is paged, else left for a later page.
  void on_put(Key key, Item item);
  // Called right after the entry was deleted from the store.
  void on_erase(Key key);

  // The first entry in hand-out order, reading a page when the head is empty
  // and the disk may hold more; nullopt when the queue is empty.
  [[nodiscard]] Result<std::optional<std::pair<Key, Item>>> front(storage::Store& store);
  // Drops the entry front() returned from memory (handed out, or stale). Its
  // key stays paged: it is not read again unless on_put pushes it out.
  void pop_front();

  // The first entry already in memory, without reading; nullopt when the
  // head is empty (the disk may still hold entries).
  std::optional<Key> front_in_memory() const;
  size_t in_memory() const { return head_.size(); }
  // The tx_ids of the first `count` entries in memory, in hand-out order
  // (fewer when the head holds fewer): views into the head, valid until it
  // next changes.
  std::vector<std::string_view> first_ids(size_t count) const;
  // Whether the entry under `key`, which the caller knows is on disk and
  // not leased, was forgotten: its key is paged, so no page reads it again,
  // yet the head does not hold it. It would never be handed out before a
  // restart; the reconciler gives it back with on_put.
  bool forgot(const Key& key) const { return is_paged(key) && head_.count(key) == 0; }

 private:
  enum class Cursor { kNothing, kKey, kAll };
  bool is_paged(const Key& key) const;
  [[nodiscard]] Status read_page(storage::Store& store);
  void shrink();

  std::string queue_;
  Options options_;
  std::map<Key, Item> head_;
  Cursor cursor_ = Cursor::kNothing;
  Key cursor_key_{0, 0};  // with kKey: every key <= it is paged
  // No entry not yet handed out is below it but those in head_: the start
  // floor, or the successor of the key pop_front() last dropped.
  Key low_{0, 0};
  uint64_t pops_ = 0;
};

}  // namespace tarde::engine
