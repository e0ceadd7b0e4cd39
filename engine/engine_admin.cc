// The Engine's queue administration: pausing a queue, extending a lease,
// reserving from several queues, bulk changes of dead letters and payload
// reads. The protocol (PROTOCOL.md "PAUSE and RESUME", "TOUCH", "RESERVE",
// "DEADLETTERS, REDRIVE, REDRIVE_ALL and RESOLVE_ALL") and any other front
// end call these on the engine thread.
#include "base/assert.h"
#include "engine/engine.h"

namespace tarde::engine {

using storage::TxRecord;
using storage::TxState;

bool LetterFilter::matches(const storage::DeadLetter& letter) const {
  if (letter.tx_id.compare(0, tx_prefix.size(), tx_prefix) != 0) return false;
  if (last_error.empty()) return true;
  return !letter.failures.empty() && letter.failures.back().reason == last_error;
}

Status Engine::pause(std::string_view queue) { return set_paused(queue, true); }

Status Engine::resume(std::string_view queue) { return set_paused(queue, false); }

// Written whatever the flag was, so that a repeated PAUSE answers only once
// the state it reports is durable, like the first one.
Status Engine::set_paused(std::string_view queue_name, bool paused) {
  storage::QueueConfig config = queue_state(queue_name).config;
  config.paused = paused;
  return set_config(queue_name, config);  // wakes the queue's waiters
}

Result<TxReply> Engine::touch(uint64_t conn, std::string_view tx_id, uint32_t attempt) {
  auto found = store_.get_tx(tx_id);
  if (!found.is_ok()) return found.status();
  if (!found.value()) {
    TxReply reply;
    reply.outcome = Outcome::kNotFound;
    reply.summary.tx_id = std::string(tx_id);
    return reply;
  }
  const TxRecord& rec = *found.value();
  auto lease = leases_.find(tx_id);
  if (lease == leases_.end() || lease->second.conn != conn || lease->second.attempt != attempt) {
    count_stale("TOUCH");
    return TxReply{Outcome::kStale, summary(rec)};
  }
  Lease& held = lease->second;
  memory_timers_.cancel(held.timer);
  const int64_t lease_ms = queue_state(held.queue).config.lease_ms;
  held.timer = memory_timers_.insert(
      clock_.now_wall_ms() + lease_ms,
      MemoryTimer{MemoryTimer::Kind::kLeaseExpiry, std::string(tx_id), held.id});
  return TxReply{Outcome::kOk, summary(rec)};
}

Result<std::optional<HandOut>> Engine::reserve_any(const std::vector<std::string>& queues,
                                                   uint64_t conn, size_t start) {
  TARDE_ASSERT(!queues.empty());
  for (size_t i = 0; i < queues.size(); ++i) {
    const std::string& queue = queues[(start + i) % queues.size()];
    auto got = reserve(queue, conn);  // a paused queue gives nothing
    if (!got.is_ok() || got.value()) return got;
  }
  return std::optional<HandOut>();
}

// Listed first, changed afterwards: a scan's callback must not write.
Status Engine::matching_letters(std::string_view queue, const LetterFilter& filter, size_t limit,
                                std::vector<std::string>* tx_ids) {
  TARDE_ASSERT(limit >= 1);
  TARDE_ASSERT(limit <= kBulkLimitMax);
  tx_ids->clear();
  return store_.scan_dead(queue, [&](const storage::DeadLetter& letter) {
    if (filter.matches(letter)) tx_ids->push_back(letter.tx_id);
    return tx_ids->size() < limit;
  });
}

Result<size_t> Engine::redrive_all(std::string_view queue, const LetterFilter& filter,
                                   size_t limit) {
  std::vector<std::string> tx_ids;
  TARDE_RETURN_IF_ERROR(matching_letters(queue, filter, limit, &tx_ids));
  size_t changed = 0;
  for (const std::string& tx_id : tx_ids) {
    auto reply = redrive_one(queue, tx_id, "REDRIVE_ALL");
    if (!reply.is_ok()) return reply.status();
    if (reply.value().outcome == Outcome::kOk) changed += 1;
  }
  return changed;
}

Result<size_t> Engine::resolve_all(std::string_view queue, const LetterFilter& filter,
                                   TxState terminal, std::string_view reason, size_t limit) {
  TARDE_ASSERT(storage::is_terminal(terminal));
  std::vector<std::string> tx_ids;
  TARDE_RETURN_IF_ERROR(matching_letters(queue, filter, limit, &tx_ids));
  size_t changed = 0;
  for (const std::string& tx_id : tx_ids) {
    auto found = store_.get_tx(tx_id);
    if (!found.is_ok()) return found.status();
    const std::optional<TxRecord>& rec = found.value();
    // Only what is still a dead letter of this queue: RESOLVE_ALL never
    // settles a request that is out.
    if (!rec || rec->queue != queue || !rec->dead_lettered) continue;
    const RowContext ctx = row_context(queue_state(queue).config);
    auto reply = apply_decision(*rec, on_resolve(*rec, terminal, reason, ctx), "RESOLVE_ALL", ctx);
    if (!reply.is_ok()) return reply.status();
    if (reply.value().outcome == Outcome::kOk) changed += 1;
  }
  return changed;
}

Result<std::optional<std::string>> Engine::get_payload(std::string_view tx_id) {
  auto found = store_.get_tx(tx_id);
  if (!found.is_ok()) return found.status();
  if (!found.value()) return std::optional<std::string>();
  return std::optional<std::string>(std::move(found.value()->payload));
}

}  // namespace tarde::engine
