#include "storage/mem_kv.h"

namespace tarde::storage {

Result<std::optional<std::string>> MemKv::get(Cf cf, std::string_view key) {
  const Map& map = maps_[static_cast<size_t>(cf)];
  auto it = map.find(key);
  if (it == map.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

Status MemKv::scan(Cf cf, std::string_view lower, std::string_view upper, const KvVisitor& visit) {
  const Map& map = maps_[static_cast<size_t>(cf)];
  auto it = map.lower_bound(lower);
  std::string last_key;
  while (it != map.end()) {
    if (!upper.empty() && std::string_view(it->first) >= upper) break;
    // Copy the key before visiting: the visitor may write and erase the node.
    last_key = it->first;
    if (!visit(it->first, it->second)) break;
    it = map.upper_bound(last_key);
  }
  return Status::ok();
}

Status MemKv::write(const KvBatch& batch) {
  if (fail_writes_) return Status::io_error("MemKv: writes are failing (fail_writes_for_test)");
  for (const KvOp& op : batch.ops()) {
    Map& map = maps_[static_cast<size_t>(op.cf)];
    if (op.is_delete) {
      auto it = map.find(op.key);
      if (it != map.end()) map.erase(it);
    } else {
      map.insert_or_assign(op.key, op.value);
    }
  }
  return Status::ok();
}

}  // namespace tarde::storage
