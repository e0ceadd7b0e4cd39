#include "net/core/group_committer.h"

#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <string>

#include "storage/rocks_kv.h"
#include "storage/staged_kv.h"
#include "tests/support/temp_dir.h"

namespace tarde::net {
namespace {

using storage::Cf;

// A committer over a real RocksDB store, driven by hand from the test's
// thread, which plays the io thread.
struct CommitterRig {
  testing::TempDir dir;
  asio::io_context io;
  std::unique_ptr<storage::RocksKv> durable;
  std::unique_ptr<storage::StagedKv> staged;
  Figures figures;
  std::unique_ptr<GroupCommitter> committer;
  uint64_t last_done_seq = 0;
  int next_key = 0;
  // What the committer is told of the clients not waiting for the open
  // group (GroupCommitter::ExpectsCompany).
  bool company = false;

  CommitterRig() {
    auto opened = storage::RocksKv::open(dir.sub("db"), storage::RocksKv::Options{});
    REQUIRE(opened.is_ok());
    durable = std::move(opened).value();
    staged = std::make_unique<storage::StagedKv>(*durable);
    committer = std::make_unique<GroupCommitter>(
        io, *staged, *durable, figures,
        [this](uint64_t seq, const Status& status) {
          REQUIRE(status.is_ok());
          last_done_seq = seq;
        },
        [this] { return company; });
  }

  // Stages one write() of one key, replayed (a fired retry) or not.
  void stage(const std::string& key, bool replayed) {
    storage::KvBatch batch;
    batch.put(Cf::kTx, key, "v");
    if (replayed) batch.mark_replayed();
    REQUIRE(staged->write(batch).is_ok());
  }

  // Runs the io context until group `seq` is done, for at most 10 s.
  void run_until_done(uint64_t seq) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (last_done_seq < seq && std::chrono::steady_clock::now() < deadline) {
      io.restart();
      io.run_one_for(std::chrono::milliseconds(10));
    }
    REQUIRE(last_done_seq == seq);
    io.restart();  // run_one_for() leaves a context out of work stopped
  }

  bool durable_has(const std::string& key) {
    auto value = durable->get(Cf::kTx, key);
    REQUIRE(value.is_ok());
    return value.value().has_value();
  }

  // Stages one group of `transitions` write() calls, commits it and waits
  // for its completion on this thread.
  void commit_group(int transitions) {
    for (int i = 0; i < transitions; ++i) {
      storage::KvBatch batch;
      batch.put(Cf::kTx, "k" + std::to_string(next_key++), "v");
      REQUIRE(staged->write(batch).is_ok());
    }
    committer->kick();
    run_until_done(staged->last_staged_seq());
  }
};

TEST_CASE("a lone writer's groups are committed on the io thread, and are durable") {
  CommitterRig rig;
  for (int i = 0; i < 5; ++i) rig.commit_group(1);
  CHECK(rig.committer->commits() == 5);
  CHECK(rig.committer->inline_commits() == 5);
  CHECK(rig.committer->idle());
  for (int key = 0; key < 5; ++key) {
    auto value = rig.durable->get(Cf::kTx, "k" + std::to_string(key));
    REQUIRE(value.is_ok());
    CHECK(value.value() == std::optional<std::string>("v"));
  }
}

// Commits slower than this go to the commit thread: every one, in the
// tests that need the thread.
constexpr GroupCommitter::Tuning kSlowDisk{.slow_commit = std::chrono::microseconds(0)};

TEST_CASE("groups of many transitions go to the commit thread, and single ones come back") {
  CommitterRig rig;
  rig.committer->set_tuning(kSlowDisk);
  // The mean starts at one transition: the first group is written inline,
  // and its forty transitions move the mean past the limit.
  for (int i = 0; i < 8; ++i) rig.commit_group(40);
  CHECK(rig.committer->commits() == 8);
  CHECK(rig.committer->inline_commits() == 1);

  // Single-transition groups bring the mean back down, after which every
  // group is written inline again.
  for (int i = 0; i < 30; ++i) rig.commit_group(1);
  const uint64_t inline_before = rig.committer->inline_commits();
  CHECK(inline_before > 1);
  CHECK(inline_before < 1 + 30);  // the first single groups still went to the thread
  for (int i = 0; i < 5; ++i) rig.commit_group(1);
  CHECK(rig.committer->inline_commits() == inline_before + 5);
  CHECK(rig.committer->commits() == 8 + 30 + 5);
  auto value = rig.durable->get(Cf::kTx, "k" + std::to_string(rig.next_key - 1));
  REQUIRE(value.is_ok());
  CHECK(value.value().has_value());
}

TEST_CASE("a held committer writes an inline group at release, without the io thread's loop") {
  CommitterRig rig;
  rig.committer->hold();
  for (int i = 0; i < 3; ++i) {
    storage::KvBatch batch;
    batch.put(Cf::kTx, "held" + std::to_string(i), "v");
    REQUIRE(rig.staged->write(batch).is_ok());
    rig.committer->kick();  // the first starts the commit; the others join its group
  }
  // Nothing was posted: the io context has no handler to run.
  CHECK(rig.io.poll() == 0);
  CHECK(rig.committer->commits() == 0);
  CHECK(!rig.committer->idle());

  rig.committer->release();
  CHECK(rig.committer->commits() == 1);
  CHECK(rig.committer->inline_commits() == 1);
  CHECK(rig.last_done_seq == rig.staged->last_staged_seq());
  CHECK(rig.committer->idle());
  for (int i = 0; i < 3; ++i) {
    auto value = rig.durable->get(Cf::kTx, "held" + std::to_string(i));
    REQUIRE(value.is_ok());
    CHECK(value.value() == std::optional<std::string>("v"));
  }

  // Released with nothing due, it writes nothing; unheld, a kick posts again.
  rig.committer->hold();
  rig.committer->release();
  CHECK(rig.committer->commits() == 1);
  rig.commit_group(1);
  CHECK(rig.committer->commits() == 2);
  CHECK(rig.committer->inline_commits() == 2);
}

TEST_CASE("while commits are fast, groups of many transitions are written on the io thread") {
  CommitterRig rig;
  rig.committer->set_tuning({.slow_commit = std::chrono::hours(1)});
  for (int i = 0; i < 8; ++i) rig.commit_group(40);
  CHECK(rig.committer->commits() == 8);
  CHECK(rig.committer->inline_commits() == 8);
}

TEST_CASE("a held committer still hands large groups to its thread at once") {
  CommitterRig rig;
  rig.committer->set_tuning(kSlowDisk);
  for (int i = 0; i < 8; ++i) rig.commit_group(10);  // the mean is past the inline limit now
  const uint64_t inline_before = rig.committer->inline_commits();
  rig.committer->hold();
  rig.commit_group(10);  // completes through the io context while still held
  rig.committer->release();
  CHECK(rig.committer->inline_commits() == inline_before);
  CHECK(rig.committer->commits() == 9);
}

// Replayed groups wait an hour in the tests that check they wait: a loaded
// machine (the sanitizers) may otherwise take longer than kReplayedWait
// between a kick and the next poll, and the wait ends by itself.
constexpr GroupCommitter::Tuning kLongReplayedWait{.replayed_wait = std::chrono::hours(1)};

TEST_CASE("a group of replayed retries waits and shares the commit of the next write") {
  CommitterRig rig;
  rig.committer->set_tuning(kLongReplayedWait);
  rig.stage("fired", /*replayed=*/true);
  rig.committer->kick();
  CHECK(rig.io.poll() == 0);  // nothing posted: the group waits for company
  CHECK(rig.committer->commits() == 0);
  CHECK_FALSE(rig.committer->idle());

  rig.stage("answer", /*replayed=*/false);
  rig.committer->kick();
  rig.run_until_done(rig.staged->last_staged_seq());
  CHECK(rig.committer->commits() == 1);
  CHECK(rig.durable_has("fired"));
  CHECK(rig.durable_has("answer"));
  CHECK(rig.committer->idle());
}

TEST_CASE("a reply that needs the waiting group, or urge(), writes it at once") {
  CommitterRig rig;
  rig.committer->set_tuning(kLongReplayedWait);
  rig.commit_group(1);  // group 1, durable
  rig.stage("fired", /*replayed=*/true);
  const uint64_t seq = rig.staged->last_staged_seq();
  rig.committer->kick();
  rig.committer->need(seq - 1);  // an older group: no reason to write this one
  CHECK(rig.io.poll() == 0);
  CHECK(rig.committer->commits() == 1);
  rig.committer->need(seq);
  rig.run_until_done(seq);
  CHECK(rig.committer->commits() == 2);
  CHECK(rig.durable_has("fired"));

  rig.stage("fired again", /*replayed=*/true);
  rig.committer->kick();
  CHECK(rig.io.poll() == 0);
  rig.committer->urge();
  rig.run_until_done(rig.staged->last_staged_seq());
  CHECK(rig.committer->commits() == 3);
  CHECK(rig.durable_has("fired again"));
  rig.committer->urge();  // nothing staged: nothing to write
  CHECK(rig.committer->idle());
}

TEST_CASE("a group of replayed retries alone is written once its wait is over") {
  CommitterRig rig;
  rig.committer->hold();
  const auto started = std::chrono::steady_clock::now();
  rig.stage("fired", /*replayed=*/true);
  rig.committer->kick();
  rig.committer->release();  // the end of a pass does not write it either
  CHECK(rig.committer->commits() == 0);
  rig.run_until_done(rig.staged->last_staged_seq());
  CHECK(std::chrono::steady_clock::now() - started >= GroupCommitter::kReplayedWait);
  CHECK(rig.committer->commits() == 1);
  CHECK(rig.committer->inline_commits() == 1);
  CHECK(rig.durable_has("fired"));
}

// The wait for company in these tests lasts an hour unless a test says
// otherwise: what ends it is then the test's doing, never the machine's pace.
constexpr std::chrono::microseconds kLongDelay = std::chrono::hours(1);

TEST_CASE("an inline group waits for the clients that are not waiting for it") {
  CommitterRig rig;
  rig.committer->set_tuning({.delay_min = kLongDelay, .delay_max = kLongDelay});
  rig.commit_group(2);  // groups now carry company on average
  rig.company = true;
  rig.committer->hold();
  rig.stage("first", /*replayed=*/false);
  rig.committer->kick();
  rig.committer->need(rig.staged->last_staged_seq());  // its reply waits: not a reason to go
  rig.committer->release();
  CHECK(rig.io.poll() == 0);
  CHECK(rig.committer->commits() == 1);  // neither the end of the pass nor need() wrote it
  CHECK(rig.committer->waited_commits() == 1);

  // The next pass brings the last free client's command: now every client
  // waits for the group, which is written at the end of that pass.
  rig.committer->hold();
  rig.stage("second", /*replayed=*/false);
  rig.committer->kick();
  rig.company = false;
  rig.committer->release();
  CHECK(rig.committer->commits() == 2);
  CHECK(rig.committer->waited_commits() == 1);  // one group, counted once
  CHECK(rig.last_done_seq == rig.staged->last_staged_seq());
  CHECK(rig.durable_has("first"));
  CHECK(rig.durable_has("second"));
}

TEST_CASE("a group that waits for company is written once the delay is over") {
  CommitterRig rig;
  constexpr std::chrono::milliseconds kDelay{30};
  rig.committer->set_tuning({.delay_min = kDelay, .delay_max = kDelay});
  rig.commit_group(2);
  rig.company = true;
  const auto started = std::chrono::steady_clock::now();
  rig.stage("alone", /*replayed=*/false);
  rig.committer->kick();
  rig.run_until_done(rig.staged->last_staged_seq());
  CHECK(std::chrono::steady_clock::now() - started >= kDelay);
  CHECK(rig.committer->commits() == 2);
  CHECK(rig.committer->inline_commits() == 2);
  CHECK(rig.durable_has("alone"));
}

TEST_CASE("urge() ends the wait for company") {
  CommitterRig rig;
  rig.committer->set_tuning({.delay_min = kLongDelay, .delay_max = kLongDelay});
  rig.commit_group(2);
  rig.company = true;
  rig.stage("urged", /*replayed=*/false);
  rig.committer->kick();
  CHECK(rig.io.poll() == 0);
  rig.committer->urge();  // a shutdown, a backup: no waiting
  CHECK(rig.io.poll() == 1);
  CHECK(rig.committer->commits() == 2);
  CHECK(rig.durable_has("urged"));
}

TEST_CASE("a lone writer's group does not wait for company that seldom comes") {
  CommitterRig rig;
  rig.committer->set_tuning({.delay_min = kLongDelay, .delay_max = kLongDelay});
  rig.company = true;
  rig.stage("lone", /*replayed=*/false);
  rig.committer->kick();
  CHECK(rig.io.poll() == 1);  // the commit was posted at once
  CHECK(rig.committer->commits() == 1);
  CHECK(rig.committer->waited_commits() == 0);
  CHECK(rig.durable_has("lone"));
}

}  // namespace
}  // namespace tarde::net
