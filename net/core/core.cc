#include "net/core/core.h"

#include <sched.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "base/crash_point.h"
#include "base/log_record.h"

namespace tarde::net {
namespace {

// Fired retries live in the overlay (memory) until their group commits. A
// burst of due retries fires faster than the disk commits, so above this
// many uncommitted keys (about 3,000 fires, a few MB) firing waits for the
// next commit: memory stays flat however many retries fall due at once.
constexpr size_t kTimerStagedKeysMax = 16384;

// An upgrade of a big store logs its progress about every this many
// transactions filed or keys deleted (some seconds apart), so that a long
// start is seen to move.
constexpr uint64_t kUpgradeLogEvery = 1'000'000;

// Brings a store of an older format to this build's (Store::ensure_format),
// on the durable store itself: through the overlay, every key the upgrade
// writes would wait in memory. Logs the progress and, at the end, the
// figures.
Status upgrade_format(storage::Kv& durable, const std::string& dir, Clock& clock) {
  storage::Store store(durable);
  const int64_t started_ms = clock.now_steady_ms();
  uint64_t logged = 0;
  storage::FormatUpgrade upgrade;
  TARDE_RETURN_IF_ERROR(store.ensure_format(&upgrade, [&](const storage::FormatUpgrade& so_far) {
    // A store without a state index has it built; a later one has its
    // SENDING keys deleted (Store::ensure_format).
    const bool filing = !storage::keeps_state_index(so_far.from_version);
    const uint64_t done = filing ? so_far.indexed : so_far.unfiled;
    if (logged == 0) {
      spdlog::info(
          "upgrading {} from format version {} to {}: {}", dir, so_far.from_version,
          storage::kFormatVersion,
          filing ? "building the state index" : "deleting the state keys of SENDING transactions");
    }
    if (logged != 0 && done - logged < kUpgradeLogEvery) return;
    logged = done;
    spdlog::info("upgrading {}: {} {}", dir, done,
                 filing ? "transactions indexed" : "SENDING keys deleted");
  }));
  if (upgrade.from_version == 0) return Status::ok();
  spdlog::info(
      "upgraded {} from format version {} to {}: {} transactions indexed, {} SENDING keys "
      "unfiled in {} ms",
      dir, upgrade.from_version, storage::kFormatVersion, upgrade.indexed, upgrade.unfiled,
      clock.now_steady_ms() - started_ms);
  return Status::ok();
}

}  // namespace

Core::Core(asio::io_context& io, Figures& figures)
    : io_(io),
      figures_(figures),
      timer_(io),
      random_(static_cast<uint64_t>(clock_.now_steady_ms()) ^ 0x7461726465ULL),
      transition_log_(figures) {}

Core::~Core() {
  backups_.reset();    // abandons a backup in progress; it reads the store
  reconcile_.reset();  // reads the store and the engine
  sweep_.reset();      // cancels a sweep in progress; it reads the store
  committer_.reset();  // finishes the commit in flight, if any
  engine_.reset();
  store_.reset();
  staged_.reset();
  if (durable_) {
    Status status = durable_->close();
    if (!status.is_ok()) {
      spdlog::error(LogRecord("store.close_failed").text("error", status.to_string()).line());
    }
  }
}

Status Core::open(const CoreOptions& options) {
  data_dir_ = options.data_dir;
  storage::RocksKv::Options kv_options;
  kv_options.sync = options.sync;
  kv_options.profile_writes = options.profile_writes;
  kv_options.background_yields = options.background_yields;
  // Muted until the store is open: a refused start logs its one line only.
  kv_options.log_sink = [this](const std::string& line) {
    if (store_open_) spdlog::warn(LogRecord("rocksdb").text("msg", line).line());
  };
  storage::OpenedStore opened = storage::open_for_serving(options.data_dir, kv_options);
  open_problem_ = opened.problem;
  if (!opened.status.is_ok()) return opened.status;
  if (!opened.warning.empty()) {
    spdlog::warn(LogRecord("store.warning").text("msg", opened.warning).line());
  }
  durable_ = std::move(opened.kv);
  store_open_ = true;
  TARDE_RETURN_IF_ERROR(upgrade_format(*durable_, options.data_dir, clock_));
  staged_ = std::make_unique<storage::StagedKv>(*durable_);
  store_ = std::make_unique<storage::Store>(*staged_);
  engine::Engine::Options engine_options;
  engine_options.retry_lead_ms = options.retry_lead_ms;
  engine_options.due.memory_limit = options.due_memory_entries;
  engine_ = std::make_unique<engine::Engine>(*store_, clock_, random_, engine_options);
  engine::RecoveryReport report;
  TARDE_RETURN_IF_ERROR(engine_->start_recovery(&report));
  committer_ = std::make_unique<GroupCommitter>(
      io_, *staged_, *durable_, figures_,
      [this](uint64_t seq, const Status& s) { on_commit(seq, s); },
      [this] { return active_clients_ && active_clients_() > commit_waiters_.size(); });
  // Counting and the invariant sweep run on a snapshot in the background;
  // their repairs are committed like any other change.
  sweep_ = std::make_unique<BackgroundSweep>(
      io_, *durable_, [this](const Status& status, engine::Sweep sweep, int64_t took_ms) {
        on_sweep_done(status, std::move(sweep), took_ms);
      });
  sweep_->start();
  if (!options.backup_dir.empty()) {
    backups_ = std::make_unique<BackupRunner>(
        io_, *durable_,
        storage::BackupMaker::Options{
            .backup_dir = options.backup_dir,
            .rate_limit_bytes_per_s = options.backup_rate_limit_bytes_per_s});
  }
  figures_.sampled({.name = "sweep_running",
                    .help = "1 while the background count and invariant sweep runs.",
                    .stats_name = "sweep_running"},
                   [this](FigureSamples& out) { out.total(sweep_->running() ? 1 : 0); });
  figures_.sampled(
      {.name = "sweep_scanned",
       .help = "Records and index entries the background sweep has visited.",
       .stats_name = "sweep_scanned"},
      [this](FigureSamples& out) { out.total(static_cast<double>(sweep_->scanned())); });
  engine_->declare_figures(figures_);
  if (const storage::WriteProfile* profile = durable_->write_profile()) {
    profile->declare_figures(figures_);
  }
  spdlog::info(LogRecord("recovered")
                   .text("data", options.data_dir)
                   .number("took_ms", report.took_ms)
                   .number("due_in_memory", report.due_in_memory)
                   .text("msg", "counting and checking invariants in the background")
                   .line());
  engine_->set_ready_listener([this](const std::string& queue) { signal_ready(queue); });
  engine_->set_breaker_listener([](const std::string& queue, engine::Breaker::State state) {
    if (state == engine::Breaker::State::kOpen) {
      spdlog::warn(LogRecord("alert.breaker_open")
                       .text("queue", queue)
                       .text("msg", "most answers were TRANSIENT")
                       .line());
    } else {
      spdlog::info(
          LogRecord("breaker")
              .text("queue", queue)
              .text("state", state == engine::Breaker::State::kHalfOpen ? "half_open" : "closed")
              .line());
    }
  });
  // The periodic reconciler waits for the start-up sweep, and for writes
  // to work again after a failed commit; its repairs commit like commands.
  reconcile_ = std::make_unique<ReconcileLoop>(
      io_, *engine_, *store_, clock_,
      [this] { return !sweep_->running() && failed_commits_in_a_row_ == 0; },
      [this] { after_commands(); });
  reconcile_->reconciler().declare_figures(figures_);
  reconcile_->start(options.reconcile_every_ms);
  engine_->set_transition_listener([this](const engine::TransitionNote& note) {
    transition_log_.on_transition(note);
    reconcile_->reconciler().on_transition(note);
    if (transition_observer_) transition_observer_(note);
  });
  return Status::ok();
}

void Core::after_commands() {
  committer_->kick();
  arm_timer();
  run_hook();
}

void Core::wait_for_commit(const std::shared_ptr<CommitWaiter>& waiter, uint64_t dep) {
  commit_waiters_.add(waiter);
  committer_->need(dep);
}

void Core::stop_timers() {
  stopping_ = true;
  if (committer_) committer_->urge();  // the shutdown waits for what is staged
  if (reconcile_) reconcile_->stop();
  timer_.cancel();  // and arm_timer arms no more while stopping
  if (backups_) backups_->stop();
  backup_waiting_.reset();
}

Status Core::start_backup(BackupRunner::Done done) {
  if (!backups_) return Status::invalid_argument("no backup directory is configured");
  if (stopping_) return Status::shutting_down("the server is stopping");
  if (backups_->running() || backup_waiting_) return Status::busy("a backup is already running");
  backup_after_seq_ = staged_->last_staged_seq();
  backup_waiting_ = std::move(done);
  committer_->urge();
  start_waiting_backup();
  return Status::ok();
}

// Starts the waiting backup once the groups staged before it are committed,
// or dropped (a failed commit drops them; nothing is then in flight).
void Core::start_waiting_backup() {
  if (!backup_waiting_) return;
  if (staged_->committed_seq() < backup_after_seq_ && !committer_->idle()) return;
  BackupRunner::Done done = std::move(*backup_waiting_);
  backup_waiting_.reset();
  Status started = backups_->start(done);
  if (!started.is_ok()) done(started);
}

void Core::on_commit(uint64_t seq, const Status& status) {
  if (!status.is_ok()) {
    // The group and everything staged after it were dropped: memory goes
    // back to what the disk holds. The store retries the write path with the
    // next commit, so writes resume by themselves once the fault is gone.
    failed_commits_in_a_row_ += 1;
    if (failed_commits_in_a_row_ == 1) {
      spdlog::error(LogRecord("commit.failed")
                        .number("group", seq)
                        .text("error", status.to_string())
                        .text("msg",
                              "storage refused a write: its commands answer ERR INTERNAL, "
                              "reads go on, writes are retried with each new command")
                        .line());
    } else {
      spdlog::debug(LogRecord("commit.failed_again")
                        .number("group", seq)
                        .text("error", status.to_string())
                        .line());
    }
    engine::RecoveryReport report;
    Status reloaded = engine_->start_recovery(&report);
    if (!reloaded.is_ok())
      spdlog::error(LogRecord("commit.reload_failed").text("error", reloaded.to_string()).line());
    // The reload restarted the counts; the sweep that completes them starts
    // once writes work again (a reopen of the store drops its snapshot).
    sweep_->stop();
    recount_pending_ = false;
  } else if (failed_commits_in_a_row_ > 0) {
    spdlog::warn(LogRecord("commit.resumed")
                     .number("failed_commits", failed_commits_in_a_row_)
                     .text("msg", "storage accepts writes again")
                     .line());
    failed_commits_in_a_row_ = 0;
    recount_pending_ = true;
  }
  if (timers_after_commit_ && !stopping_) {
    timers_after_commit_ = false;
    asio::post(io_, [this] { on_timer(); });
  }
  start_waiting_backup();
  commit_waiters_.notify(seq, status.is_ok());
  start_recount_when_idle();
  run_hook();
}

// The counts restarted by the reload after a failed commit are completed by
// a sweep of a snapshot, which must hold exactly the changes not counted
// since: so it starts once nothing is staged or being committed, and the
// counting starts again at that instant. (Started at once, its snapshot held
// the changes committed since the reload, which were already counted: every
// transaction created while the disk refused writes, or in the group that
// succeeded first, counted twice in STATS until the next restart.)
void Core::start_recount_when_idle() {
  if (!recount_pending_ || !committer_->idle()) return;
  recount_pending_ = false;
  engine_->restart_counting();
  sweep_->start();
}

// The background sweep ended: the engine adds its counts and repairs what
// still needs it (the repairs go out with the next commit).
void Core::on_sweep_done(const Status& status, engine::Sweep sweep, int64_t took_ms) {
  if (!status.is_ok()) {
    spdlog::error(LogRecord("sweep.failed")
                      .number("took_ms", took_ms)
                      .text("error", status.to_string())
                      .text("msg", "counts stay partial")
                      .line());
    return;
  }
  std::vector<std::string> repairs;
  Status finished = engine_->finish_recovery(sweep, &repairs);
  for (const std::string& repair : repairs) {
    spdlog::warn(LogRecord("sweep.repair").text("msg", repair).line());
  }
  if (!finished.is_ok()) {
    spdlog::error(LogRecord("sweep.apply_failed").text("error", finished.to_string()).line());
    return;
  }
  uint64_t ready = 0;
  uint64_t dead = 0;
  for (const auto& [queue, counts] : sweep.queues) {
    ready += counts.ready;
    dead += counts.dead;
  }
  spdlog::info(LogRecord("sweep.done")
                   .number("took_ms", took_ms)
                   .number("scanned", sweep_->scanned())
                   .number("transactions", sweep.transactions)
                   .number("ready", ready)
                   .number("dead_letters", dead)
                   .number("violations", sweep.violations.size())
                   .number("repairs", repairs.size())
                   .line());
  after_commands();
}

void Core::arm_timer() {
  if (stopping_) return;
  const std::optional<int64_t> next = engine_->next_timer_ms(!timers_after_commit_);
  if (!next) return;
  if (timer_at_ms_ && *timer_at_ms_ <= *next) return;  // already armed early enough
  timer_at_ms_ = *next;
  // To the microsecond: a whole-millisecond delay from a rounded-down now
  // would wake up to a millisecond late, and that is a retry's lateness.
  const int64_t delay_us = std::max<int64_t>(0, *next * 1000 - clock_.now_wall_us());
  timer_.expires_after(std::chrono::microseconds(delay_us));
  timer_.async_wait([this](const asio::error_code& ec) {
    if (ec == asio::error::operation_aborted) return;
    on_timer();
  });
}

// Firing pauses while too much is uncommitted (on_commit resumes it); the
// memory timers, wakes of waiting RESERVEs among them, run regardless.
void Core::on_timer() {
  timer_at_ms_.reset();
  if (stopping_) return;
  const bool fire = staged_->overlay_size() <= kTimerStagedKeysMax;
  timers_after_commit_ = !fire;
  if (!fire) committer_->urge();  // the commit that lets firing go on
  staged_->reset_observed();      // what each fire reads is what it depends on
  auto more = engine_->run_timers(fire);
  TARDE_CRASH_POINT("timer.after_fire");
  if (!more.is_ok()) {
    spdlog::error(LogRecord("timers.failed").text("error", more.status().to_string()).line());
  } else if (more.value()) {
    // A burst keeps this thread busy for as long as it fires. A process it
    // woke meanwhile (a worker on this machine, handed a request) may have
    // been queued on this CPU, where it would wait for a scheduler slice,
    // milliseconds; yielding between chunks lets it run. Costs one syscall
    // per chunk.
    sched_yield();
    asio::post(io_, [this] { on_timer(); });  // more due: after serving connections
  }
  after_commands();
}

void Core::park(const std::shared_ptr<ReserveWaiter>& waiter, const std::string& queue) {
  auto& line = parked_[queue];
  // Drop waiters that stopped waiting (timed out, answered, closed), so
  // that a queue that never gets work does not collect them forever.
  std::erase_if(line, [&](const std::weak_ptr<ReserveWaiter>& weak) {
    auto parked = weak.lock();
    return !parked || !parked->waits_on(queue);
  });
  line.push_back(waiter);
}

void Core::signal_ready(const std::string& queue) {
  if (parked_.find(queue) == parked_.end()) return;
  signaled_.insert(queue);
  if (serve_posted_) return;
  serve_posted_ = true;
  asio::post(io_, [this] { serve_parked(); });
}

// Hands ready requests to parked RESERVEs, oldest first, until a queue has
// nothing left to give.
void Core::serve_parked() {
  serve_posted_ = false;
  std::set<std::string> queues = std::move(signaled_);
  signaled_.clear();
  for (const std::string& queue : queues) {
    auto it = parked_.find(queue);
    if (it == parked_.end()) continue;
    auto& line = it->second;
    while (!line.empty()) {
      auto waiter = line.front().lock();
      if (!waiter || !waiter->waits_on(queue)) {
        line.pop_front();
        continue;
      }
      staged_->reset_observed();
      if (!waiter->try_take(queue)) break;
      line.pop_front();
      waiter->deliver();
    }
    if (line.empty()) parked_.erase(it);
  }
  after_commands();
}

}  // namespace tarde::net
