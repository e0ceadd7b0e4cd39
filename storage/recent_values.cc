#include "storage/recent_values.h"

namespace tarde::storage {

const std::string* RecentValues::find(std::string_view key) const {
  auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second.value;
}

void RecentValues::remember(const std::string& key, std::string value) {
  auto [it, inserted] = values_.try_emplace(key);
  if (inserted) {
    it->second.stamp = next_stamp_++;
    order_.emplace_back(key, it->second.stamp);
  } else {
    bytes_ -= cost(key, it->second.value);
  }
  bytes_ += cost(key, value);
  it->second.value = std::move(value);
  evict_to_fit();
}

void RecentValues::forget(const std::string& key) {
  auto it = values_.find(key);
  if (it == values_.end()) return;
  bytes_ -= cost(key, it->second.value);
  values_.erase(it);
}

void RecentValues::clear() {
  values_.clear();
  order_.clear();
  bytes_ = 0;
}

void RecentValues::evict_to_fit() {
  // Over the bound: drop the oldest live entries (and leftovers on the way).
  while (bytes_ > kBytesMax && !order_.empty()) {
    const auto& [key, stamp] = order_.front();
    auto it = values_.find(key);
    if (it != values_.end() && it->second.stamp == stamp) {
      bytes_ -= cost(key, it->second.value);
      values_.erase(it);
    }
    order_.pop_front();
  }
  // Leftovers of forgotten values: keep the queue within twice the live
  // entries. A live entry met here moves to the back (it only becomes a
  // little younger), so the queue stays bounded whatever the order of
  // forgets.
  while (order_.size() > 2 * values_.size() + 64) {
    auto [key, stamp] = std::move(order_.front());
    order_.pop_front();
    auto it = values_.find(key);
    if (it != values_.end() && it->second.stamp == stamp)
      order_.emplace_back(std::move(key), stamp);
  }
}

}  // namespace tarde::storage
