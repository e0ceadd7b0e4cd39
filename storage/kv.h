#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace tarde::storage {

// The column families of docs/design.md and storage/FORMAT.md. Value is part of the on-disk layout
// through the names below; never rename.
// kState (format version 2) is the per-queue state index; a store of format 1 has no such
// family until it is upgraded (Store::ensure_format).
enum class Cf : uint8_t { kTx = 0, kDue, kReady, kEvents, kDead, kMeta, kState };
inline constexpr size_t kCfCount = 7;
const char* cf_name(Cf cf);  // "tx", "due", "ready", "events", "dead", "meta", "state"

// Whether a value written will be read again later, and not only soon: a
// transaction record whose request waits in `ready` is read when the request
// is handed out, however many requests wait before it. StagedKv's cache of
// committed values (RecentValues) keeps such values apart from the recent
// ones, which are dropped oldest first.
enum class ReadLater : bool { kNo, kYes };

// One put or delete in a KvBatch.
struct KvOp {
  Cf cf = Cf::kTx;
  bool is_delete = false;
  std::string key;
  std::string value;  // empty for a delete
  ReadLater read_later = ReadLater::kNo;
};

// A list of puts and deletes that a Kv applies atomically, in order.
class KvBatch {
 public:
  // Both take their strings over: a key and value built for the batch are
  // moved in, not copied.
  void put(Cf cf, std::string key, std::string value, ReadLater read_later = ReadLater::kNo);
  void del(Cf cf, std::string key);
  void append(const KvBatch& other);
  // The same, taking the other batch's strings over.
  void append(KvBatch&& other);
  const std::vector<KvOp>& ops() const { return ops_; }
  bool empty() const { return ops_.empty(); }
  size_t size() const { return ops_.size(); }
  void clear() { ops_.clear(); }
  // Room for n ops, so that a batch grown op by op moves none of them.
  void reserve(size_t n) { ops_.reserve(n); }

  // A replayed batch redoes what durable data already implies: a retry fired
  // from the due index, whose entry stays on disk until the fire is. A crash
  // that loses it loses nothing, because the restarted server fires the
  // retry again. StagedKv lets a hand-out of it go before it is durable, and
  // the group committer may keep it waiting for a write that must be.
  void mark_replayed() { replayed_ = true; }
  bool replayed() const { return replayed_; }

 private:
  std::vector<KvOp> ops_;
  bool replayed_ = false;
};

// Visits one key and value of a scan; returning false stops the scan.
using KvVisitor = std::function<bool(std::string_view key, std::string_view value)>;

// Kv is the ordered key-value store with column families that everything
// durable goes through. Keys compare bytewise. Implementations: MemKv (tests),
// RocksKv (the real store) and StagedKv (an overlay of uncommitted groups over
// another Kv, for group commit). Not thread-safe unless an implementation says
// so; the server calls it from its one engine thread.
class Kv {
 public:
  virtual ~Kv() = default;

  // The value stored under key, nullopt when absent, or an io/corruption error.
  [[nodiscard]] virtual Result<std::optional<std::string>> get(Cf cf, std::string_view key) = 0;

  // Visits the keys in [lower, upper) in bytewise order; an empty upper means
  // "to the end of the column family".
  [[nodiscard]] virtual Status scan(Cf cf, std::string_view lower, std::string_view upper,
                                    const KvVisitor& visit) = 0;

  // Applies every op of batch atomically: all or none. With a durable
  // implementation an ok Status means the batch survives a crash (and, with
  // sync on, a power loss).
  [[nodiscard]] virtual Status write(const KvBatch& batch) = 0;
  // The same, for a batch the caller no longer needs: an implementation may
  // take its strings over instead of copying them (StagedKv does).
  [[nodiscard]] virtual Status write(KvBatch&& batch) { return write(std::as_const(batch)); }

  // The values stored under `keys` (nullopt for an absent one), in the
  // order of `keys`. The default reads them one by one; RocksKv reads them
  // in one batch.
  [[nodiscard]] virtual Result<std::vector<std::optional<std::string>>> multi_get(
      Cf cf, const std::vector<std::string>& keys);

  // A hint that `keys` of `cf` are about to be read. The default does
  // nothing; StagedKv reads the transaction records among them in one batch
  // and remembers them. A read error is left to the read that follows.
  virtual void prefetch(Cf /*cf*/, std::vector<std::string> /*keys*/) {}
};

}  // namespace tarde::storage
