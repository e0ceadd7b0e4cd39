#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/random.h"
#include "storage/records.h"

// The rows of PROTOCOL.md's state machine as pure functions: a stored record
// and an event in, a decision out. Each row is conditional: it applies only
// when the stored state and attempt are exactly the expected ones; otherwise
// the decision is kStale or kConflict and the record is left as it was. The
// functions do no IO; the Engine persists what they decide, together with the
// index entries the new record owns, in one batch.
namespace tarde::engine {

// How a command ended, and so which reply word it gets.
enum class Verdict {
  kApplied,   // the transition happened (OK / CREATED)
  kBuried,    // applied, and the request was dead-lettered (BURIED)
  kStale,     // duplicate, late or out-of-order: nothing changes (STALE)
  kConflict,  // a request is on its way and its answer decides (CONFLICT)
};

// The answers a responder can report. Names match the protocol words.
enum class Answer { kSuccess, kCancelled, kTransient, kRejected };
// The protocol word of an answer: "SUCCESS", "CANCELLED", ...
const char* answer_name(Answer answer);

// A transition's outcome: the verdict, the record after it (equal to the
// stored one unless applied) and the audit event's reason.
struct Decision {
  Verdict verdict = Verdict::kStale;
  storage::TxRecord after;
  std::string reason;            // the event's reason; empty when none
  std::optional<Answer> answer;  // the answer a RESPOND carried, for logs and figures
  // The instant the timer behind this decision was due (a retry's
  // next_fire_at, a response timeout, a lease's end), for the audit event;
  // 0 when no timer fired.
  int64_t due_at_ms = 0;
};

// What a row may need besides the record: the time, the queue's live
// settings, the chance for jitter, and the sequence for a new ready entry.
struct RowContext {
  int64_t now_ms = 0;
  const storage::QueueConfig* queue = nullptr;
  Random* random = nullptr;
  uint64_t ready_seq = 0;  // used when the row creates a ready entry
};

// The arguments of ENQUEUE after parsing; unset options take the queue's.
struct EnqueueArgs {
  std::string queue;
  std::string tx_id;
  std::string payload;
  std::optional<uint32_t> max_attempts;
  std::optional<int64_t> base_ms;
  std::optional<double> factor;
  std::optional<int64_t> cap_ms;
  std::optional<double> jitter;
  std::optional<bool> strict_cap;
  std::optional<int64_t> deadline_ms;
  bool sent = false;
  std::optional<int64_t> delay_ms;
};

// Failure reasons the engine itself writes.
inline constexpr std::string_view kReasonExhausted = "EXHAUSTED";
inline constexpr std::string_view kReasonRejected = "REJECTED";
inline constexpr std::string_view kReasonDeadline = "DEADLINE";
inline constexpr std::string_view kReasonTransientExhausted = "TRANSIENT_EXHAUSTED";
inline constexpr std::string_view kReasonResponseTimeout = "RESPONSE_TIMEOUT";
inline constexpr std::string_view kReasonReleased = "RELEASED";
inline constexpr std::string_view kReasonLeaseExpired = "LEASE_EXPIRED";
inline constexpr std::string_view kReasonDisconnected = "DISCONNECTED";
inline constexpr std::string_view kReasonResolved = "RESOLVED";

// (new) → SENDING, IN_FLIGHT (sent) or SCHEDULED (delay). Requires the args to
// be valid (see validate_enqueue).
storage::TxRecord create_record(const EnqueueArgs& args, const RowContext& ctx);

// An empty string when args can create a transaction; otherwise what is wrong.
std::string validate_enqueue(const EnqueueArgs& args, const storage::QueueConfig& queue);

// A retry the timer moved to SENDING ahead of its instant (Engine's
// retry_lead_ms) whose instant, its ready_at_ms, has not come: its request
// is not out, so until then it answers like the SCHEDULED retry it was (no
// SENT or RESPOND applies, RESOLVE does) and shows that instant as its
// next_fire_at.
bool waits_for_its_instant(const storage::TxRecord& rec, int64_t now_ms);

// The next_fire_at clients see: the record's, or the instant of a retry that
// waits_for_its_instant.
int64_t shown_next_fire_at_ms(const storage::TxRecord& rec, int64_t now_ms);

// SENDING n → IN_FLIGHT n.
Decision on_sent(const storage::TxRecord& rec, uint32_t attempt, const RowContext& ctx);

// IN_FLIGHT n (or SENDING n: the answer implies SENT) → as the answer says.
Decision on_respond(const storage::TxRecord& rec, uint32_t attempt, Answer answer,
                    std::string_view reason, std::optional<int64_t> retry_after_ms,
                    const RowContext& ctx);

// SENDING n, delivery ended without an answer (RELEASE, lease expiry,
// disconnect) → ready again after delay, or dead-lettered at max_deliveries.
Decision on_delivery_failed(const storage::TxRecord& rec, uint32_t attempt, int64_t delay_ms,
                            std::string_view reason, const RowContext& ctx);

// SCHEDULED, its timer reached next_fire_at → SENDING next_attempt.
Decision on_retry_due(const storage::TxRecord& rec, uint32_t attempt, int64_t fire_at_ms,
                      const RowContext& ctx);

// IN_FLIGHT n with no answer within response_timeout: a TRANSIENT answer.
Decision on_response_timeout(const storage::TxRecord& rec, int64_t due_at_ms,
                             const RowContext& ctx);

// SCHEDULED (or a retry that waits_for_its_instant), or SENDING with a
// dead-lettered request → terminal.
Decision on_resolve(const storage::TxRecord& rec, storage::TxState terminal,
                    std::string_view reason, const RowContext& ctx);

// SENDING with a dead-lettered request → ready again with deliveries 0.
Decision on_redrive(const storage::TxRecord& rec, const RowContext& ctx);

}  // namespace tarde::engine
