#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "base/assert.h"

namespace tarde::engine {

namespace detail {

// Each level of the wheel resolves 6 bits of time: 64 slots, so that one
// uint64 occupancy bitmap per level finds the earliest busy slot with one
// count-trailing-zeros instead of a walk.
inline constexpr int kWheelSlotBits = 6;
inline constexpr int kWheelSlots = 1 << kWheelSlotBits;
// ceil(64 / 6) levels cover every int64 due time (level 10 resolves the top
// 4 bits), so there is no overflow list and no due time can be refused. With
// real wall-clock times only the first 8 levels (2^48 ms, ~8900 years) fill.
inline constexpr int kWheelLevels = (64 + kWheelSlotBits - 1) / kWheelSlotBits;
static_assert(kWheelLevels * kWheelSlotBits >= 64);
static_assert(kWheelSlots == 64, "one uint64 bitmap per level");

// Times become unsigned keys with the same order (the sign bit flipped), so
// that the level arithmetic below works on bits for negative times as well.
inline constexpr uint64_t wheel_key(int64_t ms) {
  return static_cast<uint64_t>(ms) ^ (uint64_t{1} << 63);
}
inline constexpr int64_t wheel_time(uint64_t key) {
  return static_cast<int64_t>(key ^ (uint64_t{1} << 63));
}

// The key bits above `level`'s digit. An entry lives at the lowest level
// whose high bits it shares with the wheel's current time.
inline constexpr uint64_t wheel_high_mask(int level) {
  const int shift = kWheelSlotBits * (level + 1);
  return shift >= 64 ? 0 : ~uint64_t{0} << shift;
}

}  // namespace detail

// TimerWheel<T> holds values that come due at millisecond instants and hands
// them back, in due order, when time is advanced past them. It exists so that
// the engine can keep many timers and arm one real timer for the earliest
// (docs/design.md "Time"): insert and cancel are O(1), and advancing
// costs O(entries moved), never O(milliseconds elapsed), however far time
// jumps. It is a pure data structure: no clock reads, no IO; time is whatever
// the caller passes in and never moves backwards.
//
// Layout: a hierarchical wheel of kWheelLevels levels of 64 slots. An entry
// due at d > now() sits at the lowest level L whose bits above 6(L+1) agree
// with now(), in slot (d >> 6L) & 63; entries of level 0 are exact. Entries
// already due sit in a separate "due now" list. When time reaches a higher
// slot its entries cascade down (at most kWheelLevels times per entry). Nodes
// live in a slab with a free list, so memory is O(peak entries) and is reused
// after fire and cancel.
//
// Owned by one component for as long as it likes; not thread-safe: one
// thread at a time. Nothing fails at run time; broken invariants assert.
template <typename T>
class TimerWheel {
 public:
  // Names one inserted entry for cancel(). A handle outlives its entry
  // safely: once the entry fired or was cancelled, its slab node gets a new
  // generation and the old handle no longer matches. A default handle
  // matches nothing.
  struct Handle {
    uint32_t index = 0;
    uint32_t generation = 0;
  };
  struct Fired {
    int64_t due_ms;
    T value;
  };

  explicit TimerWheel(int64_t now_ms) : now_key_(detail::wheel_key(now_ms)) {}

  // Adds value, due at due_ms. O(1). An entry due at or before now_ms() comes
  // out at the next advance(), whatever time that advance is given.
  Handle insert(int64_t due_ms, T value) {
    const uint32_t index = allocate();
    Node& node = nodes_[index];
    node.due_key = detail::wheel_key(due_ms);
    node.value.emplace(std::move(value));
    place(index);
    ++size_;
    return Handle{index, node.generation};
  }

  // Removes the entry of handle. O(1). Returns false, changing nothing, when
  // that entry already fired or was cancelled.
  bool cancel(Handle handle) {
    if (handle.index >= nodes_.size()) return false;
    const Node& node = nodes_[handle.index];
    if (node.list == kFreeList || node.generation != handle.generation) return false;
    unlink(handle.index);
    release(handle.index);
    return true;
  }

  // Moves time to now_ms and appends to out the entries due at or before it,
  // in non-decreasing due order (entries with equal due times in no
  // particular order), at most `limit` of them. Entries due beyond the limit
  // wait, in due order, in the "due now" list: the next advance() hands them
  // out first, and next_due_ms() is <= now_ms() until it has. So one call
  // moves O(limit) values, plus pointer-only relinks of the entries due. An
  // earlier now_ms leaves time where it is, but entries already due (also
  // those inserted already due) still come out.
  void advance(int64_t now_ms, std::vector<Fired>& out,
               size_t limit = std::numeric_limits<size_t>::max()) {
    fire_due_now(out, limit);
    const uint64_t target_key = detail::wheel_key(now_ms);
    if (target_key <= now_key_) return;
    for (;;) {
      const int level = lowest_busy_level();
      if (level < 0) break;
      const int slot = std::countr_zero(occupied_[level]);
      const uint64_t start_key = slot_start_key(level, slot);
      if (start_key > target_key) break;
      // Moving now() to the start of the earliest busy slot keeps every
      // other entry's level valid: nothing else starts before it.
      now_key_ = start_key;
      expire_slot(level, slot, out, limit);
    }
    // Every busy slot starts after target_key, so target_key shares each
    // level's high bits with the slots of that level: levels stay valid.
    now_key_ = target_key;
  }

  // nullopt when empty. When an entry is already due (inserted at or before
  // now_ms()), a time <= now_ms(). Otherwise the start of the earliest busy
  // slot: > now_ms(), <= the earliest due time (exact when that entry sits in
  // level 0, i.e. is due within the current 64 ms). A timer armed for it
  // wakes at or before the first entry; advancing to it may fire nothing and
  // only cascade, after which next_due_ms() is later or exact.
  std::optional<int64_t> next_due_ms() const {
    if (lists_[kDueNowList].head != kNil) return detail::wheel_time(due_now_min_key_);
    const int level = lowest_busy_level();
    if (level < 0) return std::nullopt;
    return detail::wheel_time(slot_start_key(level, std::countr_zero(occupied_[level])));
  }

  size_t size() const { return size_; }
  int64_t now_ms() const { return detail::wheel_time(now_key_); }

  // Walks the whole wheel and reports whether every structural invariant
  // holds (levels, slots, bitmaps, links, size). O(entries + slab).
  bool invariants_hold_for_test() const;

 private:
  static constexpr uint32_t kNil = std::numeric_limits<uint32_t>::max();
  // List ids: level * 64 + slot for the wheel's slots, then the "due now"
  // list, then a marker for slab nodes on the free list.
  static constexpr uint16_t kSlotLists = detail::kWheelLevels * detail::kWheelSlots;
  static constexpr uint16_t kDueNowList = kSlotLists;
  static constexpr uint16_t kFreeList = kSlotLists + 1;

  struct Node {
    uint64_t due_key = 0;
    std::optional<T> value;
    uint32_t prev = kNil;
    uint32_t next = kNil;
    uint32_t generation = 1;  // never 0, so a default Handle matches nothing
    uint16_t list = kFreeList;
  };
  struct List {
    uint32_t head = kNil;
    uint32_t tail = kNil;
  };

  uint32_t allocate() {
    if (free_head_ != kNil) {
      const uint32_t index = free_head_;
      free_head_ = nodes_[index].next;
      return index;
    }
    TARDE_ASSERT(nodes_.size() < kNil);
    nodes_.emplace_back();
    return static_cast<uint32_t>(nodes_.size() - 1);
  }

  // Returns a node to the free list; its generation moves on so that old
  // handles stop matching.
  void release(uint32_t index) {
    Node& node = nodes_[index];
    node.value.reset();
    node.generation =
        node.generation == std::numeric_limits<uint32_t>::max() ? 1 : node.generation + 1;
    node.list = kFreeList;
    node.prev = kNil;
    node.next = free_head_;
    free_head_ = index;
    --size_;
  }

  // Links a node into the list its due time calls for, relative to now().
  void place(uint32_t index) {
    const uint64_t due_key = nodes_[index].due_key;
    if (due_key <= now_key_) {
      const uint32_t tail = lists_[kDueNowList].tail;
      if (tail != kNil && nodes_[tail].due_key > due_key) due_now_sorted_ = false;
      due_now_min_key_ = std::min(due_now_min_key_, due_key);
      link(kDueNowList, index);
      return;
    }
    const int high_bit = 63 - std::countl_zero(due_key ^ now_key_);
    const int level = high_bit / detail::kWheelSlotBits;
    const int slot =
        static_cast<int>((due_key >> (detail::kWheelSlotBits * level)) & (detail::kWheelSlots - 1));
    link(static_cast<uint16_t>(level * detail::kWheelSlots + slot), index);
    occupied_[level] |= uint64_t{1} << slot;
  }

  void link(uint16_t list_id, uint32_t index) {
    Node& node = nodes_[index];
    List& list = lists_[list_id];
    node.list = list_id;
    node.prev = list.tail;
    node.next = kNil;
    if (list.tail == kNil) {
      list.head = index;
    } else {
      nodes_[list.tail].next = index;
    }
    list.tail = index;
  }

  void unlink(uint32_t index) {
    Node& node = nodes_[index];
    List& list = lists_[node.list];
    if (node.prev == kNil) {
      list.head = node.next;
    } else {
      nodes_[node.prev].next = node.next;
    }
    if (node.next == kNil) {
      list.tail = node.prev;
    } else {
      nodes_[node.next].prev = node.prev;
    }
    if (list.head != kNil) return;
    if (node.list == kDueNowList) {
      due_now_min_key_ = kNoKey;
      due_now_sorted_ = true;
    } else {
      occupied_[node.list / detail::kWheelSlots] &=
          ~(uint64_t{1} << (node.list % detail::kWheelSlots));
    }
  }

  // Fires the head of the "due now" list, in due order, while limit lasts.
  // Entries inserted already due may have been linked out of order; the
  // list is sorted once before it is read.
  void fire_due_now(std::vector<Fired>& out, size_t& limit) {
    List& list = lists_[kDueNowList];
    if (list.head == kNil) return;
    if (!due_now_sorted_) sort_due_now();
    while (limit > 0 && list.head != kNil) {
      const uint32_t index = list.head;
      unlink(index);
      fire(index, out);
      --limit;
    }
    if (list.head != kNil) due_now_min_key_ = nodes_[list.head].due_key;
  }

  void sort_due_now() {
    scratch_.clear();
    for (uint32_t index = lists_[kDueNowList].head; index != kNil; index = nodes_[index].next) {
      scratch_.push_back(index);
    }
    std::stable_sort(scratch_.begin(), scratch_.end(), [this](uint32_t a, uint32_t b) {
      return nodes_[a].due_key < nodes_[b].due_key;
    });
    lists_[kDueNowList] = List{};
    for (uint32_t index : scratch_) link(kDueNowList, index);
    due_now_sorted_ = true;
  }

  // Empties the slot that starts at now(): entries due exactly now fire
  // while limit lasts and then wait in "due now" (in order: it was empty, or
  // limit is spent), the others cascade to a lower level. In level 0 every
  // entry is due now.
  void expire_slot(int level, int slot, std::vector<Fired>& out, size_t& limit) {
    List& list = lists_[level * detail::kWheelSlots + slot];
    uint32_t index = list.head;
    list = List{};
    occupied_[level] &= ~(uint64_t{1} << slot);
    while (index != kNil) {
      const uint32_t next = nodes_[index].next;
      TARDE_DASSERT(nodes_[index].due_key >= now_key_);
      if (nodes_[index].due_key == now_key_ && limit > 0) {
        fire(index, out);
        --limit;
      } else {
        place(index);
      }
      index = next;
    }
  }

  void fire(uint32_t index, std::vector<Fired>& out) {
    Node& node = nodes_[index];
    out.push_back(Fired{detail::wheel_time(node.due_key), std::move(*node.value)});
    release(index);
  }

  int lowest_busy_level() const {
    for (int level = 0; level < detail::kWheelLevels; ++level) {
      if (occupied_[level] != 0) return level;
    }
    return -1;
  }

  uint64_t slot_start_key(int level, int slot) const {
    return (now_key_ & detail::wheel_high_mask(level)) |
           (static_cast<uint64_t>(slot) << (detail::kWheelSlotBits * level));
  }

  static constexpr uint64_t kNoKey = std::numeric_limits<uint64_t>::max();

  std::vector<Node> nodes_;
  std::array<List, kSlotLists + 1> lists_{};  // the slots, then "due now"
  std::array<uint64_t, detail::kWheelLevels> occupied_{};
  std::vector<uint32_t> scratch_;  // reused by sort_due_now to avoid allocating
  uint32_t free_head_ = kNil;
  uint64_t now_key_;
  // A lower bound of the "due now" list's due times (exact until a cancel).
  uint64_t due_now_min_key_ = kNoKey;
  // Whether the "due now" list is in due order; inserts of entries already
  // due may break it, fire_due_now restores it.
  bool due_now_sorted_ = true;
  size_t size_ = 0;
};

template <typename T>
bool TimerWheel<T>::invariants_hold_for_test() const {
  size_t linked = 0;
  for (uint16_t list_id = 0; list_id <= kDueNowList; ++list_id) {
    const List& list = lists_[list_id];
    const bool is_slot = list_id < kSlotLists;
    const int level = list_id / detail::kWheelSlots;
    const int slot = list_id % detail::kWheelSlots;
    if (is_slot && ((occupied_[level] >> slot) & 1) != (list.head != kNil ? 1u : 0u)) return false;
    uint32_t prev = kNil;
    for (uint32_t index = list.head; index != kNil; index = nodes_[index].next) {
      const Node& node = nodes_[index];
      if (node.list != list_id || node.prev != prev || !node.value) return false;
      if (!is_slot && (node.due_key > now_key_ || node.due_key < due_now_min_key_)) return false;
      if (!is_slot && due_now_sorted_ && prev != kNil && nodes_[prev].due_key > node.due_key) {
        return false;
      }
      if (is_slot) {
        if (node.due_key <= now_key_) return false;
        if ((node.due_key & detail::wheel_high_mask(level)) !=
            (now_key_ & detail::wheel_high_mask(level))) {
          return false;
        }
        if (static_cast<int>((node.due_key >> (detail::kWheelSlotBits * level)) & 63) != slot) {
          return false;
        }
        if (slot_start_key(level, slot) <= now_key_) return false;
      }
      prev = index;
      ++linked;
    }
    if (list.tail != prev) return false;
  }
  size_t free_nodes = 0;
  for (uint32_t index = free_head_; index != kNil; index = nodes_[index].next) {
    if (nodes_[index].list != kFreeList || nodes_[index].value) return false;
    ++free_nodes;
  }
  return linked == size_ && linked + free_nodes == nodes_.size();
}

}  // namespace tarde::engine
