#include "storage/kv.h"

#include <iterator>
#include <utility>

namespace tarde::storage {

const char* cf_name(Cf cf) {
  // These names are part of the on-disk layout (see FORMAT.md); never rename.
  switch (cf) {
    case Cf::kTx:
      return "tx";
    case Cf::kDue:
      return "due";
    case Cf::kReady:
      return "ready";
    case Cf::kEvents:
      return "events";
    case Cf::kDead:
      return "dead";
    case Cf::kMeta:
      return "meta";
    case Cf::kState:
      return "state";
  }
  return "?";
}

void KvBatch::put(Cf cf, std::string key, std::string value, ReadLater read_later) {
  ops_.push_back(KvOp{cf, false, std::move(key), std::move(value), read_later});
}

void KvBatch::del(Cf cf, std::string key) {
  ops_.push_back(KvOp{cf, true, std::move(key), std::string()});
}

void KvBatch::append(const KvBatch& other) {
  ops_.insert(ops_.end(), other.ops_.begin(), other.ops_.end());
}

void KvBatch::append(KvBatch&& other) {
  if (ops_.empty() && ops_.capacity() < other.ops_.size()) {  // no room reserved: take its vector
    ops_ = std::move(other.ops_);
  } else {
    ops_.insert(ops_.end(), std::make_move_iterator(other.ops_.begin()),
                std::make_move_iterator(other.ops_.end()));
  }
  other.ops_.clear();
}

Result<std::vector<std::optional<std::string>>> Kv::multi_get(
    Cf cf, const std::vector<std::string>& keys) {
  std::vector<std::optional<std::string>> values;
  values.reserve(keys.size());
  for (const std::string& key : keys) {
    auto value = get(cf, key);
    if (!value.is_ok()) return value.status();
    values.push_back(std::move(value).value());
  }
  return values;
}

}  // namespace tarde::storage
