// The Engine's side of the periodic reconciler (engine/reconciler.h): index
// repairs written like recovery's, and the comparison of memory (timers,
// ready heads, leases) with what a stored transaction owns.
#include <algorithm>

#include "engine/engine.h"
#include "engine/invariants.h"

namespace tarde::engine {

using storage::DueKind;
using storage::TxRecord;
using storage::TxState;

Status Engine::repair(const std::vector<Violation>& violations, std::vector<std::string>* repairs) {
  TARDE_RETURN_IF_ERROR(lower_ready_floors(violations));
  TARDE_RETURN_IF_ERROR(repair_violations(store_, violations, repairs));
  apply_repairs(violations);
  return Status::ok();
}

Engine::MemoryCheck Engine::check_memory(const TxRecord& rec, std::vector<std::string>* restored) {
  MemoryCheck check;
  check.leased = leases_.count(rec.tx_id) != 0;
  if (rec.due_kind != DueKind::kNone) {
    const bool firing =
        std::any_of(pending_fires_.begin(), pending_fires_.end(), [&](const storage::DueEntry& e) {
          return e.tx_id == rec.tx_id && e.fire_at_ms == rec.due_at_ms;
        });
    if (!firing && due_.forgot(rec.due_at_ms, rec.tx_id)) {
      const uint32_t attempt = rec.due_kind == DueKind::kRetry ? rec.next_attempt : rec.attempt;
      due_.on_put({rec.due_at_ms, rec.tx_id, rec.due_kind, attempt});
      restored->push_back("restored " + rec.tx_id + ": its timer was on disk but forgotten by " +
                          "memory; it fires again");
    }
  }
  if (rec.state == TxState::kSending && rec.ready_seq != 0 && !check.leased) {
    QueueState& queue = queue_state(rec.queue);
    const ReadyQueue::Key key{rec.ready_at_ms, rec.ready_seq};
    if (queue.ready.forgot(key)) {
      queue.ready.on_put(key, {rec.tx_id, rec.next_attempt});
      notify_ready(rec.queue, rec.ready_at_ms);
      restored->push_back("restored " + rec.tx_id + ": its request was on disk but neither " +
                          "ready in memory nor leased; it is ready again");
    }
  }
  return check;
}

}  // namespace tarde::engine
