// Engine::recover: rebuilding memory from the store at start-up, or after a
// failed commit left memory ahead of the disk.
#include "engine/engine.h"
#include "engine/invariants.h"
#include "storage/crash_point.h"

namespace tarde::engine {

Status Engine::recover(RecoveryReport* report) {
  const int64_t started_ms = clock_.now_steady_ms();
  *report = RecoveryReport{};
  TARDE_RETURN_IF_ERROR(store_.ensure_format());

  const int64_t now_ms = clock_.now_wall_ms();
  queues_.clear();
  leases_.clear();
  leases_by_conn_.clear();
  pending_fires_.clear();
  memory_timers_ = TimerWheel<MemoryTimer>(now_ms);
  TARDE_RETURN_IF_ERROR(
      store_.scan_queue_configs([&](const std::string& name, const storage::QueueConfig& config) {
        QueueState& queue = queues_[name];
        queue.config = config;
        queue.bucket.configure(config.rate, now_ms);
        return true;
      }));

  Sweep sweep;
  TARDE_RETURN_IF_ERROR(sweep_invariants(store_, &sweep));
  TARDE_RETURN_IF_ERROR(repair_violations(store_, sweep.violations, &report->repairs));
  TARDE_CRASH_POINT("recovery.after_repair");
  for (const Violation& v : sweep.violations) {
    if (v.kind == Violation::Kind::kBadRecord) report->repairs.push_back("left alone: " + v.text);
  }
  by_state_ = sweep.by_state;
  report->transactions = sweep.transactions;

  TARDE_RETURN_IF_ERROR(store_.scan_all_ready([&](const storage::ReadyEntry& entry) {
    queue_state(entry.queue).ready.emplace(ReadyKey{entry.ready_at_ms, entry.seq},
                                           ReadyItem{entry.tx_id, entry.attempt});
    if (entry.seq >= next_ready_seq_) next_ready_seq_ = entry.seq + 1;
    if (entry.ready_at_ms > now_ms) {  // released with a delay: wake waiters then
      memory_timers_.insert(entry.ready_at_ms,
                            MemoryTimer{MemoryTimer::Kind::kReadyWake, entry.queue, 0});
    }
    report->ready += 1;
    return true;
  }));
  TARDE_RETURN_IF_ERROR(store_.scan_all_dead([&](const storage::DeadLetter& letter) {
    queue_state(letter.queue).dead += 1;
    report->dead_letters += 1;
    return true;
  }));
  TARDE_RETURN_IF_ERROR(due_.start(now_ms));
  report->due_in_memory = due_.in_memory();
  report->took_ms = clock_.now_steady_ms() - started_ms;
  return Status::ok();
}

}  // namespace tarde::engine
