#include "engine/ready_queue.h"

#include <algorithm>
#include <vector>

#include "base/assert.h"

namespace tarde::engine {

ReadyQueue::ReadyQueue(std::string queue, Options options)
    : queue_(std::move(queue)), options_(options) {
  TARDE_ASSERT(options_.page_limit >= 1);
  TARDE_ASSERT(options_.memory_limit >= options_.page_limit);
}

void ReadyQueue::reset() {
  low_ = floor();
  head_.clear();
  cursor_ = Cursor::kNothing;
  cursor_key_ = Key{0, 0};
}

void ReadyQueue::start_from(Key floor) {
  TARDE_ASSERT(cursor_ == Cursor::kNothing && head_.empty());
  low_ = floor;
}

ReadyQueue::Key ReadyQueue::floor() const {
  return head_.empty() ? low_ : std::min(head_.begin()->first, low_);
}

bool ReadyQueue::is_paged(const Key& key) const {
  switch (cursor_) {
    case Cursor::kNothing:
      return false;
    case Cursor::kKey:
      return key <= cursor_key_;
    case Cursor::kAll:
      return true;
  }
  return false;
}

void ReadyQueue::on_put(Key key, Item item) {
  // Below the floor (a retry overdue since before a restart): reading must
  // start low enough to find it, whether memory keeps it or not.
  low_ = std::min(low_, key);
  if (!is_paged(key)) return;  // on disk beyond the cursor: a later page reads it
  head_.insert_or_assign(key, std::move(item));
  shrink();
}

void ReadyQueue::on_erase(Key key) { head_.erase(key); }

// Above memory_limit the largest keys go back to being disk-only: the cursor
// moves to the largest key kept.
void ReadyQueue::shrink() {
  if (head_.size() <= options_.memory_limit) return;
  while (head_.size() > options_.memory_limit) head_.erase(std::prev(head_.end()));
  cursor_ = Cursor::kKey;
  cursor_key_ = std::prev(head_.end())->first;
}

Result<std::optional<std::pair<ReadyQueue::Key, ReadyQueue::Item>>> ReadyQueue::front(
    storage::Store& store) {
  using Front = std::optional<std::pair<Key, Item>>;
  if (head_.empty() && cursor_ != Cursor::kAll) TARDE_RETURN_IF_ERROR(read_page(store));
  if (head_.empty()) return Front();
  const auto& first = *head_.begin();
  return Front(std::in_place, first.first, first.second);
}

void ReadyQueue::pop_front() {
  TARDE_ASSERT(!head_.empty());
  const Key popped = head_.begin()->first;
  low_ = Key{popped.first, popped.second + 1};
  head_.erase(head_.begin());
  pops_ += 1;
}

std::vector<std::string_view> ReadyQueue::first_ids(size_t count) const {
  std::vector<std::string_view> ids;
  ids.reserve(std::min(count, head_.size()));
  for (auto it = head_.begin(); it != head_.end() && ids.size() < count; ++it) {
    ids.emplace_back(it->second.tx_id);
  }
  return ids;
}

std::optional<ReadyQueue::Key> ReadyQueue::front_in_memory() const {
  if (head_.empty()) return std::nullopt;
  return head_.begin()->first;
}

// Reads up to page_limit entries after the cursor. A short page reached the
// end of the queue: everything is paged (kAll), and later puts stay in memory
// until shrink() pushes the largest out again. On error nothing changes.
Status ReadyQueue::read_page(storage::Store& store) {
  std::vector<storage::ReadyEntry> page;
  auto visit = [&](const storage::ReadyEntry& entry) {
    page.push_back(entry);
    return page.size() < options_.page_limit;
  };
  if (cursor_ == Cursor::kKey) {
    TARDE_RETURN_IF_ERROR(
        store.scan_ready_after(queue_, cursor_key_.first, cursor_key_.second, visit));
  } else {
    TARDE_RETURN_IF_ERROR(store.scan_ready_from(queue_, low_.first, low_.second, visit));
  }
  for (storage::ReadyEntry& entry : page) {
    head_.insert_or_assign(Key{entry.ready_at_ms, entry.seq},
                           Item{std::move(entry.tx_id), entry.attempt});
  }
  if (page.size() < options_.page_limit) {
    cursor_ = Cursor::kAll;
  } else {
    cursor_ = Cursor::kKey;
    cursor_key_ = Key{page.back().ready_at_ms, page.back().seq};
  }
  return Status::ok();
}

}  // namespace tarde::engine
