#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "storage/kv.h"

namespace tarde::storage {

// MemKv is an in-memory Kv: one ordered std::map per column family. It exists
// for unit tests (the engine runs on it with no disk and no threads) and as
// the reference behaviour the other Kv implementations are checked against.
// The caller owns it; nothing survives its destruction. Not thread-safe: call
// it from one thread. Its only failure is the injected one of
// fail_writes_for_test().
class MemKv final : public Kv {
 public:
  MemKv() = default;

  [[nodiscard]] Result<std::optional<std::string>> get(Cf cf, std::string_view key) override;
  // A visitor may write to this MemKv during the scan; the scan then resumes
  // after the last visited key, so it may or may not see the new keys (RocksKv
  // never does). Callers must not rely on either.
  [[nodiscard]] Status scan(Cf cf, std::string_view lower, std::string_view upper,
                            const KvVisitor& visit) override;
  // Applies the batch in order; always ok unless writes are failing for a test.
  [[nodiscard]] Status write(const KvBatch& batch) override;
  using Kv::write;

  // While set, write() changes nothing and returns io_error, as a full disk
  // would.
  void fail_writes_for_test(bool fail) { fail_writes_ = fail; }
  // The number of keys in one column family.
  size_t size(Cf cf) const { return maps_[static_cast<size_t>(cf)].size(); }

 private:
  using Map = std::map<std::string, std::string, std::less<>>;

  std::array<Map, kCfCount> maps_;
  bool fail_writes_ = false;
};

}  // namespace tarde::storage
