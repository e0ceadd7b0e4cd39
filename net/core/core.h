#pragma once

#include <asio.hpp>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "base/figures.h"
#include "base/status.h"
#include "base/system_clock.h"
#include "engine/engine.h"
#include "engine/random.h"
#include "net/core/background_sweep.h"
#include "net/core/backup_runner.h"
#include "net/core/commit_waiter_list.h"
#include "net/core/group_committer.h"
#include "net/core/reconcile_loop.h"
#include "net/core/transition_log.h"
#include "net/core/waiters.h"
#include "storage/rocks_kv.h"
#include "storage/staged_kv.h"
#include "storage/store.h"
#include "storage/store_open.h"

namespace tarde::net {

// What the Core needs to open a data directory.
struct CoreOptions {
  std::string data_dir;
  bool sync = true;  // fsync every group commit
  int64_t retry_lead_ms = 10;
  // Where BACKUP puts its backups; empty: BACKUP is refused.
  std::string backup_dir;
  uint64_t backup_rate_limit_bytes_per_s = 0;  // 0: unlimited
  // A reconciler pass starts this long after the previous one ended; 0: off.
  int64_t reconcile_every_ms = 60'000;
  // The most due entries the engine holds in memory (DueTimers::Options).
  size_t due_memory_entries = engine::DueTimers::Options{}.memory_limit;
  // Time every commit's RocksDB write by its parts (storage/write_profile.h)
  // and show the sums in STATS and on the metrics page.
  bool profile_writes = false;
  // RocksDB's flushes and compactions at the lowest CPU priority
  // (storage::RocksKv::Options::background_yields).
  bool background_yields = false;
};

// Core is what `tarde serve` and the embedded engine share: it opens a data
// directory (storage::open_for_serving), recovers the engine, and drives it
// on one asio io_context: the group committer, the engine's timer (with the
// pause while too much is uncommitted), the background invariant sweep and
// its repairs, the periodic reconciler, the reload after a failed commit,
// and RESERVEs parked until their queue has work. It knows nothing of connections or the protocol.
//
// Owned by the Server or the embedded engine; created, opened, used and
// destroyed on the io thread (the thread running the io_context), which must
// outlive it. Errors come back as Status; none throws.
class Core {
 public:
  // `figures` must outlive the Core: the committer, the engine and the
  // sweep declare their figures in it.
  Core(asio::io_context& io, Figures& figures);
  ~Core();
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  // Opens the store, starts recovery and the background sweep. Errors name
  // what failed; open_problem() says why a data directory was refused.
  [[nodiscard]] Status open(const CoreOptions& options);
  storage::OpenProblem open_problem() const { return open_problem_; }

  engine::Engine& engine() { return *engine_; }
  Clock& clock() { return clock_; }
  // The staged commit the last command read (after reset_observed()), and
  // the last one that is durable.
  void reset_observed() { staged_->reset_observed(); }
  uint64_t observed_seq() const { return staged_->observed_seq(); }
  // What a hand-out's reply waits for (storage::StagedKv::hand_out_seq).
  uint64_t hand_out_seq() const { return staged_->hand_out_seq(); }
  uint64_t committed_seq() const { return staged_->committed_seq(); }

  // After commands ran: commit what they staged, re-arm the timer, then call
  // the after-commands hook.
  void after_commands();
  // Tells `waiter` of the next commit; its reply waits for group `dep`.
  void wait_for_commit(const std::shared_ptr<CommitWaiter>& waiter, uint64_t dep);
  void forget_commit_waiter(CommitWaiter* waiter) { commit_waiters_.remove(waiter); }
  // How many clients sent a command lately (the server's sessions). With
  // it, a commit written on the io thread may wait a little for the
  // commands of those not waiting for it (see GroupCommitter); without
  // it (the embedded engine, `--commit-wait off`), commits never wait.
  void set_active_clients(std::function<size_t()> count) { active_clients_ = std::move(count); }
  // Hands `waiter` the queue's next request when it has one.
  void park(const std::shared_ptr<ReserveWaiter>& waiter, const std::string& queue);
  // Stops firing timers for good (a shutdown), and abandons a backup under way.
  void stop_timers();
  // Whether a backup directory is configured.
  bool backups_enabled() const { return backups_ != nullptr; }
  // Makes a backup on the backup worker once every group staged so far is
  // committed, so that it holds every change made before the call, not only
  // every acknowledged one; `done` follows on the io thread. busy while one
  // runs or waits to start; shutting_down once stopping; invalid_argument
  // without a backup directory.
  [[nodiscard]] Status start_backup(BackupRunner::Done done);
  // Nothing staged and nothing being committed.
  bool idle() const { return committer_->idle(); }
  // Around one pass of the io thread over its ready sockets: a commit that
  // would run on the io thread waits for the end of the pass and runs there
  // (GroupCommitter::hold). Nothing happens before open() succeeded.
  void hold_commits() {
    if (committer_) committer_->hold();
  }
  void release_commits() {
    if (committer_) committer_->release();
  }
  // Called at the end of after_commands() and of every commit: the server
  // sends the replies they released, and finishes its shutdown there.
  void set_after_commands_hook(std::function<void()> hook) { hook_ = std::move(hook); }
  // Also tells `observer` of every transition written, after the transition
  // log (the HTTP API's per-second figures). Set after open().
  void set_transition_observer(std::function<void(const engine::TransitionNote&)> observer) {
    transition_observer_ = std::move(observer);
  }

 private:
  void on_commit(uint64_t seq, const Status& status);
  void on_sweep_done(const Status& status, engine::Sweep sweep, int64_t took_ms);
  void start_recount_when_idle();
  void arm_timer();
  void on_timer();
  void signal_ready(const std::string& queue);
  void serve_parked();
  void start_waiting_backup();
  void run_hook() {
    if (hook_) hook_();
  }

  asio::io_context& io_;
  Figures& figures_;
  asio::steady_timer timer_;  // the engine's next timer
  std::optional<int64_t> timer_at_ms_;
  SystemClock clock_;
  engine::SeededRandom random_;
  std::string data_dir_;
  storage::OpenProblem open_problem_ = storage::OpenProblem::kNone;
  std::atomic<bool> store_open_{false};  // read by RocksDB's threads through the log sink

  std::unique_ptr<storage::RocksKv> durable_;
  std::unique_ptr<storage::StagedKv> staged_;
  std::unique_ptr<storage::Store> store_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<GroupCommitter> committer_;
  std::function<size_t()> active_clients_;
  std::unique_ptr<BackgroundSweep> sweep_;
  std::unique_ptr<BackupRunner> backups_;  // set when a backup directory is configured
  // A BACKUP waiting for the groups staged before it: the last one's seq.
  uint64_t backup_after_seq_ = 0;
  std::optional<BackupRunner::Done> backup_waiting_;
  std::unique_ptr<ReconcileLoop> reconcile_;
  TransitionLog transition_log_;

  std::map<std::string, std::deque<std::weak_ptr<ReserveWaiter>>> parked_;
  CommitWaiterList commit_waiters_;
  std::set<std::string> signaled_;
  std::function<void()> hook_;
  std::function<void(const engine::TransitionNote&)> transition_observer_;
  bool serve_posted_ = false;
  bool timers_after_commit_ = false;  // firing paused until the next commit
  bool stopping_ = false;
  uint64_t failed_commits_in_a_row_ = 0;  // one error line per storage fault episode
  bool recount_pending_ = false;          // writes work again; the sweep waits for an idle moment
};

}  // namespace tarde::net
