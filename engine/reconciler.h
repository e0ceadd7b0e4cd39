#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "engine/engine.h"
#include "storage/records.h"
#include "storage/store.h"

namespace tarde {
class Figures;
}

namespace tarde::engine {

// Why one transaction counts as stuck: the state it waits in and for how
// long (since its last change, since its request became ready, or since its
// timer was due), in words for the alert line.
struct Stuck {
  storage::TxState state = storage::TxState::kNone;
  int64_t age_ms = 0;
  std::string why;
};

// Judges one stored transaction: stuck, or nullopt. `leased` says whether
// its request is handed out; `overdue_after_ms` is how late a timer may be
// before it counts (Reconciler::Options). Pure.
//   IN_FLIGHT without a response timeout: stuck once its last change is
//     older than the queue's stuck_after (0 = never);
//   IN_FLIGHT with a response timeout, and SCHEDULED: stuck once the timer
//     is more than overdue_after_ms late (the timer should have settled it);
//   SENDING with a ready request, not leased, in a queue that is not
//     paused: stuck once the request has been ready longer than stuck_after.
std::optional<Stuck> judge_stuck(const storage::TxRecord& rec, const storage::QueueConfig& config,
                                 bool leased, int64_t now_ms, int64_t overdue_after_ms);

// Reconciler is the engine side of the periodic reconciler (docs/design.md
// "Reconciler"): it walks the `tx` column family in slices of bounded work,
// repairs what it can (index entries a record owns but the store lost,
// rebuilt in a committed batch; a timer or a request that memory forgot,
// given back to memory) and tracks the transactions stuck in an
// intermediate state (judge_stuck): their counts by queue and state for the
// figures, and one alert per newly stuck transaction, rate-limited.
//
// Owned by the Core's ReconcileLoop (net/core/reconcile_loop.h), which runs
// a pass every --reconcile-every, one slice per io turn; created after the
// engine and the store, which must outlive it. io thread only; no IO but through the Store. A store
// error ends the slice and comes back; the next slice resumes where the
// failed one started.
class Reconciler {
 public:
  struct Options {
    // Transactions read per slice. Each costs a record decode plus a point
    // read per index entry it owns (about 5-20 µs warm): 256 keep a slice
    // near a millisecond, so the io thread serves connections between two.
    size_t keys_per_slice = 256;
    // Steady time a slice may spend reading before it stops early (cold
    // blocks, a slow disk): a few ms at most added to a command's latency.
    int64_t slice_budget_ms = 3;
    // How late a timer (a retry, a response timeout) may be before its
    // transaction counts as stuck: firing pauses while commits lag and a
    // burst is moved in chunks, which costs seconds, never a minute.
    int64_t overdue_after_ms = 60'000;
    // Alert lines per minute; the newly stuck beyond it are counted and
    // told in one summary line when the minute is over.
    size_t alerts_per_minute = 20;
    // Stuck transactions tracked by name (about 100 bytes each), so that one
    // that moves stops counting at once and is not alerted again. Beyond
    // it, stuck transactions are counted per pass only.
    size_t tracked_max = 100'000;
  };
  // What one slice did, for the caller to log.
  struct SliceReport {
    std::vector<std::string> repairs;  // one line per repair or restore
    std::vector<std::string> alerts;   // newly stuck, then summaries
    size_t examined = 0;               // transactions read
    bool pass_done = false;            // the pass reached the end of the store
  };

  Reconciler(Engine& engine, storage::Store& store, Clock& clock, Options options);
  Reconciler(Engine& engine, storage::Store& store, Clock& clock)
      : Reconciler(engine, store, clock, Options{}) {}

  // Runs one slice of the current pass, starting a pass when none is under
  // way: at most keys_per_slice transactions after the last one examined,
  // for at most slice_budget_ms of reading. Repairs are written to the
  // store (the caller commits them like any change). On a store error the
  // slice is dropped and the error returned; the pass stays where it was.
  [[nodiscard]] Status slice(SliceReport* report);
  // Whether a pass is under way (its next slice continues it).
  bool in_pass() const { return in_pass_; }
  // A transition was written: a tracked stuck transaction that moved stops
  // counting until a later pass finds it stuck again.
  void on_transition(const TransitionNote& note);

  // Stuck transactions of one queue in one state, as the figures show them.
  uint64_t stuck(const std::string& queue, storage::TxState state) const;
  uint64_t passes() const { return passes_; }
  uint64_t examined() const { return examined_; }
  uint64_t repairs() const { return repairs_; }
  int64_t last_pass_ms() const { return last_pass_ms_; }
  uint64_t last_pass_examined() const { return last_pass_examined_; }

  // Declares reconcile_* and stuck_transactions in the registry. Requires:
  // the reconciler outlives every rendering of `figures`.
  void declare_figures(Figures& figures);

 private:
  using Group = std::pair<std::string, storage::TxState>;  // (queue, state)
  struct Tracked {
    Group group;
    int64_t updated_at_ms = 0;  // the record's, when found stuck
    uint64_t pass = 0;          // the last pass that found it stuck
  };

  [[nodiscard]] Status read_slice(std::vector<storage::TxRecord>* records, bool* at_end);
  void examine(const storage::TxRecord& rec, bool leased, SliceReport* report);
  void forget(std::unordered_map<std::string, Tracked>::iterator it);
  void alert(const storage::TxRecord& rec, const Stuck& stuck, SliceReport* report);
  void roll_alert_window(SliceReport* report);
  void finish_pass();

  Engine& engine_;
  storage::Store& store_;
  Clock& clock_;
  const Options options_;

  bool in_pass_ = false;
  std::optional<std::string> cursor_;  // the last tx key examined in this pass
  uint64_t pass_ = 0;                  // the pass under way (or the last one)
  int64_t pass_started_ms_ = 0;        // steady
  uint64_t pass_examined_ = 0;

  std::unordered_map<std::string, Tracked> tracked_;
  std::map<Group, uint64_t> tracked_counts_;
  // Stuck but not tracked (tracked_max reached): counted in the pass under
  // way, shown as counted by the last complete pass.
  std::map<Group, uint64_t> untracked_counting_;
  std::map<Group, uint64_t> untracked_shown_;

  int64_t alert_window_ms_ = 0;  // steady start of the current minute
  size_t alerts_in_window_ = 0;
  uint64_t unlogged_in_window_ = 0;

  uint64_t passes_ = 0;
  uint64_t examined_ = 0;
  uint64_t repairs_ = 0;
  int64_t last_pass_ms_ = 0;
  uint64_t last_pass_examined_ = 0;
};

}  // namespace tarde::engine
