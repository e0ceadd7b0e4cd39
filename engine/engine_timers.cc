// The Engine's timer-driven work: due retries, response timeouts, retention
// purges, lease expiries, disconnects and wake-ups of delayed requests.
#include "base/assert.h"
#include "engine/engine.h"

namespace tarde::engine {

using storage::DueKind;
using storage::TxRecord;
using storage::TxState;

Result<bool> Engine::run_timers(bool fire) {
  const int64_t now_ms = clock_.now_wall_ms();
  std::vector<TimerWheel<MemoryTimer>::Fired> fired;
  memory_timers_.advance(now_ms, fired);
  bool woke = false;
  for (auto& timer : fired) {
    if (timer.value.kind == MemoryTimer::Kind::kLeaseExpiry) {
      TARDE_RETURN_IF_ERROR(expire_lease(timer.value.key, timer.value.id));
    } else if (ready_listener_) {
      ready_listener_(timer.value.key);
      woke = true;
    }
  }
  if (!fire) return false;
  // Requests came due: the RESERVEs woken for them go before the next chunk
  // of fires, which would otherwise hold their hand-outs for its length.
  if (woke) return true;
  if (pending_fires_.empty()) {
    std::vector<storage::DueEntry> due;
    TARDE_RETURN_IF_ERROR(due_.poll(now_ms + options_.retry_lead_ms, due, options_.fires_per_turn));
    pending_fires_.insert(pending_fires_.end(), due.begin(), due.end());
    if (due.size() >= kPrefetchFiresMin) {
      std::vector<std::string_view> tx_ids;
      tx_ids.reserve(due.size());
      for (const storage::DueEntry& entry : due) tx_ids.push_back(entry.tx_id);
      store_.prefetch_tx(tx_ids);
    }
  }
  for (size_t n = 0; n < options_.fires_per_turn && !pending_fires_.empty(); ++n) {
    if (fire_time_ms(pending_fires_.front()) > now_ms) break;  // not a retry: waits its time
    TARDE_RETURN_IF_ERROR(fire_due(pending_fires_.front()));
    pending_fires_.pop_front();
  }
  if (!pending_fires_.empty()) return fire_time_ms(pending_fires_.front()) <= now_ms;
  const std::optional<int64_t> wake = due_.next_wake_ms();  // the poll's limit left more due
  return wake.has_value() && *wake <= now_ms + options_.retry_lead_ms;
}

// When a polled due entry may fire: retries up to retry_lead_ms early, the
// other kinds at their instant.
int64_t Engine::fire_time_ms(const storage::DueEntry& entry) const {
  return entry.kind == DueKind::kRetry ? entry.fire_at_ms - options_.retry_lead_ms
                                       : entry.fire_at_ms;
}

std::optional<int64_t> Engine::next_timer_ms(bool fire) const {
  std::optional<int64_t> next = memory_timers_.next_due_ms();
  if (!fire) return next;
  if (!pending_fires_.empty()) return fire_time_ms(pending_fires_.front());
  std::optional<int64_t> due = due_.next_wake_ms();
  if (due) *due -= options_.retry_lead_ms;
  if (due && (!next || *due < *next)) next = due;
  return next;
}

Status Engine::fire_due(const storage::DueEntry& entry) {
  auto found = store_.get_tx(entry.tx_id);
  if (!found.is_ok()) return found.status();
  const std::optional<TxRecord>& rec = found.value();
  const bool owned = rec && rec->due_kind == entry.kind && rec->due_at_ms == entry.fire_at_ms;
  if (!owned) {
    count_stale("timer");
    // Delete the orphan key, unless the record owns that key with another kind.
    if (rec && rec->due_kind != DueKind::kNone && rec->due_at_ms == entry.fire_at_ms) {
      return Status::ok();
    }
    storage::Batch batch;
    batch.delete_due(entry.fire_at_ms, entry.tx_id);
    return store_.write(batch);
  }
  fired_ += 1;
  QueueState& queue = queue_state(rec->queue);
  switch (entry.kind) {
    case DueKind::kRetry: {
      const RowContext ctx = row_context(queue.config);
      Decision decision = on_retry_due(*rec, entry.attempt, entry.fire_at_ms, ctx);
      firing_retry_ = true;
      auto applied = apply_decision(*rec, std::move(decision), "timer", ctx);
      firing_retry_ = false;
      return applied.status();
    }
    case DueKind::kResponseTimeout: {
      const RowContext ctx = row_context(queue.config);
      Decision decision = on_response_timeout(*rec, entry.fire_at_ms, ctx);
      auto reply = apply_decision(*rec, std::move(decision), "timer", ctx);
      if (reply.is_ok() && queue.config.breaker) {
        queue.breaker.record(clock_.now_wall_ms(), /*transient=*/true);
        report_breaker(rec->queue, queue);
      }
      return reply.status();
    }
    case DueKind::kRetention:
      return purge(*rec);
    case DueKind::kNone:
      break;
  }
  TARDE_ASSERT(false);
  return Status::ok();
}

// Retention ran out for a terminal transaction: it goes, with its history and
// its timer. An ENQUEUE of the same id afterwards creates a new transaction.
Status Engine::purge(const TxRecord& rec) {
  TARDE_ASSERT(storage::is_terminal(rec.state));
  storage::Batch batch;
  batch.delete_tx(rec.tx_id);
  batch.delete_state(rec.queue, *storage::filed_state(rec), rec.tx_id);  // terminal: filed
  batch.delete_due(rec.due_at_ms, rec.tx_id);
  TARDE_RETURN_IF_ERROR(store_.scan_events(rec.tx_id, [&](uint64_t seq, const auto&) {
    batch.delete_event(rec.tx_id, seq);
    return true;
  }));
  TARDE_RETURN_IF_ERROR(store_.write(batch));
  by_state_[static_cast<size_t>(rec.state)] -= 1;
  due_.on_delete(rec.due_at_ms, rec.tx_id);
  return Status::ok();
}

Status Engine::expire_lease(const std::string& tx_id, uint64_t lease_id) {
  auto lease = leases_.find(tx_id);
  if (lease == leases_.end() || lease->second.id != lease_id) return Status::ok();
  return end_delivery(tx_id, lease->second.attempt, 0, kReasonLeaseExpired, nullptr,
                      lease->second.expires_at_ms);
}

// A leased request's delivery ended without an answer: ready again, or dead.
Status Engine::end_delivery(const std::string& tx_id, uint32_t attempt, int64_t delay_ms,
                            std::string_view reason, Result<TxReply>* reply, int64_t lease_end_ms) {
  auto found = store_.get_tx(tx_id);
  if (!found.is_ok()) return found.status();
  if (!found.value()) {
    drop_lease(tx_id);
    return Status::ok();
  }
  const TxRecord& rec = *found.value();
  QueueState& queue = queue_state(rec.queue);
  if (queue.probe_tx_id == tx_id) {
    queue.probe_tx_id.clear();
    queue.breaker.on_probe_lost();
  }
  const char* cause = reply ? "RELEASE" : "lease";
  const RowContext ctx = row_context(queue.config);
  Decision decision = on_delivery_failed(rec, attempt, delay_ms, reason, ctx);
  decision.due_at_ms = lease_end_ms;
  auto result = apply_decision(rec, std::move(decision), cause, ctx);
  drop_lease(tx_id);  // also when the row was stale: the lease is over either way
  if (!result.is_ok()) return result.status();
  if (reply) *reply = std::move(result);
  return Status::ok();
}

Status Engine::connection_closed(uint64_t conn) {
  auto it = leases_by_conn_.find(conn);
  if (it == leases_by_conn_.end()) return Status::ok();
  std::vector<std::string> tx_ids;  // copies: ending a lease frees its key
  for (const Lease* lease = it->second.first; lease; lease = lease->conn_next) {
    tx_ids.emplace_back(lease->tx_id);
  }
  Status first_error;
  for (const std::string& tx_id : tx_ids) {
    auto lease = leases_.find(tx_id);
    if (lease == leases_.end()) continue;
    Status status = end_delivery(tx_id, lease->second.attempt, 0, kReasonDisconnected, nullptr);
    if (!status.is_ok() && first_error.is_ok()) first_error = status;
  }
  // A lease whose end failed to write stays, out of any connection's list.
  it = leases_by_conn_.find(conn);
  if (it == leases_by_conn_.end()) return first_error;
  for (Lease* lease = it->second.first; lease;) {
    Lease* next = lease->conn_next;
    lease->conn_prev = nullptr;
    lease->conn_next = nullptr;
    lease = next;
  }
  leases_by_conn_.erase(it);
  return first_error;
}

}  // namespace tarde::engine
