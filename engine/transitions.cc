#include "engine/transitions.h"

#include "base/assert.h"
#include "engine/backoff.h"

namespace tarde::engine {
namespace {

using storage::DueKind;
using storage::TxRecord;
using storage::TxState;

// The request of next_attempt is queued: ready at ready_at_ms with a fresh
// delivery count.
void enter_sending(TxRecord& rec, int64_t ready_at_ms, uint64_t ready_seq) {
  TARDE_ASSERT(ready_seq != 0);
  rec.state = TxState::kSending;
  rec.next_fire_at_ms = 0;
  rec.due_kind = DueKind::kNone;
  rec.due_at_ms = 0;
  rec.ready_at_ms = ready_at_ms;
  rec.ready_seq = ready_seq;
  rec.dead_lettered = false;
  rec.deliveries = 0;
  rec.failures.clear();
}

void clear_request(TxRecord& rec) {
  rec.ready_at_ms = 0;
  rec.ready_seq = 0;
  rec.dead_lettered = false;
  rec.deliveries = 0;
  rec.failures.clear();
}

void enter_in_flight(TxRecord& rec, uint32_t attempt, const RowContext& ctx) {
  rec.state = TxState::kInFlight;
  rec.attempt = attempt;
  rec.next_attempt = 0;
  rec.next_fire_at_ms = 0;
  clear_request(rec);
  const int64_t timeout_ms = ctx.queue->response_timeout_ms;
  rec.due_kind = timeout_ms > 0 ? DueKind::kResponseTimeout : DueKind::kNone;
  rec.due_at_ms = timeout_ms > 0 ? ctx.now_ms + timeout_ms : 0;
}

void enter_scheduled(TxRecord& rec, uint32_t next_attempt, int64_t fire_at_ms) {
  rec.state = TxState::kScheduled;
  rec.next_attempt = next_attempt;
  rec.next_fire_at_ms = fire_at_ms;
  rec.due_kind = DueKind::kRetry;
  rec.due_at_ms = fire_at_ms;
  clear_request(rec);
}

void enter_terminal(TxRecord& rec, TxState state, std::string_view reason, const RowContext& ctx) {
  TARDE_ASSERT(storage::is_terminal(state));
  rec.state = state;
  rec.next_attempt = 0;
  rec.next_fire_at_ms = 0;
  rec.reason = std::string(reason);
  clear_request(rec);
  const int64_t retention_ms = ctx.queue->retention_ms;
  rec.due_kind = retention_ms > 0 ? DueKind::kRetention : DueKind::kNone;
  rec.due_at_ms = retention_ms > 0 ? ctx.now_ms + retention_ms : 0;
}

Decision unchanged(const TxRecord& rec, Verdict verdict) {
  return Decision{verdict, rec, {}, std::nullopt};
}

Decision applied(TxRecord after, std::string_view reason, Verdict verdict = Verdict::kApplied) {
  return Decision{verdict, std::move(after), std::string(reason), std::nullopt};
}

bool past_deadline(const TxRecord& rec, int64_t fire_at_ms) {
  return rec.deadline_at_ms != 0 && fire_at_ms > rec.deadline_at_ms;
}

// A retry of the next attempt after CANCELLED, or FAILED when the budget or
// the deadline forbids it.
Decision schedule_after_cancelled(TxRecord after, std::string_view reason,
                                  std::optional<int64_t> retry_after_ms, const RowContext& ctx) {
  after.transients = 0;
  const uint32_t k = after.attempt;
  if (k >= after.policy.max_attempts) {
    enter_terminal(after, TxState::kFailed, kReasonExhausted, ctx);
    return applied(std::move(after), kReasonExhausted);
  }
  const int64_t wait_ms = retry_after_ms
                              ? bounded_retry_after_ms(*retry_after_ms, after.policy.cap_ms)
                              : cancelled_wait_ms(after.policy, k, ctx.random->next_unit());
  const int64_t fire_at_ms = ctx.now_ms + wait_ms;
  if (past_deadline(after, fire_at_ms)) {
    enter_terminal(after, TxState::kFailed, kReasonDeadline, ctx);
    return applied(std::move(after), kReasonDeadline);
  }
  enter_scheduled(after, k + 1, fire_at_ms);
  return applied(std::move(after), reason);
}

// The same attempt again after a TRANSIENT answer, or FAILED when too many
// came in a row or the deadline forbids it.
Decision schedule_after_transient(TxRecord after, std::string_view reason,
                                  std::optional<int64_t> retry_after_ms, const RowContext& ctx) {
  after.transients += 1;
  if (after.transients > after.policy.max_transient) {
    enter_terminal(after, TxState::kFailed, kReasonTransientExhausted, ctx);
    return applied(std::move(after), kReasonTransientExhausted);
  }
  const int64_t wait_ms =
      retry_after_ms ? bounded_retry_after_ms(*retry_after_ms, after.policy.transient_cap_ms)
                     : transient_wait_ms(after.policy, after.transients, ctx.random->next_unit());
  const int64_t fire_at_ms = ctx.now_ms + wait_ms;
  if (past_deadline(after, fire_at_ms)) {
    enter_terminal(after, TxState::kFailed, kReasonDeadline, ctx);
    return applied(std::move(after), kReasonDeadline);
  }
  enter_scheduled(after, after.attempt, fire_at_ms);
  return applied(std::move(after), reason);
}

storage::RetryPolicy policy_for(const EnqueueArgs& args, const storage::QueueConfig& queue) {
  storage::RetryPolicy policy = queue.policy;
  if (args.max_attempts) policy.max_attempts = *args.max_attempts;
  if (args.base_ms) policy.base_ms = *args.base_ms;
  if (args.factor) policy.factor = *args.factor;
  if (args.cap_ms) policy.cap_ms = *args.cap_ms;
  if (args.jitter) policy.jitter = *args.jitter;
  if (args.strict_cap) policy.strict_cap = *args.strict_cap;
  return policy;
}

}  // namespace

bool waits_for_its_instant(const TxRecord& rec, int64_t now_ms) {
  // Deliveries 0 with a future ready_at: only the timer queues a request for
  // later without a failed delivery (RELEASE delay= records one).
  return rec.state == TxState::kSending && !rec.dead_lettered && rec.deliveries == 0 &&
         rec.ready_at_ms > now_ms;
}

int64_t shown_next_fire_at_ms(const TxRecord& rec, int64_t now_ms) {
  return waits_for_its_instant(rec, now_ms) ? rec.ready_at_ms : rec.next_fire_at_ms;
}

std::string validate_enqueue(const EnqueueArgs& args, const storage::QueueConfig& queue) {
  if (args.sent && args.delay_ms) return "delay cannot be combined with sent=1";
  const storage::RetryPolicy policy = policy_for(args, queue);
  if (policy.max_attempts < 1 || policy.max_attempts > 1000) {
    return "max_attempts must be from 1 to 1000";
  }
  if (policy.factor <= 0) return "factor must be above 0";
  if (policy.jitter < 0 || policy.jitter > 1) return "jitter must be from 0 to 1";
  if (args.delay_ms && args.deadline_ms && *args.deadline_ms > 0 &&
      *args.delay_ms > *args.deadline_ms) {
    return "delay must not exceed deadline";
  }
  return {};
}

TxRecord create_record(const EnqueueArgs& args, const RowContext& ctx) {
  TxRecord rec;
  rec.tx_id = args.tx_id;
  rec.queue = args.queue;
  rec.policy = policy_for(args, *ctx.queue);
  rec.payload = args.payload;
  rec.created_at_ms = ctx.now_ms;
  rec.updated_at_ms = ctx.now_ms;
  if (args.deadline_ms && *args.deadline_ms > 0)
    rec.deadline_at_ms = ctx.now_ms + *args.deadline_ms;
  if (args.sent) {
    enter_in_flight(rec, 1, ctx);
  } else if (args.delay_ms) {
    enter_scheduled(rec, 1, ctx.now_ms + *args.delay_ms);
  } else {
    rec.next_attempt = 1;
    enter_sending(rec, ctx.now_ms, ctx.ready_seq);
  }
  return rec;
}

Decision on_sent(const TxRecord& rec, uint32_t attempt, const RowContext& ctx) {
  if (rec.state != TxState::kSending || rec.next_attempt != attempt ||
      waits_for_its_instant(rec, ctx.now_ms)) {
    return unchanged(rec, Verdict::kStale);
  }
  TxRecord after = rec;
  enter_in_flight(after, attempt, ctx);
  return applied(std::move(after), {});
}

Decision on_respond(const TxRecord& rec, uint32_t attempt, Answer answer, std::string_view reason,
                    std::optional<int64_t> retry_after_ms, const RowContext& ctx) {
  const bool in_flight = rec.state == TxState::kInFlight && rec.attempt == attempt;
  const bool sending = rec.state == TxState::kSending && rec.next_attempt == attempt &&
                       !waits_for_its_instant(rec, ctx.now_ms);
  if (!in_flight && !sending) return unchanged(rec, Verdict::kStale);
  TxRecord after = rec;
  if (sending) enter_in_flight(after, attempt, ctx);  // an answer implies SENT
  switch (answer) {
    case Answer::kSuccess:
      after.transients = 0;
      enter_terminal(after, TxState::kSucceeded, reason, ctx);
      return applied(std::move(after), reason);
    case Answer::kRejected: {
      after.transients = 0;
      const std::string_view why = reason.empty() ? kReasonRejected : reason;
      enter_terminal(after, TxState::kFailed, why, ctx);
      return applied(std::move(after), why);
    }
    case Answer::kCancelled:
      return schedule_after_cancelled(std::move(after), reason, retry_after_ms, ctx);
    case Answer::kTransient:
      return schedule_after_transient(std::move(after), reason, retry_after_ms, ctx);
  }
  TARDE_ASSERT(false);
  return unchanged(rec, Verdict::kStale);
}

Decision on_delivery_failed(const TxRecord& rec, uint32_t attempt, int64_t delay_ms,
                            std::string_view reason, const RowContext& ctx) {
  if (rec.state != TxState::kSending || rec.next_attempt != attempt || rec.dead_lettered ||
      rec.ready_seq == 0) {
    return unchanged(rec, Verdict::kStale);
  }
  TxRecord after = rec;
  after.deliveries += 1;
  after.failures.push_back({ctx.now_ms, std::string(reason)});
  if (after.deliveries >= ctx.queue->max_deliveries) {
    after.ready_at_ms = 0;
    after.ready_seq = 0;
    after.dead_lettered = true;
    return applied(std::move(after), reason, Verdict::kBuried);
  }
  after.ready_at_ms = ctx.now_ms + delay_ms;
  after.ready_seq = ctx.ready_seq;
  return applied(std::move(after), reason);
}

Decision on_retry_due(const TxRecord& rec, uint32_t attempt, int64_t fire_at_ms,
                      const RowContext& ctx) {
  if (rec.state != TxState::kScheduled || rec.next_attempt != attempt ||
      rec.next_fire_at_ms != fire_at_ms) {
    return unchanged(rec, Verdict::kStale);
  }
  TxRecord after = rec;
  // Ready from its scheduled instant: overdue retries keep their due order.
  enter_sending(after, fire_at_ms, ctx.ready_seq);
  Decision decision = applied(std::move(after), {});
  decision.due_at_ms = fire_at_ms;
  return decision;
}

Decision on_response_timeout(const TxRecord& rec, int64_t due_at_ms, const RowContext& ctx) {
  if (rec.state != TxState::kInFlight || rec.due_kind != DueKind::kResponseTimeout ||
      rec.due_at_ms != due_at_ms) {
    return unchanged(rec, Verdict::kStale);
  }
  Decision decision = schedule_after_transient(rec, kReasonResponseTimeout, std::nullopt, ctx);
  decision.due_at_ms = due_at_ms;
  return decision;
}

Decision on_resolve(const TxRecord& rec, TxState terminal, std::string_view reason,
                    const RowContext& ctx) {
  if (storage::is_terminal(rec.state)) return unchanged(rec, Verdict::kStale);
  const bool dead_request = rec.state == TxState::kSending && rec.dead_lettered;
  if (rec.state != TxState::kScheduled && !dead_request &&
      !waits_for_its_instant(rec, ctx.now_ms)) {
    return unchanged(rec, Verdict::kConflict);
  }
  TxRecord after = rec;
  const std::string_view why =
      reason.empty() && terminal == TxState::kFailed ? kReasonResolved : reason;
  enter_terminal(after, terminal, why, ctx);
  return applied(std::move(after), why);
}

Decision on_redrive(const TxRecord& rec, const RowContext& ctx) {
  if (rec.state != TxState::kSending || !rec.dead_lettered) {
    return unchanged(rec, Verdict::kStale);
  }
  TxRecord after = rec;
  enter_sending(after, ctx.now_ms, ctx.ready_seq);
  return applied(std::move(after), {});
}

const char* answer_name(Answer answer) {
  switch (answer) {
    case Answer::kSuccess:
      return "SUCCESS";
    case Answer::kCancelled:
      return "CANCELLED";
    case Answer::kTransient:
      return "TRANSIENT";
    case Answer::kRejected:
      return "REJECTED";
  }
  return "?";
}

}  // namespace tarde::engine
