#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "base/string_hash.h"
#include "engine/breaker.h"
#include "engine/due_timers.h"
#include "engine/history.h"
#include "engine/listing.h"
#include "engine/random.h"
#include "engine/ready_queue.h"
#include "engine/timer_wheel.h"
#include "engine/token_bucket.h"
#include "engine/transitions.h"
#include "storage/records.h"
#include "storage/store.h"

namespace tarde {
class Figures;
}

namespace tarde::engine {

// A timer that lives only in memory: a lease running out, or a delayed
// request of a queue becoming ready. Neither is persisted (PROTOCOL.md: leases
// are not persisted), so they sit in their own wheel, apart from the paged
// due index.
struct MemoryTimer {
  enum class Kind { kLeaseExpiry, kReadyWake };
  Kind kind = Kind::kReadyWake;
  std::string key;  // tx_id for a lease, queue name for a wake
  uint64_t id = 0;  // the lease's id; stale timers are ignored
};

// The state a reply summarises: PROTOCOL.md's
// `<STATUS> <tx_id> <state> <attempt> <next_attempt> <next_fire_at>`.
struct Summary {
  std::string tx_id;
  storage::TxState state = storage::TxState::kNone;
  uint32_t attempt = 0;
  uint32_t next_attempt = 0;
  int64_t next_fire_at_ms = 0;
};

// The reply word of a command on one transaction.
enum class Outcome { kCreated, kExists, kOk, kBuried, kStale, kConflict, kNotFound };

// What a command on one transaction produced.
struct TxReply {
  Outcome outcome = Outcome::kNotFound;
  Summary summary;  // tx_id only when kNotFound
};

// What one transition did, for logs and metrics. Valid only during the
// listener call. A timer-driven retry's lateness is
// after.updated_at_ms - before->next_fire_at_ms.
struct TransitionNote {
  const storage::TxRecord* before = nullptr;  // nullptr when the transaction was created
  const storage::TxRecord* after = nullptr;
  std::string_view cause;
  std::string_view reason;
  std::optional<Answer> answer;  // set for a RESPOND: the answer it carried
};

// A request handed out by RESERVE.
struct HandOut {
  std::string tx_id;
  uint32_t attempt = 0;
  uint32_t handouts = 0;  // hand-outs of this request, this one included
  std::string payload;
  std::string queue;  // the queue it came from (several may be asked at once)
};

// Which dead letters a bulk REDRIVE_ALL or RESOLVE_ALL changes: those whose
// tx_id starts with tx_prefix and whose last failed delivery's reason is
// last_error; an empty field matches every letter.
struct LetterFilter {
  std::string tx_prefix;
  std::string last_error;

  bool matches(const storage::DeadLetter& letter) const;
};

// A bulk command changes at most this many transactions (its limit), and
// kBulkLimitDefault when the caller names none: one command stays one
// bounded group of batches, and an operator who wants more sends it again.
inline constexpr size_t kBulkLimitDefault = 100;
inline constexpr size_t kBulkLimitMax = 10'000;
static_assert(kBulkLimitDefault <= kBulkLimitMax);

// The most queues one RESERVE may name: enough for a dispatcher serving a
// few services, small enough that trying each costs nothing.
inline constexpr size_t kReserveQueuesMax = 16;

// Ready sequence numbers are reserved on disk (meta "ready_seq_reserved") a
// block at a time, in the batch of the transition that first needs the next
// block, so that start-up knows a number above every one in use without
// scanning the ready index. One meta write per this many ready entries.
inline constexpr uint64_t kReadySeqBlock = 1u << 20;

// A queue's ready floor (meta "ready_floor/<queue>", ReadyQueue) is raised
// on disk after this many hand-outs from it, so that a restart reads past
// the deletions of at most about this many handed-out entries before the
// first live one, however many went before (w4-index: 3.7 s after ten
// million, without it). A put below the floor lowers it in the same batch.
inline constexpr uint64_t kReadyFloorEvery = 1024;

// Reads ahead of a backlog. A burst fires its retries far ahead of their
// hand-outs, so by a RESERVE the record its fire wrote has left every cache
// and the memtables: each hand-out of a queue holding at least
// kPrefetchBacklog requests in memory reads the records of its next
// kPrefetchCount in one batch once every kPrefetchCount hand-outs
// (Store::prefetch_tx), and a chunk of at least kPrefetchFiresMin fires
// reads its records in one batch first. A W1 cycle at up to 128
// connections never holds such a backlog.
inline constexpr size_t kPrefetchBacklog = 256;
inline constexpr size_t kPrefetchCount = 64;
inline constexpr size_t kPrefetchFiresMin = 8;

// Figures for STATS and metrics, counted as the engine goes.
struct EngineStats {
  std::array<uint64_t, 6> by_state{};  // indexed by storage::TxState
  uint64_t transactions = 0;
  uint64_t ready = 0;
  uint64_t leased = 0;
  uint64_t dead_letters = 0;
  uint64_t due_in_memory = 0;
  uint64_t fired = 0;
  uint64_t stale = 0;
  uint64_t handed_out = 0;  // requests handed out by RESERVE since start
  // True until the background sweep has counted what was stored at start:
  // until then by_state, transactions, ready and dead_letters cover only
  // what changed since the start.
  bool counting = false;
  // Stale, duplicate and late messages dropped, by the command or event that
  // carried them (SENT, RESPOND, RELEASE, RESOLVE, REDRIVE, timer, ready).
  std::map<std::string, uint64_t> stale_by_kind;
};

struct Sweep;
struct Violation;
class PageBuilder;

// What start-up recovery found and did. After start_recovery() only
// due_in_memory and took_ms are known; recover() fills in the rest.
struct RecoveryReport {
  uint64_t transactions = 0;
  uint64_t ready = 0;
  uint64_t dead_letters = 0;
  uint64_t due_in_memory = 0;
  std::vector<std::string> repairs;  // one line per repaired inconsistency
  int64_t took_ms = 0;
};

// Engine owns tarde's in-memory state (ready queues, leases, timers, counts)
// and drives every transition: it decides with the pure rows of
// transitions.h, writes the new record with its index entries and its audit
// event as one storage batch, and only when that write succeeded updates its
// memory. A failed write leaves the engine as it was and returns the error.
// The store is the truth; everything in memory is rebuilt by recover().
//
// One thread owns an Engine (the server's io thread); it takes no locks and
// does no IO but through the Store. Time and chance come from the injected
// Clock and Random.
class Engine {
 public:
  struct Options {
    DueTimers::Options due;
    // Due timers handled per call of run_timers, so that a burst of fires
    // never starves connections (docs/design.md "Time": move due retries to ready
    // in bounded chunks).
    // 32: each fire reads its record and stages a transition (about 20 µs,
    // more while a burst's records are cold), and a RESERVE waiting for the
    // burst's first retry is served between two chunks. With 256, a burst
    // of 100 k first reached a waiting RESERVE 10–30 ms after its instant;
    // with 32, 3–5 ms, and it drained as fast (docs/benchmarks.md).
    size_t fires_per_turn = 32;
    // How long before its due instant a retry moves to SENDING. Its request
    // joins the ready queue with ready_at = the due instant and is handed out
    // no earlier; moving it ahead lets the change commit before then, so
    // that a waiting RESERVE gets it at the due instant instead of one
    // fsync later (docs/design.md "Time"). Other due kinds never fire early.
    int64_t retry_lead_ms = 0;
    ReadyQueue::Options ready;
  };

  Engine(storage::Store& store, Clock& clock, Random& random, Options options);
  Engine(storage::Store& store, Clock& clock, Random& random)
      : Engine(store, clock, random, Options{}) {}

  // Rebuilds all memory from the store, synchronously: start_recovery(),
  // then the invariant sweep over the store and finish_recovery(). For tools
  // and tests; the server runs the sweep in the background instead.
  [[nodiscard]] Status recover(RecoveryReport* report);

  // The part of recovery that serving needs, in time independent of the
  // store's size: format check, queue configurations, the ready sequence's
  // high-water mark and the first page of the due index (ready queues page
  // in on first use). Counts start at zero and stats().counting is true
  // until finish_recovery(). Must be called before any command; also after
  // a failed commit (memory ahead of the disk is thrown away).
  [[nodiscard]] Status start_recovery(RecoveryReport* report);

  // Completes recovery with the result of sweep_invariants() over the store
  // as it was when start_recovery() returned (a snapshot, swept on another
  // thread): adds its counts to what changed since, then re-checks each
  // violation against the store as it is now and repairs those that still
  // hold (missing entries rebuilt from their owner, orphans deleted), in one
  // batch, bringing memory in line. `repairs` gets one line per repair and
  // per record left alone. Requires: start_recovery() was the last recovery.
  [[nodiscard]] Status finish_recovery(const Sweep& sweep, std::vector<std::string>* repairs);

  // Counting starts again from now: the changes counted since
  // start_recovery() are dropped, so that finish_recovery() adds a sweep of
  // the store as it is now. For a sweep that could not start when
  // start_recovery() ran (a failed commit: the store was not writable then).
  // Requires: every write of the engine is committed, so that a snapshot
  // taken now holds exactly what was counted.
  void restart_counting();
  // The periodic reconciler's hands (engine_reconcile.cc; the walk itself
  // is engine::Reconciler's). repair() writes, in one batch, the repairs of
  // the index entries `violations` name (a missing one rebuilt from its
  // owner, an orphan deleted; a bad record is left alone), lowering a ready
  // floor first where a rebuilt request needs it, and brings memory in line;
  // `repairs` gets one line per repair. Nothing changes on a storage error.
  // Requires: the violations were found on the store as it is now.
  [[nodiscard]] Status repair(const std::vector<Violation>& violations,
                              std::vector<std::string>* repairs);
  // What memory holds of a stored transaction's entries.
  struct MemoryCheck {
    bool leased = false;  // its request is handed out
  };
  // Compares memory with a transaction whose index entries are on disk as
  // its record names them: a timer or a ready request that memory forgot
  // (paged, so never read again, yet neither held, nor firing, nor leased)
  // would wait for a restart; it is given back to memory, with a line in
  // `restored` (memory only: the disk was right). Requires: the record was
  // just read from the store and its owned entries checked.
  MemoryCheck check_memory(const storage::TxRecord& rec, std::vector<std::string>* restored);

  // Commands. Each returns the reply for a transaction, or the storage error
  // that stopped it (nothing changed then). `conn` identifies the connection
  // that holds leases.
  [[nodiscard]] Result<TxReply> enqueue(const EnqueueArgs& args);
  [[nodiscard]] Result<std::optional<HandOut>> reserve(std::string_view queue, uint64_t conn);
  [[nodiscard]] Result<TxReply> sent(std::string_view tx_id, uint32_t attempt);
  [[nodiscard]] Result<TxReply> release(uint64_t conn, std::string_view tx_id, uint32_t attempt,
                                        int64_t delay_ms, std::string_view reason);
  [[nodiscard]] Result<TxReply> respond(std::string_view tx_id, uint32_t attempt, Answer answer,
                                        std::string_view reason,
                                        std::optional<int64_t> retry_after_ms);
  [[nodiscard]] Result<TxReply> resolve(std::string_view tx_id, storage::TxState terminal,
                                        std::string_view reason);
  [[nodiscard]] Result<TxReply> redrive(std::string_view queue, std::string_view tx_id);
  // Queue administration (engine_admin.cc), for the protocol and for any
  // other front end (an HTTP API) on the engine thread.
  //
  // pause/resume set the queue's persisted `paused` flag (written even when
  // it already had that value, so that the caller's reply waits for a
  // durable state). A paused queue hands nothing out; everything else goes
  // on. resume wakes the queue's waiting RESERVEs. Storage errors come back
  // with nothing changed.
  [[nodiscard]] Status pause(std::string_view queue);
  [[nodiscard]] Status resume(std::string_view queue);
  bool paused(std::string_view queue) { return queue_state(queue).config.paused; }
  // Extends the lease `conn` holds on the request of `attempt` to the
  // queue's lease from now: kOk with the summary. kStale (nothing changes)
  // when that lease is not held by conn for that attempt; kNotFound for an
  // unknown transaction. Touches nothing on disk.
  [[nodiscard]] Result<TxReply> touch(uint64_t conn, std::string_view tx_id, uint32_t attempt);
  // RESERVE over several queues: tries queues[(start + i) % n] for i = 0..n-1
  // and hands out the first request found (HandOut::queue says from which);
  // paused queues are skipped. The caller rotates `start` for fairness.
  // Requires: queues not empty.
  [[nodiscard]] Result<std::optional<HandOut>> reserve_any(const std::vector<std::string>& queues,
                                                           uint64_t conn, size_t start);
  // Redrives (resolves to `terminal`) up to `limit` of the queue's dead
  // letters that match `filter`, in tx_id order; returns how many changed.
  // Each change is its own transition and batch (cause REDRIVE_ALL or
  // RESOLVE_ALL). On a storage error the transitions before it stay.
  // Requires: 1 <= limit <= kBulkLimitMax; terminal is terminal.
  [[nodiscard]] Result<size_t> redrive_all(std::string_view queue, const LetterFilter& filter,
                                           size_t limit);
  [[nodiscard]] Result<size_t> resolve_all(std::string_view queue, const LetterFilter& filter,
                                           storage::TxState terminal, std::string_view reason,
                                           size_t limit);
  // The transaction's payload; nullopt for an unknown transaction.
  [[nodiscard]] Result<std::optional<std::string>> get_payload(std::string_view tx_id);

  // The record as clients see it: a retry that waits_for_its_instant shows
  // that instant as next_fire_at.
  [[nodiscard]] Result<std::optional<storage::TxRecord>> get(std::string_view tx_id);
  // The transaction's events as HISTORY shows them (select_history with its
  // queue's history_max): the first and the newest, oldest first, each
  // with its sequence number and the count of events missing before it;
  // the newest `limit` of them unless limit is 0. No events for an unknown
  // transaction. Errors are the store's.
  [[nodiscard]] Status history(std::string_view tx_id, size_t limit,
                               std::vector<HistoryEntry>* events);
  [[nodiscard]] Status dead_letters(std::string_view queue, size_t limit,
                                    std::vector<storage::DeadLetter>* letters);
  // One page of a queue's transactions in one state (LIST, engine/listing.h):
  // those after `cursor` (a ListPage::next; empty: from the start), at most
  // `limit` (1..kListLimitMax), whose tx_id starts with `prefix` (any when
  // empty) and, when `reason` is not empty, whose shown_reason() equals it.
  // Items are as get() shows them. Costs a seek in one index and at most
  // kListExaminedMax entries, each with a point read of its record; never a
  // scan of the store. invalid_argument for a bad queue name, limit, prefix
  // or cursor (one from another kind of listing); storage errors as they
  // come. Reads only.
  [[nodiscard]] Result<ListPage> list(std::string_view queue, ListState state,
                                      std::string_view cursor, size_t limit,
                                      std::string_view prefix = {}, std::string_view reason = {});
  const storage::QueueConfig& config(std::string_view queue);
  [[nodiscard]] Status set_config(std::string_view queue, const storage::QueueConfig& config);
  // Whether the connection holds a lease (it is working, not idle).
  bool holds_leases(uint64_t conn) const {
    auto it = leases_by_conn_.find(conn);
    return it != leases_by_conn_.end() && it->second.first != nullptr;
  }
  // Every lease held by a connection that closed ends as a failed delivery.
  [[nodiscard]] Status connection_closed(uint64_t conn);

  // Timers: fires what is due (bounded per call), expires leases and wakes
  // queues whose delayed requests became ready. Returns true when more due
  // work is already waiting (call again soon, after serving connections);
  // a call that woke a queue fires nothing, so that the woken RESERVEs are
  // served before the next chunk of fires.
  // With fire false only the memory timers run (lease expiries, wakes):
  // the server pauses firing while too much is uncommitted, and a waiting
  // RESERVE must still be woken at its request's instant.
  [[nodiscard]] Result<bool> run_timers(bool fire = true);
  // When run_timers should next be called (wall ms), or nullopt for never;
  // with fire false, when its memory timers are next due.
  std::optional<int64_t> next_timer_ms(bool fire = true) const;

  // Called (synchronously) whenever a queue may have a request to hand out,
  // so that waiting RESERVEs can try again.
  void set_ready_listener(std::function<void(const std::string& queue)> listener) {
    ready_listener_ = std::move(listener);
  }

  // Called (synchronously) when a queue's circuit breaker changes state.
  void set_breaker_listener(
      std::function<void(const std::string& queue, Breaker::State state)> listener) {
    breaker_listener_ = std::move(listener);
  }

  // Called (synchronously) after every transition that was written.
  void set_transition_listener(std::function<void(const TransitionNote&)> listener) {
    transition_listener_ = std::move(listener);
  }

  EngineStats stats() const;
  std::vector<std::string> queue_names() const;
  // Ready, leased and dead-letter counts, transactions IN_FLIGHT and
  // SCHEDULED, hand-outs since start and breaker state of one queue.
  struct QueueFigures {
    uint64_t ready = 0;
    uint64_t leased = 0;
    uint64_t dead = 0;
    uint64_t in_flight = 0;
    uint64_t scheduled = 0;
    uint64_t handed_out = 0;  // requests RESERVE handed out since start
    int64_t oldest_ready_at_ms = 0;
    Breaker::State breaker = Breaker::State::kClosed;
    bool paused = false;
    // The background count of the start is still running: in_flight,
    // scheduled and dead hold only what changed since the start.
    bool counting = false;
  };
  QueueFigures queue_figures(std::string_view queue);
  // A request leased to a dispatcher, as the HTTP API lists it.
  struct LeaseView {
    std::string tx_id;
    std::string queue;
    uint32_t attempt = 0;
    uint64_t conn = 0;
    int64_t leased_at_ms = 0;
    int64_t expires_at_ms = 0;
  };
  // The leases held now, of one queue (all queues when empty), in no
  // particular order.
  std::vector<LeaseView> leases(std::string_view queue) const;
  // Declares the engine's figures in the registry, read from this engine
  // whenever a page is rendered (engine_figures.cc). Requires: the engine
  // outlives every rendering of `figures`.
  void declare_figures(Figures& figures);

 private:
  struct QueueState {
    QueueState(const std::string& name, ReadyQueue::Options options) : ready(name, options) {}
    storage::QueueConfig config;
    ReadyQueue ready;  // the paged head of requests not leased, in hand-out order
    // Requests owned by a transaction (leased ones included) and dead
    // letters. While counting, only what changed since the start (may be
    // negative until the sweep's counts are added).
    int64_t owned_ready = 0;
    int64_t dead = 0;
    int64_t in_flight = 0;  // transactions IN_FLIGHT, counted like owned_ready
    int64_t scheduled = 0;  // transactions SCHEDULED, counted like owned_ready
    uint64_t leased = 0;
    uint64_t handed_out = 0;  // since start, for the metrics page
    TokenBucket bucket;
    Breaker breaker;
    std::string probe_tx_id;  // the half-open breaker's probe, if out
    int64_t wake_at_ms = 0;   // a wake timer is already armed for this instant
    Breaker::State reported_breaker = Breaker::State::kClosed;  // last told to the listener
    // The ready floor on disk (none: reads start at the queue's first key),
    // the ready keys of the queue's leased requests (handed out, so not
    // covered by the ReadyQueue's floor, but still on disk) and the
    // ReadyQueue's pops() when the floor was last raised.
    std::optional<ReadyQueue::Key> floor_on_disk;
    std::set<ReadyQueue::Key> leased_keys;
    // The tx_ids of the leased requests (views of leases_' keys), in order:
    // what LIST leased pages.
    std::set<std::string_view, std::less<>> leased_ids;
    uint64_t pops_at_floor = 0;
    // The ReadyQueue's pops() up to which its records were read ahead.
    uint64_t prefetched_until_pops = 0;
  };
  struct Lease {
    uint64_t conn = 0;
    std::string queue;
    uint32_t attempt = 0;
    uint64_t id = 0;
    int64_t leased_at_ms = 0;
    int64_t expires_at_ms = 0;  // when the lease runs out (its expiry's due time)
    ReadyQueue::Key ready_key;
    TimerWheel<MemoryTimer>::Handle timer;
    std::string_view tx_id;  // its key in leases_
    // The other leases of its connection (ConnLeases), linked through the
    // leases themselves: a hand-out and its end allocate nothing for the
    // connection's bookkeeping.
    Lease* conn_prev = nullptr;
    Lease* conn_next = nullptr;
  };
  // The leases one connection holds, a list through Lease::conn_prev and
  // Lease::conn_next.
  struct ConnLeases {
    Lease* first = nullptr;
  };

  QueueState& queue_state(std::string_view queue);
  [[nodiscard]] Status raise_ready_floor(const std::string& queue_name, QueueState& queue);
  [[nodiscard]] Status lower_ready_floors(const std::vector<Violation>& repairs);
  void count_stale(std::string_view kind);
  void report_breaker(const std::string& queue, QueueState& state);
  RowContext row_context(const storage::QueueConfig& config);
  // Writes the decision taken at ctx.now_ms (unless stale or a conflict)
  // and answers with the record as of that instant.
  Result<TxReply> apply_decision(const storage::TxRecord& before, Decision decision,
                                 const char* cause, const RowContext& ctx);
  // now_ms: the instant the transition was decided at (its RowContext's),
  // which stamps the record and its audit event, so that the due times the
  // decision set from it stay exact. due_at_ms: the instant the timer that
  // caused the transition was due (0 when none), kept in its audit event.
  Status persist(int64_t now_ms, const storage::TxRecord* before, storage::TxRecord& after,
                 const char* cause, std::string_view reason,
                 std::optional<Answer> answer = std::nullopt, int64_t due_at_ms = 0);
  void apply_memory(const storage::TxRecord* before, const storage::TxRecord& after);
  void drop_lease(std::string_view tx_id);
  // Puts a new lease first in its connection's list; takes it out.
  void link_lease(Lease& lease);
  void unlink_lease(Lease& lease);
  void notify_ready(const std::string& queue, int64_t ready_at_ms);
  void arm_wake(QueueState& queue, const std::string& queue_name, int64_t wake_ms);
  int64_t fire_time_ms(const storage::DueEntry& entry) const;
  Summary summary(const storage::TxRecord& rec) const;
  // At the instant a decision was taken: a reply's next_fire_at must agree
  // with the verdict beside it (a retry still waiting for its instant).
  Summary summary(const storage::TxRecord& rec, int64_t now_ms) const;
  Status list_indexed(std::string_view queue, ListState state, std::string_view cursor,
                      std::string_view prefix, PageBuilder* page);
  Status list_ready(std::string_view queue, std::string_view cursor, std::string_view prefix,
                    PageBuilder* page);
  Status list_leased(std::string_view queue, std::string_view cursor, std::string_view prefix,
                     PageBuilder* page);
  Status fire_due(const storage::DueEntry& entry);
  Status purge(const storage::TxRecord& rec);
  Status expire_lease(const std::string& tx_id, uint64_t lease_id);
  // lease_end_ms: when the lease whose expiry ended the delivery ran out (0
  // for a RELEASE or a disconnect), kept as the event's due time.
  Status end_delivery(const std::string& tx_id, uint32_t attempt, int64_t delay_ms,
                      std::string_view reason, Result<TxReply>* reply, int64_t lease_end_ms = 0);
  Status load_ready_seq();
  Status set_paused(std::string_view queue, bool paused);
  // Up to `limit` tx_ids of the queue's dead letters that match `filter`.
  Status matching_letters(std::string_view queue, const LetterFilter& filter, size_t limit,
                          std::vector<std::string>* tx_ids);
  Result<TxReply> redrive_one(std::string_view queue, std::string_view tx_id, const char* cause);
  void apply_repairs(const std::vector<Violation>& repaired);

  storage::Store& store_;
  Clock& clock_;
  Random& random_;
  Options options_;
  DueTimers due_;
  TimerWheel<MemoryTimer> memory_timers_;
  std::map<std::string, QueueState, std::less<>> queues_;
  std::unordered_map<std::string, Lease, StringHash, std::equal_to<>> leases_;
  // A connection's entry stays, empty, from its first lease until it
  // closes: a worker holding one lease at a time would otherwise build and
  // free the entry on every hand-out.
  std::unordered_map<uint64_t, ConnLeases> leases_by_conn_;
  std::deque<storage::DueEntry> pending_fires_;
  std::function<void(const std::string&)> ready_listener_;
  std::function<void(const TransitionNote&)> transition_listener_;
  std::function<void(const std::string&, Breaker::State)> breaker_listener_;
  std::array<int64_t, 6> by_state_{};  // while counting: changes since the start
  bool counting_ = false;
  // A retry fired from the due index is being written: its batch is marked
  // replayed (storage::KvBatch::mark_replayed).
  bool firing_retry_ = false;
  uint64_t next_ready_seq_ = 1;
  uint64_t ready_seq_reserved_ = 0;  // every seq below it is covered on disk
  uint64_t next_lease_id_ = 1;
  uint64_t fired_ = 0;
  uint64_t stale_ = 0;
  uint64_t handed_out_ = 0;
  std::map<std::string, uint64_t> stale_by_kind_;
};

}  // namespace tarde::engine
