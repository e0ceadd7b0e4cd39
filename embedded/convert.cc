#include "embedded/convert.h"

namespace tarde::embedded {
namespace {

std::vector<DeliveryFailure> to_public(const std::vector<storage::DeliveryFailure>& failures) {
  std::vector<DeliveryFailure> out;
  out.reserve(failures.size());
  for (const auto& f : failures) out.push_back(DeliveryFailure{f.at_ms, f.reason});
  return out;
}

Outcome to_public(engine::Outcome outcome) {
  switch (outcome) {
    case engine::Outcome::kCreated:
      return Outcome::kCreated;
    case engine::Outcome::kExists:
      return Outcome::kExists;
    case engine::Outcome::kOk:
      return Outcome::kOk;
    case engine::Outcome::kBuried:
      return Outcome::kBuried;
    case engine::Outcome::kStale:
      return Outcome::kStale;
    case engine::Outcome::kConflict:
      return Outcome::kConflict;
    case engine::Outcome::kNotFound:
      return Outcome::kNotFound;
  }
  return Outcome::kNotFound;
}

}  // namespace

TxState to_public(storage::TxState state) {
  switch (state) {
    case storage::TxState::kNone:
      return TxState::kNone;
    case storage::TxState::kSending:
      return TxState::kSending;
    case storage::TxState::kInFlight:
      return TxState::kInFlight;
    case storage::TxState::kScheduled:
      return TxState::kScheduled;
    case storage::TxState::kSucceeded:
      return TxState::kSucceeded;
    case storage::TxState::kFailed:
      return TxState::kFailed;
  }
  return TxState::kNone;
}

storage::TxState to_storage(TxState state) {
  switch (state) {
    case TxState::kNone:
      return storage::TxState::kNone;
    case TxState::kSending:
      return storage::TxState::kSending;
    case TxState::kInFlight:
      return storage::TxState::kInFlight;
    case TxState::kScheduled:
      return storage::TxState::kScheduled;
    case TxState::kSucceeded:
      return storage::TxState::kSucceeded;
    case TxState::kFailed:
      return storage::TxState::kFailed;
  }
  return storage::TxState::kNone;
}

engine::Answer to_engine(Answer answer) {
  switch (answer) {
    case Answer::kSuccess:
      return engine::Answer::kSuccess;
    case Answer::kCancelled:
      return engine::Answer::kCancelled;
    case Answer::kTransient:
      return engine::Answer::kTransient;
    case Answer::kRejected:
      return engine::Answer::kRejected;
  }
  return engine::Answer::kTransient;
}

Summary to_public(const engine::TxReply& reply) {
  const engine::Summary& s = reply.summary;
  return Summary{to_public(reply.outcome), s.tx_id,          to_public(s.state), s.attempt,
                 s.next_attempt,           s.next_fire_at_ms};
}

Request to_public(const std::string& queue, const engine::HandOut& h) {
  return Request{
      queue, h.tx_id, h.attempt, h.handouts, h.tx_id + '#' + std::to_string(h.attempt), h.payload};
}

Transaction to_public(const storage::TxRecord& r) {
  Transaction t;
  t.tx_id = r.tx_id;
  t.queue = r.queue;
  t.state = to_public(r.state);
  t.attempt = r.attempt;
  t.next_attempt = r.next_attempt;
  t.max_attempts = r.policy.max_attempts;
  t.next_fire_at_ms = r.next_fire_at_ms;
  t.deadline_at_ms = r.deadline_at_ms;
  t.created_at_ms = r.created_at_ms;
  t.updated_at_ms = r.updated_at_ms;
  t.deliveries = r.deliveries;
  t.transients = r.transients;
  t.dead_lettered = r.dead_lettered;
  t.reason = r.reason;
  t.payload = r.payload;
  t.failures = to_public(r.failures);
  return t;
}

Event to_public(const engine::HistoryEntry& entry) {
  const storage::EventRecord& e = entry.event;
  return Event{
      e.at_ms,  to_public(e.from), to_public(e.to),        e.attempt, e.next_attempt,      e.cause,
      e.reason, e.due_at_ms,       engine::lateness_ms(e), entry.seq, entry.dropped_before};
}

Letter to_public(const storage::DeadLetter& l) {
  return Letter{
      l.queue, l.tx_id, l.attempt, l.deliveries, l.buried_at_ms, l.payload, to_public(l.failures)};
}

}  // namespace tarde::embedded

namespace tarde {

const char* state_name(TxState state) { return storage::to_string(embedded::to_storage(state)); }

const char* answer_name(Answer answer) { return engine::answer_name(embedded::to_engine(answer)); }

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kCreated:
      return "CREATED";
    case Outcome::kExists:
      return "EXISTS";
    case Outcome::kOk:
      return "OK";
    case Outcome::kBuried:
      return "BURIED";
    case Outcome::kStale:
      return "STALE";
    case Outcome::kConflict:
      return "CONFLICT";
    case Outcome::kNotFound:
      return "NOT_FOUND";
  }
  return "?";
}

}  // namespace tarde
