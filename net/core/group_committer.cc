#include "net/core/group_committer.h"

#include <algorithm>
#include <chrono>

#include "base/crash_point.h"
#include "base/thread_name.h"

namespace tarde::net {

GroupCommitter::GroupCommitter(asio::io_context& io, storage::StagedKv& staged,
                               storage::Kv& durable, Figures& figures, Done done,
                               ExpectsCompany expects_company)
    : io_(io),
      staged_(staged),
      durable_(durable),
      done_(std::move(done)),
      replayed_wait_{asio::steady_timer(io)},
      expects_company_(std::move(expects_company)),
      company_wait_{asio::steady_timer(io)},
      commits_(figures.counter({.name = "commits_total",
                                .kind = FigureKind::kCounter,
                                .help = "Group commits written.",
                                .stats_name = "commits"})),
      inline_commits_(figures.counter({.name = "commits_inline_total",
                                       .kind = FigureKind::kCounter,
                                       .help = "Group commits written on the io thread itself.",
                                       .stats_name = "commits_inline"})),
      waited_commits_(figures.counter(
          {.name = "commits_waited_total",
           .kind = FigureKind::kCounter,
           .help = "Group commits that waited for commands of clients not waiting for them.",
           .stats_name = "commits_waited"})),
      failed_commits_(
          figures.counter({.name = "commits_failed_total",
                           .kind = FigureKind::kCounter,
                           .help = "Group commits the store refused (disk full, I/O error).",
                           .stats_name = "commits_failed"})),
      latency_seconds_(figures.histogram(
          {.name = "commit_latency_seconds",
           .kind = FigureKind::kHistogram,
           .help = "Time to write and fsync one group commit, in seconds."},
          {0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1})),
      writes_per_commit_(figures.histogram(
          {.name = "commands_per_commit",
           .kind = FigureKind::kHistogram,
           .help = "Mutating commands and timer transitions that shared one group commit."},
          {1, 2, 4, 8, 16, 32, 64, 128, 256})) {
  worker_ = std::thread([this] {
    name_this_thread("tarde-commit");
    run_worker();
  });
}

GroupCommitter::~GroupCommitter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  worker_.join();
}

void GroupCommitter::kick() {
  if (in_flight_ || !staged_.has_open_group() || waits_for_company()) return;
  if (held_ && !to_worker()) return;  // release() writes it
  start_commit(/*post_inline=*/true);
}

void GroupCommitter::release() {
  held_ = false;
  if (in_flight_ || !staged_.has_open_group() || waits_for_company()) return;
  start_commit(/*post_inline=*/false);
}

void GroupCommitter::start_commit(bool post_inline) {
  const bool worker = to_worker();
  if (!worker && delays_for_company()) return;
  in_flight_ = true;
  if (worker) {
    hand_to_worker();
  } else if (post_inline) {
    asio::post(io_, [this] { commit_inline(); });
  } else {
    commit_inline();
  }
}

void GroupCommitter::need(uint64_t seq) {
  if (!staged_.has_open_group() || seq < staged_.open_seq()) return;
  needed_ = true;
  kick();
}

void GroupCommitter::urge() {
  if (!staged_.has_open_group()) return;
  urged_ = true;
  kick();
}

bool GroupCommitter::to_worker() const {
  return mean_writes_ > kInlineMeanWrites &&
         mean_write_us_ > static_cast<double>(tuning_.slow_commit.count());
}

bool GroupCommitter::waits(Wait& wait, std::chrono::steady_clock::duration limit) {
  const auto now = std::chrono::steady_clock::now();
  if (waiting_seq_ != staged_.open_seq()) {
    waiting_seq_ = staged_.open_seq();
    waiting_since_ = now;
  }
  const auto until = waiting_since_ + limit;
  if (now >= until) return false;
  if (!wait.armed) {
    wait.armed = true;
    wait.timer.expires_at(until);
    wait.timer.async_wait([this, &wait](const asio::error_code& ec) {
      if (ec) return;  // destroyed with the committer
      wait.armed = false;
      // Outside any pass, a group whose wait is over is written at once,
      // as at the end of one; a pass that holds the committer writes it.
      if (!held_) release();
    });
  }
  return true;
}

bool GroupCommitter::waits_for_company() {
  if (urged_ || needed_ || !staged_.open_group_replayed_only()) return false;
  return waits(replayed_wait_, tuning_.replayed_wait);
}

bool GroupCommitter::delays_for_company() {
  if (urged_ || mean_writes_ <= kDelayMeanWrites || !expects_company_ || !expects_company_())
    return false;
  const auto delay = std::chrono::microseconds(static_cast<int64_t>(2 * mean_write_us_));
  if (!waits(company_wait_, std::clamp(delay, tuning_.delay_min, tuning_.delay_max))) return false;
  if (counted_wait_seq_ != staged_.open_seq()) {
    counted_wait_seq_ = staged_.open_seq();
    waited_commits_.add();
  }
  return true;
}

GroupCommitter::Job GroupCommitter::seal() {
  urged_ = false;
  needed_ = false;
  storage::StagedKv::Group group = staged_.seal();
  // Replayed retries ride with the answers that follow them: what tells a
  // lone client from overlapping ones is the rest.
  const size_t writes = group.writes - group.replayed_writes;
  mean_writes_ += (static_cast<double>(writes) - mean_writes_) / 8;
  return Job{group.seq, std::move(group.batch), group.writes};
}

void GroupCommitter::hand_to_worker() {
  Job job = seal();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = std::move(job);
  }
  wake_.notify_one();
}

void GroupCommitter::commit_inline() {
  const Job job = seal();
  int64_t took_us = 0;
  const Status status = write_group(job, &took_us);
  if (status.is_ok()) inline_commits_.add();
  finish(job.seq, status, took_us, job.batch.size(), job.writes);
}

Status GroupCommitter::write_group(const Job& job, int64_t* took_us) {
  const auto started = std::chrono::steady_clock::now();
  TARDE_CRASH_POINT("commit.before_write");
  Status status = durable_.write(job.batch);
  if (status.is_ok()) TARDE_CRASH_POINT("commit.after_write");
  const auto took = std::chrono::steady_clock::now() - started;
  *took_us = std::chrono::duration_cast<std::chrono::microseconds>(took).count();
  return status;
}

void GroupCommitter::run_worker() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || job_.has_value(); });
      if (!job_) return;  // stopping with nothing to write
      job = std::move(*job_);
      job_.reset();
    }
    int64_t took_us = 0;
    Status status = write_group(job, &took_us);
    asio::post(io_, [this, seq = job.seq, status, took_us, ops = job.batch.size(),
                     writes = job.writes] { finish(seq, status, took_us, ops, writes); });
  }
}

void GroupCommitter::finish(uint64_t seq, const Status& status, int64_t took_us, size_t ops,
                            size_t writes) {
  in_flight_ = false;
  if (status.is_ok()) {
    mean_write_us_ += (static_cast<double>(took_us) - mean_write_us_) / 8;
    staged_.committed(seq);
    commits_.add();
    ops_committed_ += ops;
    latency_seconds_.observe(static_cast<double>(took_us) / 1e6);
    writes_per_commit_.observe(static_cast<double>(writes));
    // The next group starts its write and fsync before this group's
    // replies are sent: sending them to many connections takes as long
    // as an fsync, and the two need not wait for each other.
    kick();
    done_(seq, status);
  } else {
    failed_commits_.add();
    staged_.discard_from(seq);
    done_(seq, status);  // may stage repairs, which the next kick takes
    kick();
  }
}

}  // namespace tarde::net
