#pragma once

#include <asio.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "base/figures.h"
#include "base/status.h"
#include "storage/kv.h"
#include "storage/staged_kv.h"

namespace tarde::net {

// GroupCommitter writes the groups staged in a StagedKv to the durable Kv,
// one group at a time. Everything staged while one commit is in flight goes
// into the next group and shares its fsync: that is the group commit.
//
// A commit usually runs on the io thread itself: handing it to a worker
// thread and back costs two thread wakeups, about 0.1 ms here, and what
// arrives while it is written is read in one pass afterwards, into the next
// group. The worker takes the groups only when commits are slow (a mean
// above Tuning::slow_commit, a slow disk) and carry many transitions (a
// mean above kInlineMeanWrites): then the io thread keeps serving reads,
// hand-outs and timers during each fsync.
//
// A group written on the io thread may wait a little for company, as
// PostgreSQL's commit_delay does, but only while it can come: while groups
// usually carry more than one transition, and some client that sent a
// command lately is not waiting for a commit (ExpectsCompany). Clients in a
// closed loop all end up waiting for the group, which then goes at once;
// clients whose commands come whatever the server does (producers at a
// rate, workers handed retries) share its fsync. The wait lasts at most
// twice the mean time of a commit, so a slow disk waits longer and a fast
// one hardly at all; urge() ends it, a reply that needs the group does not.
//
// A group that holds only replayed retries (storage::KvBatch::mark_replayed)
// is not written at once: a crash that loses it loses nothing, and their
// hand-outs do not wait for it. It waits up to kReplayedWait for a write
// that must be durable (the worker's answer, usually) and then shares that
// write's fsync; a reply that needs it (need()) or urge() ends the wait.
//
// kick() and the completion callback run on the io thread; only the durable
// write of a group handed to the worker runs there. On failure the group and
// everything staged after it are discarded from the overlay before `done` is
// called, so reads see the disk again. The committer is destroyed after the
// io thread stopped using it.
class GroupCommitter {
 public:
  // Called on the io thread after each group: its seq and the write's status.
  using Done = std::function<void(uint64_t seq, const Status& status)>;
  // How long a group of replayed retries waits for a write that must be
  // durable. Longer saves more fsyncs when little else happens; a crash
  // meanwhile only means the retries fire again.
  static constexpr std::chrono::milliseconds kReplayedWait{20};
  // What the committer's choices turn on. The defaults are the product's;
  // tests set them to reach each choice whatever the machine's pace.
  struct Tuning {
    // A group written on the io thread may wait for the commands of clients
    // that are not waiting for it (delays_for_company) for twice the mean
    // time of a commit, within these bounds.
    std::chrono::microseconds delay_min{50};
    std::chrono::microseconds delay_max{2000};
    // Commits slower than this on average (a slow disk) hand groups of many
    // transitions to the worker, so that the io thread serves during them.
    std::chrono::microseconds slow_commit{2000};
    // How long a group of replayed retries waits for a durable write.
    std::chrono::milliseconds replayed_wait = kReplayedWait;
  };
  // Whether some client that is not waiting for the open group is likely
  // to send a command that would share its fsync.
  using ExpectsCompany = std::function<bool()>;

  // Declares the commit figures in `figures`, which must outlive it.
  GroupCommitter(asio::io_context& io, storage::StagedKv& staged, storage::Kv& durable,
                 Figures& figures, Done done, ExpectsCompany expects_company = {});
  ~GroupCommitter();
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Starts a commit of the open group when none is in flight.
  void kick();
  // While held, a commit that would run on the io thread is not posted but
  // waits for release(), which writes it at once. The io thread holds the
  // committer for one pass over its ready sockets: the group then takes
  // every command of the pass and is written right after it, without the
  // scheduler turn (and its epoll_wait) that a posted commit costs.
  void hold() { held_ = true; }
  void release();
  // A reply waits for group `seq`: when that is the open group of replayed
  // retries, it is written without waiting for a durable write to join it.
  // It does not end a wait for clients' company (delays_for_company): every
  // reply of a closed loop needs the group it waits in.
  void need(uint64_t seq);
  // The open group is written without waiting for company (a shutdown, a
  // backup, firing paused on memory).
  void urge();
  // Replaces the defaults (tests).
  void set_tuning(const Tuning& tuning) { tuning_ = tuning; }
  // Nothing in flight and nothing staged.
  bool idle() const { return !in_flight_ && !staged_.has_open_group(); }
  uint64_t commits() const { return commits_.total(); }
  // Commits written on the io thread itself (a part of commits()).
  uint64_t inline_commits() const { return inline_commits_.total(); }
  // Commits that waited for company first (a part of commits()).
  uint64_t waited_commits() const { return waited_commits_.total(); }
  uint64_t ops_committed() const { return ops_committed_; }

 private:
  struct Job {
    uint64_t seq = 0;
    storage::KvBatch batch;
    size_t writes = 0;
  };
  // Groups with at most this many transitions on average (a moving mean over
  // about the last eight) are written on the io thread even when commits
  // are slow: one means no client had a command staged while another's
  // commit was in flight, and there is little to serve meanwhile.
  static constexpr double kInlineMeanWrites = 4;
  // Groups written while they carry more than this many transitions on
  // average may wait for company (delays_for_company): at or below it,
  // most commits have none to wait for.
  static constexpr double kDelayMeanWrites = 1.05;

  // The open group goes to the worker: commits are slow and groups large.
  bool to_worker() const;
  Job seal();
  // The open group holds only replayed retries and may wait longer: arms
  // the timer that ends the wait.
  bool waits_for_company();
  // The open group would be written on the io thread and groups usually
  // carry company: while expects_company_ says that some client may still
  // send, it waits, for at most the commit delay since it was first ready,
  // and arms the timer that ends the wait.
  bool delays_for_company();
  // Writes the open group unless it delays for company: on the worker, or
  // on the io thread, at once or posted behind the handlers already queued.
  void start_commit(bool post_inline);
  // A wait of the open group, and the timer that ends it.
  struct Wait {
    asio::steady_timer timer;
    bool armed = false;
  };
  // The open group waits while less than `limit` has passed since it was
  // first found ready to be written: arms `wait`'s timer, which writes it
  // then (unless something else did or still holds it). False once over.
  bool waits(Wait& wait, std::chrono::steady_clock::duration limit);
  void hand_to_worker();
  // Posted behind the handlers already queued (or left for release()), so
  // the group takes every command of the io thread's current pass before it
  // is sealed and written.
  void commit_inline();
  void run_worker();
  // Writes one group to the durable Kv and times it; any thread.
  Status write_group(const Job& job, int64_t* took_us);
  // On the io thread, once a group's write has returned.
  void finish(uint64_t seq, const Status& status, int64_t took_us, size_t ops, size_t writes);

  asio::io_context& io_;
  storage::StagedKv& staged_;
  storage::Kv& durable_;
  Done done_;
  bool in_flight_ = false;    // io thread only
  bool held_ = false;         // io thread only: see hold()
  double mean_writes_ = 1;    // io thread only: transitions per group, moving mean
  double mean_write_us_ = 0;  // io thread only: time to write a group, moving mean
  Tuning tuning_;
  // io thread only: the wait of a group of replayed retries (waits_for_company).
  Wait replayed_wait_;
  ExpectsCompany expects_company_;
  Wait company_wait_;         // io thread only: delays_for_company's wait
  bool urged_ = false;        // the open group goes without waiting
  bool needed_ = false;       // a reply waits for the open group
  uint64_t waiting_seq_ = 0;  // the open group that waits, since waiting_since_ (waits)
  std::chrono::steady_clock::time_point waiting_since_;
  Counter& commits_;
  Counter& inline_commits_;
  Counter& waited_commits_;
  uint64_t counted_wait_seq_ = 0;  // the last group counted in waited_commits_
  Counter& failed_commits_;
  uint64_t ops_committed_ = 0;
  HistogramFigure& latency_seconds_;
  HistogramFigure& writes_per_commit_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<Job> job_;  // guarded by mutex_
  bool stopping_ = false;   // guarded by mutex_
  std::thread worker_;
};

}  // namespace tarde::net
