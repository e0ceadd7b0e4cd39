#include "engine/due_timers.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "base/assert.h"
#include "base/crash_point.h"

namespace tarde::engine {

namespace {

constexpr int64_t kLatestMs = std::numeric_limits<int64_t>::max();

// A tx_id above every tx_id the protocol accepts (at most 200 bytes, each
// 0x21..0x7E, and '~' is 0x7E). Scanning strictly after (T, it) starts at
// fire time T + 1 without reading the keys of time T again. A longer id at
// time T would be read and skipped as already paged, never lost.
constexpr size_t kAfterEveryTxIdBytes = 256;
static_assert(kAfterEveryTxIdBytes > 200, "must exceed PROTOCOL.md's longest tx_id");

int64_t saturating_add(int64_t a, int64_t b) {
  if (b > 0 && a > kLatestMs - b) return kLatestMs;
  return a + b;
}

}  // namespace

DueTimers::DueTimers(storage::Store& store, Options options)
    : store_(store), options_(options), wheel_(0) {
  TARDE_ASSERT(options_.horizon_ms >= 0);
  TARDE_ASSERT(options_.page_limit >= 1);
  TARDE_ASSERT(options_.memory_limit >= 1);
}

void DueTimers::reset(int64_t now_ms) {
  wheel_ = TimerWheel<storage::DueEntry>(now_ms);
  handles_.clear();
  cursor_ = Cursor{};
  beyond_min_ms_.reset();
  started_ = true;
}

Status DueTimers::start(int64_t now_ms) {
  reset(now_ms);
  return read_page(now_ms);
}

bool DueTimers::on_put(const storage::DueEntry& entry) {
  TARDE_ASSERT(!entry.tx_id.empty());
  if (!is_paged(entry.fire_at_ms, entry.tx_id)) {
    // Left on disk. A kKey cursor already wakes the pager at its own time,
    // which is no later than this entry's; a kThrough cursor must learn it.
    if (cursor_.kind == Cursor::Kind::kThrough) {
      beyond_min_ms_ = std::min(beyond_min_ms_.value_or(kLatestMs), entry.fire_at_ms);
    }
    return false;
  }
  keep(entry);
  shrink();
  return handles_.contains(KeyView{entry.fire_at_ms, entry.tx_id});
}

void DueTimers::on_delete(int64_t fire_at_ms, std::string_view tx_id) {
  const auto it = handles_.find(KeyView{fire_at_ms, tx_id});
  if (it == handles_.end()) return;
  const bool cancelled = wheel_.cancel(it->second);
  TARDE_ASSERT(cancelled);
  handles_.erase(it);
}

Status DueTimers::poll(int64_t now_ms, std::vector<storage::DueEntry>& out, size_t limit) {
  TARDE_ASSERT(started_);
  // The wheel cannot move back; a wall-clock step back would let entries
  // fire early by the new clock. Rebuild from disk instead: it is the truth.
  if (now_ms < wheel_.now_ms()) reset(now_ms);
  // A lower bound: a cascade may find nothing due after all, and the next
  // poll, with an exact bound, pages.
  const std::optional<int64_t> memory_ms = wheel_.next_due_ms();
  const bool memory_has_due = memory_ms.has_value() && *memory_ms <= now_ms;
  const std::optional<int64_t> unpaged_ms = unpaged_min_ms();
  if (!memory_has_due && unpaged_ms.has_value() && *unpaged_ms <= now_ms) {
    TARDE_RETURN_IF_ERROR(read_page(now_ms));
    TARDE_CRASH_POINT("wheel.after_page");
  }
  fire(now_ms, out, limit);
  return Status::ok();
}

std::optional<int64_t> DueTimers::next_wake_ms() const {
  if (!started_) return std::nullopt;
  const std::optional<int64_t> wheel_ms = wheel_.next_due_ms();
  const std::optional<int64_t> unpaged_ms = unpaged_min_ms();
  if (!wheel_ms.has_value()) return unpaged_ms;
  if (!unpaged_ms.has_value()) return wheel_ms;
  return std::min(*wheel_ms, *unpaged_ms);
}

size_t DueTimers::in_memory() const {
  TARDE_DASSERT(handles_.size() == wheel_.size());
  return wheel_.size();
}

bool DueTimers::forgot(int64_t fire_at_ms, std::string_view tx_id) const {
  if (!is_paged(fire_at_ms, tx_id)) return false;
  return !handles_.contains(KeyView{fire_at_ms, tx_id});
}

bool DueTimers::is_paged(int64_t fire_at_ms, std::string_view tx_id) const {
  switch (cursor_.kind) {
    case Cursor::Kind::kNothing:
      return false;
    case Cursor::Kind::kKey:
      if (fire_at_ms != cursor_.fire_at_ms) return fire_at_ms < cursor_.fire_at_ms;
      return tx_id <= cursor_.tx_id;
    case Cursor::Kind::kThrough:
      return fire_at_ms <= cursor_.fire_at_ms;
  }
  return false;
}

// The earliest fire time an entry not yet paged may have: nothing bounds it
// before the first page; a kKey cursor may be followed by another entry of
// the same millisecond; past a kThrough cursor, the first entry the last page
// saw beyond it (or on_put put beyond it since) is the earliest.
std::optional<int64_t> DueTimers::unpaged_min_ms() const {
  switch (cursor_.kind) {
    case Cursor::Kind::kNothing:
      return std::numeric_limits<int64_t>::min();
    case Cursor::Kind::kKey:
      return cursor_.fire_at_ms;
    case Cursor::Kind::kThrough:
      return beyond_min_ms_;
  }
  return std::nullopt;
}

// Reads one page strictly after the cursor: up to page_limit entries (and no
// more than memory holds) with fire_at_ms <= now_ms + horizon_ms, and peeks
// at the first entry beyond, so that an idle pager sleeps until that entry
// instead of waking every horizon.
// A full page moves the cursor to its last key (the next page continues
// within the same millisecond if it must); a short one moves it through
// the horizon. On error nothing changes.
Status DueTimers::read_page(int64_t now_ms) {
  const int64_t until_ms = saturating_add(now_ms, options_.horizon_ms);
  const size_t page_limit = std::min(options_.page_limit, options_.memory_limit);
  storage::DueEntry after;
  const storage::DueEntry* after_ptr = nullptr;
  if (cursor_.kind == Cursor::Kind::kKey) {
    after.fire_at_ms = cursor_.fire_at_ms;
    after.tx_id = cursor_.tx_id;
    after_ptr = &after;
  } else if (cursor_.kind == Cursor::Kind::kThrough && cursor_.fire_at_ms >= 0) {
    // No key has a negative time, so a negative kThrough reads from the start.
    after.fire_at_ms = cursor_.fire_at_ms;
    after.tx_id.assign(kAfterEveryTxIdBytes, '~');
    after_ptr = &after;
  }
  std::vector<storage::DueEntry> page;
  std::optional<int64_t> beyond_ms;
  const Status status = store_.scan_due(after_ptr, kLatestMs, [&](const storage::DueEntry& entry) {
    if (is_paged(entry.fire_at_ms, entry.tx_id)) return true;
    if (entry.fire_at_ms > until_ms) {
      beyond_ms = entry.fire_at_ms;
      return false;
    }
    page.push_back(entry);
    return page.size() < page_limit;
  });
  TARDE_RETURN_IF_ERROR(status);
  for (const storage::DueEntry& entry : page) keep(entry);
  if (page.size() == page_limit) {
    cursor_ = Cursor{Cursor::Kind::kKey, page.back().fire_at_ms, page.back().tx_id};
    beyond_min_ms_.reset();
  } else {
    cursor_ = Cursor{Cursor::Kind::kThrough, until_ms, {}};
    beyond_min_ms_ = beyond_ms;
  }
  shrink();
  return Status::ok();
}

void DueTimers::keep(const storage::DueEntry& entry) {
  const KeyView key{entry.fire_at_ms, entry.tx_id};
  auto it = handles_.lower_bound(key);
  if (it == handles_.end() || KeyOrder{}(key, it->first)) {
    it = handles_.emplace_hint(it, Key{entry.fire_at_ms, entry.tx_id},
                               TimerWheel<storage::DueEntry>::Handle{});
  } else {
    const bool cancelled = wheel_.cancel(it->second);
    TARDE_ASSERT(cancelled);
  }
  it->second = wheel_.insert(entry.fire_at_ms, entry);
}

// Every key in memory is paged, so what leaves it goes back to the disk
// alone: the cursor moves down to the latest key kept, and the pager reads
// the rest again when their time comes. Memory keeps the earliest keys, so
// nothing fires out of order.
void DueTimers::shrink() {
  if (handles_.size() <= options_.memory_limit) return;
  while (handles_.size() > options_.memory_limit) {
    const auto latest = std::prev(handles_.end());
    const bool cancelled = wheel_.cancel(latest->second);
    TARDE_ASSERT(cancelled);
    handles_.erase(latest);
  }
  const Key& kept = std::prev(handles_.end())->first;
  cursor_ = Cursor{Cursor::Kind::kKey, kept.fire_at_ms, kept.tx_id};
  beyond_min_ms_.reset();
}

void DueTimers::fire(int64_t now_ms, std::vector<storage::DueEntry>& out, size_t limit) {
  fired_.clear();
  wheel_.advance(now_ms, fired_, limit);
  for (auto& fired : fired_) {
    handles_.erase(handles_.find(KeyView{fired.value.fire_at_ms, fired.value.tx_id}));
    out.push_back(std::move(fired.value));
  }
  fired_.clear();
}

}  // namespace tarde::engine
