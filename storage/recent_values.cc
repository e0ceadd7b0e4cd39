#include "storage/recent_values.h"

namespace tarde::storage {

const std::string* RecentValues::find(std::string_view key) const {
  // Heterogeneous lookup needs C++20 transparent hashing; one short key copy
  // is cheaper than the Get it saves.
  auto it = values_.find(std::string(key));
  return it == values_.end() ? nullptr : &it->second.value;
}

void RecentValues::remember(const std::string& key, const std::string& value) {
  const uint64_t stamp = next_stamp_++;
  auto [it, inserted] = values_.try_emplace(key);
  if (!inserted) bytes_ -= cost(key, it->second.value);
  it->second.value = value;
  it->second.stamp = stamp;
  bytes_ += cost(key, value);
  order_.emplace_back(key, stamp);
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
  // Leftovers of replaced or forgotten values: keep the queue within twice
  // the live entries. A live entry met here moves to the back (it only
  // becomes a little younger), so the queue stays bounded whatever the order
  // of replacements.
  while (order_.size() > 2 * values_.size() + 64) {
    auto [key, stamp] = std::move(order_.front());
    order_.pop_front();
    auto it = values_.find(key);
    if (it != values_.end() && it->second.stamp == stamp)
      order_.emplace_back(std::move(key), stamp);
  }
}

}  // namespace tarde::storage
