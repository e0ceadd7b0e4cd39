#include "storage/staged_kv.h"

#include <algorithm>

#include "base/assert.h"

namespace tarde::storage {

void StagedKv::observe(const Version& version) {
  observed_seq_ = std::max(observed_seq_, version.seq);
  hand_out_seq_ = std::max(hand_out_seq_, version.hand_out_dep);
}

void StagedKv::drop_version(const Touched& key, uint64_t seq) {
  Versions& versions = key.at->second;
  std::erase_if(versions, [seq](const Version& version) { return version.seq == seq; });
  if (!versions.empty()) return;
  Overlay& overlay = overlay_[static_cast<size_t>(key.cf)];
  if (spare_nodes_.size() < kSpareNodesMax) {
    spare_nodes_.push_back(overlay.extract(key.at));
  } else {
    overlay.erase(key.at);
  }
}

StagedKv::Overlay::iterator StagedKv::insert_key(Overlay& overlay, Overlay::iterator hint,
                                                 std::string_view key) {
  if (spare_nodes_.empty()) return overlay.emplace_hint(hint, std::string(key), Versions{});
  Overlay::node_type node = std::move(spare_nodes_.back());
  spare_nodes_.pop_back();
  node.key().assign(key);
  return overlay.insert(hint, std::move(node));
}

Result<std::optional<std::string>> StagedKv::get(Cf cf, std::string_view key) {
  const Overlay& overlay = overlay_[static_cast<size_t>(cf)];
  auto it = overlay.find(key);
  if (it == overlay.end()) {
    if (cf != Cf::kTx) return base_.get(cf, key);
    if (const std::string* recent = recent_tx_.find(key)) {
      return std::optional<std::string>(*recent);
    }
    // No group holds the key, so what the base returns stays its value until
    // a group rewrites it: RESPOND then finds the record RESERVE read.
    Result<std::optional<std::string>> read = base_.get(cf, key);
    if (read.is_ok() && read.value()) recent_tx_.remember(std::string(key), *read.value());
    return read;
  }
  const Version& latest = it->second.back();
  observe(latest);
  if (latest.is_delete) return std::optional<std::string>();
  return std::optional<std::string>(latest.value);
}

void StagedKv::prefetch(Cf cf, std::vector<std::string> missing) {
  if (cf != Cf::kTx) return;
  const Overlay& overlay = overlay_[static_cast<size_t>(cf)];
  std::erase_if(missing, [&](const std::string& key) {
    return overlay.find(key) != overlay.end() || recent_tx_.find(key) != nullptr;
  });
  if (missing.empty()) return;
  // As in get(): no group holds these keys, so what the base returns stays
  // their value until a group rewrites them.
  auto read = base_.multi_get(cf, missing);
  if (!read.is_ok()) return;  // the reads that follow meet the error themselves
  for (size_t i = 0; i < missing.size(); ++i) {
    if (read.value()[i]) recent_tx_.remember(missing[i], std::move(*read.value()[i]));
  }
}

bool StagedKv::emit(const Overlay::const_iterator& it, const KvVisitor& visit, bool observed) {
  const Version& latest = it->second.back();
  if (observed) observe(latest);
  if (latest.is_delete) return true;  // hides the base's value, if any
  return visit(it->first, latest.value);
}

Status StagedKv::scan(Cf cf, std::string_view lower, std::string_view upper,
                      const KvVisitor& visit) {
  const Overlay& overlay = overlay_[static_cast<size_t>(cf)];
  // Index entries (due, ready) are never what a reply reveals: the engine
  // reads the transaction record behind an entry before acting on it, and
  // that read (the record and its entries share a group) is the dependency.
  // A page of the ready index read for one hand-out would otherwise make
  // the reply wait for every group that queued a later request.
  const bool observed = cf != Cf::kDue && cf != Cf::kReady;
  auto it = overlay.lower_bound(lower);
  auto in_range = [&](const Overlay::const_iterator& at) {
    return at != overlay.end() && (upper.empty() || std::string_view(at->first) < upper);
  };
  bool stopped = false;
  Status status = base_.scan(cf, lower, upper, [&](std::string_view key, std::string_view value) {
    // Overlay keys below the base key come first.
    while (in_range(it) && std::string_view(it->first) < key) {
      if (!emit(it++, visit, observed)) {
        stopped = true;
        return false;
      }
    }
    // On an equal key the overlay wins (its value or its deletion).
    const bool shadowed = in_range(it) && std::string_view(it->first) == key;
    const bool more = shadowed ? emit(it++, visit, observed) : visit(key, value);
    stopped = !more;
    return more;
  });
  if (!status.is_ok() || stopped) return status;
  // Overlay keys above the base's last key.
  while (in_range(it)) {
    if (!emit(it++, visit, observed)) break;
  }
  return Status::ok();
}

Status StagedKv::write(const KvBatch& batch) {
  if (batch.empty()) return Status::ok();
  stage(batch);
  open_batch_.append(batch);
  return Status::ok();
}

Status StagedKv::write(KvBatch&& batch) {
  if (batch.empty()) return Status::ok();
  stage(batch);
  open_batch_.append(std::move(batch));
  return Status::ok();
}

void StagedKv::stage(const KvBatch& batch) {
  const uint64_t hand_out_dep = batch.replayed() ? hand_out_seq_ : open_seq_;
  for (const KvOp& op : batch.ops()) {
    Overlay& overlay = overlay_[static_cast<size_t>(op.cf)];
    auto at = overlay.lower_bound(op.key);
    if (at == overlay.end() || at->first != op.key) at = insert_key(overlay, at, op.key);
    Versions& versions = at->second;
    Version version{open_seq_, hand_out_dep, op.is_delete, op.value, op.read_later};
    if (!versions.empty() && versions.back().seq == open_seq_) {
      versions.back() = std::move(version);  // rewritten within the same group
    } else {
      versions.push_back(std::move(version));
      open_keys_.push_back({op.cf, at});
    }
  }
  open_writes_ += 1;
  if (batch.replayed()) open_replayed_writes_ += 1;
  last_staged_seq_ = open_seq_;
  observed_seq_ = std::max(observed_seq_, open_seq_);
  hand_out_seq_ = std::max(hand_out_seq_, hand_out_dep);
}

StagedKv::Group StagedKv::seal() {
  TARDE_ASSERT(has_open_group());
  SealedKeys sealed{open_seq_, std::move(open_keys_)};
  open_keys_.clear();  // a moved-from vector is valid but unspecified
  Group group{open_seq_, std::move(open_batch_), open_writes_, open_replayed_writes_};
  open_batch_.clear();  // a moved-from batch is valid but unspecified
  // The next group is likely as big: its ops then go in without moving the
  // ones before them as the batch grows.
  open_batch_.reserve(group.batch.size());
  open_writes_ = 0;
  open_replayed_writes_ = 0;
  sealed_.push_back(std::move(sealed));
  ++open_seq_;
  return group;
}

void StagedKv::remember_committed(const Overlay::iterator& at, uint64_t seq, uint64_t dropping) {
  Version* newest = nullptr;
  for (Version& version : at->second) {
    if (version.seq <= seq) newest = &version;
  }
  if (newest == nullptr) return;
  if (newest->is_delete) {
    recent_tx_.forget(at->first);
  } else if (newest->seq == dropping) {
    recent_tx_.remember(at->first, std::move(newest->value), newest->read_later);  // dropped next
  } else {
    recent_tx_.remember(at->first, newest->value, newest->read_later);
  }
}

void StagedKv::committed(uint64_t seq) {
  TARDE_ASSERT(seq < open_seq_);  // the open group has not been sealed
  while (!sealed_.empty() && sealed_.front().seq <= seq) {
    const SealedKeys& group = sealed_.front();
    for (const Touched& key : group.keys) {
      if (key.cf == Cf::kTx) remember_committed(key.at, seq, group.seq);
      drop_version(key, group.seq);
    }
    sealed_.pop_front();
  }
  committed_seq_ = std::max(committed_seq_, seq);
}

void StagedKv::discard_from(uint64_t seq) {
  TARDE_ASSERT(seq > committed_seq_);
  TARDE_ASSERT(seq <= open_seq_);
  // The remembered values are committed ones and still right, but after a
  // failed write the base is re-read from scratch.
  recent_tx_.clear();
  while (!sealed_.empty() && sealed_.back().seq >= seq) {
    for (const Touched& key : sealed_.back().keys) drop_version(key, sealed_.back().seq);
    sealed_.pop_back();
  }
  if (has_open_group()) {
    for (const Touched& key : open_keys_) drop_version(key, open_seq_);
    open_keys_.clear();
    open_batch_.clear();
    open_writes_ = 0;
    open_replayed_writes_ = 0;
    ++open_seq_;  // numbers are never reused
  }
}

size_t StagedKv::overlay_size() const {
  size_t size = 0;
  for (const Overlay& overlay : overlay_) size += overlay.size();
  return size;
}

}  // namespace tarde::storage
