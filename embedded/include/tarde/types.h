#pragma once

// The plain values of tarde's embedded API (tarde/embedded.h): what a call
// takes and what it answers. Every type here is a plain value: copy it and
// use it on any thread. They mirror net/PROTOCOL.md's replies field for
// field; instants are wall-clock milliseconds since the Unix epoch.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tarde {

// A transaction's state (PROTOCOL.md "States").
enum class TxState { kNone, kSending, kInFlight, kScheduled, kSucceeded, kFailed };
// "SENDING", "IN_FLIGHT", ... ("-" for kNone, the "from" of a creation).
const char* state_name(TxState state);

// What the external service answered (RESPOND).
enum class Answer { kSuccess, kCancelled, kTransient, kRejected };
const char* answer_name(Answer answer);

// The reply word of a command on one transaction: CREATED, EXISTS, OK,
// BURIED, STALE, CONFLICT, NOT_FOUND. Answers, not failures: a STALE message
// changed nothing, as PROTOCOL.md says.
enum class Outcome { kCreated, kExists, kOk, kBuried, kStale, kConflict, kNotFound };
const char* outcome_name(Outcome outcome);

// The summary every command on one transaction answers with.
struct Summary {
  Outcome outcome = Outcome::kNotFound;
  std::string tx_id;
  TxState state = TxState::kNone;
  uint32_t attempt = 0;
  uint32_t next_attempt = 0;
  int64_t next_fire_at_ms = 0;  // 0: none
};

// ENQUEUE's optional arguments; unset ones take the queue's configuration.
struct EnqueueOptions {
  std::optional<uint32_t> max_attempts;
  std::optional<std::chrono::milliseconds> base;
  std::optional<double> factor;
  std::optional<std::chrono::milliseconds> cap;
  std::optional<double> jitter;
  std::optional<bool> strict_cap;
  std::optional<std::chrono::milliseconds> deadline;  // from now
  bool sent = false;  // attempt 1 already went out: the transaction starts IN_FLIGHT
  std::optional<std::chrono::milliseconds> delay;  // attempt 1 is ready after this
};

// A request handed out by reserve(): the caller holds its lease.
struct Request {
  std::string queue;
  std::string tx_id;
  uint32_t attempt = 0;
  uint32_t deliveries = 0;  // hand-outs of this request, this one included
  std::string key;          // the idempotency key, "<tx_id>#<attempt>"
  std::string payload;
};

// One failed delivery of a request (release, lease expiry, disconnect).
struct DeliveryFailure {
  int64_t at_ms = 0;
  std::string reason;
};

// A transaction as get() shows it.
struct Transaction {
  std::string tx_id;
  std::string queue;
  TxState state = TxState::kNone;
  uint32_t attempt = 0;
  uint32_t next_attempt = 0;
  uint32_t max_attempts = 0;
  int64_t next_fire_at_ms = 0;
  int64_t deadline_at_ms = 0;
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
  uint32_t deliveries = 0;  // failed deliveries of the current request
  uint32_t transients = 0;  // TRANSIENT answers in a row
  bool dead_lettered = false;
  std::string reason;
  std::string payload;
  std::vector<DeliveryFailure> failures;
};

// One row of a transaction's history (PROTOCOL.md "HISTORY").
struct Event {
  int64_t at_ms = 0;
  TxState from = TxState::kNone;
  TxState to = TxState::kNone;
  uint32_t attempt = 0;
  uint32_t next_attempt = 0;
  std::string cause;               // ENQUEUE, RESPOND, timer, lease, ...
  std::string reason;              // empty when none
  int64_t due_at_ms = 0;           // a timer fire: when it was due; 0 otherwise
  std::optional<int64_t> late_ms;  // a timer fire: how late it took effect
  uint64_t seq = 0;                // its number in the transaction's life, 0 the first
  uint64_t dropped_before = 0;     // events right before it that are no longer kept
};

// A dead letter: a request that used up its deliveries.
struct Letter {
  std::string queue;
  std::string tx_id;
  uint32_t attempt = 0;
  uint32_t deliveries = 0;
  int64_t buried_at_ms = 0;
  std::string payload;
  std::vector<DeliveryFailure> failures;
};

// A queue's settings as CONFIG shows them: (name, value) in PROTOCOL.md's
// names and wire forms, e.g. {"base", "2h"}, {"factor", "2"}.
using Settings = std::vector<std::pair<std::string, std::string>>;

// RESPOND's answer with its options: what a dispatch handler returns.
struct Response {
  Answer answer = Answer::kSuccess;
  std::string reason;                                    // printable, no spaces; empty: none
  std::optional<std::chrono::milliseconds> retry_after;  // CANCELLED/TRANSIENT only

  static Response success() { return {Answer::kSuccess, {}, {}}; }
  static Response cancelled(std::string reason = {}) {
    return {Answer::kCancelled, std::move(reason), {}};
  }
  static Response transient(std::string reason = {}) {
    return {Answer::kTransient, std::move(reason), {}};
  }
  static Response rejected(std::string reason = {}) {
    return {Answer::kRejected, std::move(reason), {}};
  }
};

}  // namespace tarde
