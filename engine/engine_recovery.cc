// Engine recovery: rebuilding memory from the store at start-up, or after a
// failed commit left memory ahead of the disk. start_recovery() does only
// what serving needs, in time independent of the store's size; the
// invariant sweep and the counts it yields come later (finish_recovery), from
// a sweep the server runs on a snapshot in the background (docs/design.md
// "Recovery").
#include <map>

#include "base/crash_point.h"
#include "engine/engine.h"
#include "engine/invariants.h"
#include "storage/keys.h"

namespace tarde::engine {

Status Engine::recover(RecoveryReport* report) {
  TARDE_RETURN_IF_ERROR(start_recovery(report));
  const int64_t started_ms = clock_.now_steady_ms() - report->took_ms;
  Sweep sweep;
  TARDE_RETURN_IF_ERROR(sweep_invariants(store_, &sweep));
  TARDE_RETURN_IF_ERROR(finish_recovery(sweep, &report->repairs));
  report->transactions = sweep.transactions;
  for (const auto& [name, counts] : sweep.queues) {
    report->ready += counts.ready;
    report->dead_letters += counts.dead;
  }
  report->took_ms = clock_.now_steady_ms() - started_ms;
  return Status::ok();
}

Status Engine::start_recovery(RecoveryReport* report) {
  const int64_t started_ms = clock_.now_steady_ms();
  *report = RecoveryReport{};
  TARDE_RETURN_IF_ERROR(store_.ensure_format());

  const int64_t now_ms = clock_.now_wall_ms();
  queues_.clear();
  leases_.clear();
  leases_by_conn_.clear();
  pending_fires_.clear();
  by_state_ = {};
  counting_ = true;
  memory_timers_ = TimerWheel<MemoryTimer>(now_ms);
  TARDE_RETURN_IF_ERROR(
      store_.scan_queue_configs([&](const std::string& name, const storage::QueueConfig& config) {
        QueueState& queue = queue_state(name);
        queue.config = config;
        queue.bucket.configure(config.rate, now_ms);
        return true;
      }));
  TARDE_RETURN_IF_ERROR(
      store_.scan_ready_floors([&](const std::string& name, const storage::ReadyFloor& floor) {
        QueueState& queue = queue_state(name);
        queue.floor_on_disk = ReadyQueue::Key{floor.ready_at_ms, floor.seq};
        queue.ready.start_from(*queue.floor_on_disk);
        return true;
      }));
  TARDE_RETURN_IF_ERROR(load_ready_seq());
  TARDE_RETURN_IF_ERROR(due_.start(now_ms));
  report->due_in_memory = due_.in_memory();
  report->took_ms = clock_.now_steady_ms() - started_ms;
  return Status::ok();
}

// The next ready sequence number: the reserved high-water mark on disk, or,
// for a store written before it existed, one past the largest in use (a
// scan, once: the first ready entry written then stores a reservation).
Status Engine::load_ready_seq() {
  auto stored = store_.get_ready_seq_reserved();
  if (!stored.is_ok()) return stored.status();
  if (stored.value()) {
    next_ready_seq_ = std::max<uint64_t>(1, *stored.value());
    ready_seq_reserved_ = next_ready_seq_;
    return Status::ok();
  }
  next_ready_seq_ = 1;
  TARDE_RETURN_IF_ERROR(store_.scan_all_ready([&](const storage::ReadyEntry& entry) {
    next_ready_seq_ = std::max(next_ready_seq_, entry.seq + 1);
    return true;
  }));
  ready_seq_reserved_ = next_ready_seq_;
  return Status::ok();
}

Status Engine::finish_recovery(const Sweep& sweep, std::vector<std::string>* repairs) {
  TARDE_ASSERT(counting_);
  for (size_t i = 0; i < by_state_.size(); ++i) {
    by_state_[i] += static_cast<int64_t>(sweep.by_state[i]);
  }
  for (const auto& [name, counts] : sweep.queues) {
    QueueState& queue = queue_state(name);
    queue.owned_ready += static_cast<int64_t>(counts.ready);
    queue.dead += static_cast<int64_t>(counts.dead);
    queue.in_flight += static_cast<int64_t>(counts.in_flight);
    queue.scheduled += static_cast<int64_t>(counts.scheduled);
  }
  counting_ = false;

  std::vector<Violation> still;
  TARDE_RETURN_IF_ERROR(still_violated(store_, sweep.violations, &still));
  TARDE_RETURN_IF_ERROR(lower_ready_floors(still));
  TARDE_RETURN_IF_ERROR(repair_violations(store_, still, repairs));
  TARDE_CRASH_POINT("recovery.after_repair");
  apply_repairs(still);
  for (const Violation& v : still) {
    if (v.kind == Violation::Kind::kBadRecord) repairs->push_back("left alone: " + v.text);
  }
  return Status::ok();
}

void Engine::restart_counting() {
  by_state_ = {};
  counting_ = true;
  for (auto& [name, queue] : queues_) {
    queue.owned_ready = 0;
    queue.dead = 0;
  }
}

// Requests about to be rebuilt below their queue's ready floor lower it
// first (a lower floor is always safe; the repairs follow in the same group).
Status Engine::lower_ready_floors(const std::vector<Violation>& repairs) {
  storage::Batch batch;
  std::map<std::string, ReadyQueue::Key> lowered;
  for (const Violation& v : repairs) {
    if (v.kind != Violation::Kind::kMissingIndex || v.cf != storage::Cf::kReady) continue;
    const storage::TxRecord& rec = v.record;
    const ReadyQueue::Key key{rec.ready_at_ms, rec.ready_seq};
    const auto& on_disk = queue_state(rec.queue).floor_on_disk;
    if (!on_disk || key >= *on_disk) continue;
    auto [it, added] = lowered.try_emplace(rec.queue, key);
    if (!added) it->second = std::min(it->second, key);
  }
  if (lowered.empty()) return Status::ok();
  for (const auto& [queue, key] : lowered) batch.put_ready_floor(queue, {key.first, key.second});
  TARDE_RETURN_IF_ERROR(store_.write(batch));
  for (const auto& [queue, key] : lowered) queue_state(queue).floor_on_disk = key;
  return Status::ok();
}

// Brings memory in line with repairs just written: rebuilt timers and
// requests join the pagers, deleted orphans leave them.
void Engine::apply_repairs(const std::vector<Violation>& repaired) {
  for (const Violation& v : repaired) {
    const storage::TxRecord& rec = v.record;
    if (v.kind == Violation::Kind::kMissingIndex && v.cf == storage::Cf::kDue) {
      due_.on_put({rec.due_at_ms, rec.tx_id, rec.due_kind,
                   rec.due_kind == storage::DueKind::kRetry ? rec.next_attempt : rec.attempt});
    } else if (v.kind == Violation::Kind::kMissingIndex && v.cf == storage::Cf::kReady) {
      queue_state(rec.queue).ready.on_put({rec.ready_at_ms, rec.ready_seq},
                                          {rec.tx_id, rec.next_attempt});
      notify_ready(rec.queue, rec.ready_at_ms);
    } else if (v.kind == Violation::Kind::kOrphanIndex && v.cf == storage::Cf::kDue) {
      auto key = storage::decode_due_key(v.key);
      if (key.is_ok()) due_.on_delete(key->fire_at_ms, key->tx_id);
    } else if (v.kind == Violation::Kind::kOrphanIndex && v.cf == storage::Cf::kReady) {
      auto key = storage::decode_ready_key(v.key);
      if (key.is_ok()) queue_state(key->queue).ready.on_erase({key->ready_at_ms, key->seq});
    }
  }
}

}  // namespace tarde::engine
