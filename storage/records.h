#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// The records tarde keeps on disk, as plain data. Their byte encodings live in
// storage/codec.h and are specified in storage/FORMAT.md. The engine decides
// what the fields mean; storage only keeps them.
namespace tarde::storage {

// A transaction's state. Value is stored on disk; never renumber.
enum class TxState : uint8_t {
  kNone = 0,  // only in events: the "from" of a creation
  kSending = 1,
  kInFlight = 2,
  kScheduled = 3,
  kSucceeded = 4,
  kFailed = 5,
};

const char* to_string(TxState state);
bool is_terminal(TxState state);

// The retry policy a transaction was created with. It is copied into the
// record so that later CONFIG changes never alter a transaction in flight.
struct RetryPolicy {
  uint32_t max_attempts = 4;
  int64_t base_ms = 2 * 3600 * 1000;
  double factor = 2.0;
  int64_t cap_ms = 24 * 3600 * 1000;
  double jitter = 0.1;
  bool strict_cap = false;
  int64_t transient_base_ms = 1000;
  double transient_factor = 1.6;
  int64_t transient_cap_ms = 120 * 1000;
  uint32_t max_transient = 10;

  bool operator==(const RetryPolicy&) const = default;
};

// One delivery of a request that ended without an answer: a RELEASE, a lease
// expiry or a dispatcher disconnect.
struct DeliveryFailure {
  int64_t at_ms = 0;
  std::string reason;

  bool operator==(const DeliveryFailure&) const = default;
};

// What a transaction's single timer in the `due` column family is for.
// Value is stored on disk; never renumber.
enum class DueKind : uint8_t {
  kNone = 0,
  kRetry = 1,            // SCHEDULED: fire next_attempt at next_fire_at
  kResponseTimeout = 2,  // IN_FLIGHT: no answer within the queue's response_timeout
  kRetention = 3,        // terminal: purge the transaction and its history
};

// One audit event: the `events` column family's value, or one of the two a
// transaction record holds itself (TxRecord::first_event, newest_event). Every
// transition writes exactly one, in the same batch as the transition.
struct EventRecord {
  int64_t at_ms = 0;
  TxState from = TxState::kNone;
  TxState to = TxState::kNone;
  uint32_t attempt = 0;
  uint32_t next_attempt = 0;
  std::string cause;   // the command (ENQUEUE, RESPOND, ...) or timer, lease, reconciler
  std::string reason;  // empty when none
  // Class version 2: the instant the timer whose fire this event records was
  // due (a retry's next_fire_at, a response timeout, a lease's end); 0 when
  // the event is not a timer fire, and in every version 1 value.
  int64_t due_at_ms = 0;

  bool operator==(const EventRecord&) const = default;
};

// The durable state of one transaction: the `tx` column family's value.
struct TxRecord {
  std::string tx_id;
  std::string queue;
  TxState state = TxState::kNone;
  uint32_t attempt = 0;       // last attempt whose request went out (0 before the first)
  uint32_t next_attempt = 0;  // attempt being scheduled or sent (0 when none)
  RetryPolicy policy;
  int64_t next_fire_at_ms = 0;  // when the scheduled retry fires (0 when none)
  int64_t deadline_at_ms = 0;   // 0 when none
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
  uint32_t deliveries = 0;  // failed deliveries of the current request
  uint32_t transients = 0;  // TRANSIENT answers in a row
  std::string reason;       // empty when none
  std::string payload;
  uint64_t events = 0;  // events written so far; the next event's sequence

  // The transaction's one timer in `due` (kind kNone when it has none).
  DueKind due_kind = DueKind::kNone;
  int64_t due_at_ms = 0;

  // The current request while SENDING: its key in `ready`, or dead-lettered.
  int64_t ready_at_ms = 0;
  uint64_t ready_seq = 0;  // 0 when the transaction has no ready entry
  bool dead_lettered = false;
  std::vector<DeliveryFailure> failures;  // of the current request

  // TxRecord class version 2 (store format 3): the record holds two of its
  // audit events in its own value, so that the transitions of a short life
  // write no key to `events`: its first (seq 0) and, once it has two or
  // more, its newest (seq events - 1). The newest moves to `events` when the
  // next event takes its place. A record written before holds neither: all
  // its events are in `events`, as are the first and newest of a record
  // created before and written since.
  std::optional<EventRecord> first_event;
  std::optional<EventRecord> newest_event;

  bool operator==(const TxRecord&) const = default;
};

// A transaction's place in the state index (column family `state`, format
// version 2): its TxState, except that a SENDING transaction whose request
// is dead-lettered is filed apart, so that the ready requests of a queue and
// its dead letters are listed without walking each other. Value is stored on
// disk; never renumber.
enum class IndexedState : uint8_t {
  kSending = 1,  // a request ready or leased; filed only by formats 2 to 4
  kInFlight = 2,
  kScheduled = 3,
  kSucceeded = 4,
  kFailed = 5,
  kDeadLettered = 6,  // SENDING, its request dead-lettered
};
inline constexpr uint8_t kIndexedStateMax = 6;

// The state rec is in, as the state index names states. Requires: rec.state
// is not kNone.
IndexedState indexed_state(const TxRecord& rec);
// The state index key rec owns, if any (format version 5): every state but
// SENDING with a request in `ready`, which that entry already indexes, so
// that the short life of a request (ENQUEUE, hand-out, answer) moves no
// state key. nullopt for kNone too.
std::optional<IndexedState> filed_state(const TxRecord& rec);

// The value of a `due` entry; the key holds fire_at_ms and tx_id.
struct DueValue {
  DueKind kind = DueKind::kNone;
  uint32_t attempt = 0;

  bool operator==(const DueValue&) const = default;
};

// The value of a `ready` entry; the key holds queue, ready_at_ms and seq.
struct ReadyValue {
  std::string tx_id;
  uint32_t attempt = 0;

  bool operator==(const ReadyValue&) const = default;
};

// An entry of the time-ordered `due` index. Its key is (fire_at_ms, tx_id).
struct DueEntry {
  int64_t fire_at_ms = 0;
  std::string tx_id;
  DueKind kind = DueKind::kNone;
  uint32_t attempt = 0;

  bool operator==(const DueEntry&) const = default;
};

// A request waiting for a dispatcher. Its key is (queue, ready_at_ms, seq).
struct ReadyEntry {
  std::string queue;
  int64_t ready_at_ms = 0;
  uint64_t seq = 0;
  std::string tx_id;
  uint32_t attempt = 0;

  bool operator==(const ReadyEntry&) const = default;
};

// A request that used up its deliveries. Its key is (queue, tx_id).
struct DeadLetter {
  std::string queue;
  std::string tx_id;
  uint32_t attempt = 0;
  uint32_t deliveries = 0;
  int64_t buried_at_ms = 0;
  std::string payload;
  std::vector<DeliveryFailure> failures;

  bool operator==(const DeadLetter&) const = default;
};

// A queue's settings, as CONFIG sets them. Stored in `meta` under
// "queue/<name>"; a queue without a stored record uses the defaults below.
struct QueueConfig {
  RetryPolicy policy;
  int64_t lease_ms = 30 * 1000;
  uint32_t max_deliveries = 5;
  double rate = 0;                  // requests per second; 0 = unlimited
  int64_t response_timeout_ms = 0;  // 0 = none
  bool breaker = true;
  int64_t retention_ms = 7LL * 24 * 3600 * 1000;
  // Class version 2 from here on; a version 1 value reads as these defaults.
  uint32_t history_max = 1000;             // events kept per transaction
  int64_t stuck_after_ms = 3600LL * 1000;  // the reconciler reports older work; 0 = never
  bool paused = false;                     // set by PAUSE / RESUME, not by CONFIG

  bool operator==(const QueueConfig&) const = default;
};

}  // namespace tarde::storage
