#include "storage/recent_values.h"

namespace tarde::storage {

const std::string* RecentValues::find(std::string_view key) const {
  auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second.value;
}

void RecentValues::remember(const std::string& key, std::string value, ReadLater read_later) {
  auto [it, inserted] = values_.try_emplace(key);
  Entry& entry = it->second;
  if (!inserted) release(key, entry);
  const size_t size = cost(key, value);
  if (read_later == ReadLater::kYes && held_bytes_ + size <= kHeldBytesMax) {
    entry.stamp = kHeld;  // its queue entry, if any, is now a leftover
    held_bytes_ += size;
    held_count_ += 1;
  } else {
    if (entry.stamp == kHeld) {  // new, or held until now: the youngest recent value
      entry.stamp = next_stamp_++;
      order_.emplace_back(key, entry.stamp);
    }
    bytes_ += size;
  }
  entry.value = std::move(value);
  evict_to_fit();
}

void RecentValues::forget(const std::string& key) {
  auto it = values_.find(key);
  if (it == values_.end()) return;
  release(key, it->second);
  values_.erase(it);
}

void RecentValues::clear() {
  values_.clear();
  order_.clear();
  bytes_ = 0;
  held_bytes_ = 0;
  held_count_ = 0;
}

void RecentValues::release(const std::string& key, const Entry& entry) {
  if (entry.stamp == kHeld) {
    held_bytes_ -= cost(key, entry.value);
    held_count_ -= 1;
  } else {
    bytes_ -= cost(key, entry.value);
  }
}

void RecentValues::evict_to_fit() {
  // Over the bound: drop the oldest live recent entries (and leftovers on
  // the way; a held entry's stamp matches no queue entry).
  while (bytes_ > kBytesMax && !order_.empty()) {
    const auto& [key, stamp] = order_.front();
    auto it = values_.find(key);
    if (it != values_.end() && it->second.stamp == stamp) {
      bytes_ -= cost(key, it->second.value);
      values_.erase(it);
    }
    order_.pop_front();
  }
  // Leftovers of forgotten or held values: keep the queue within twice the
  // live recent entries. A live entry met here moves to the back (it only
  // becomes a little younger), so the queue stays bounded whatever the
  // order of forgets.
  while (order_.size() > 2 * (values_.size() - held_count_) + 64) {
    auto [key, stamp] = std::move(order_.front());
    order_.pop_front();
    auto it = values_.find(key);
    if (it != values_.end() && it->second.stamp == stamp)
      order_.emplace_back(std::move(key), stamp);
  }
}

}  // namespace tarde::storage
