// What keeps tarde's memory and start-up time independent of the store's
// size: ready queues paged from the `ready` index, recovery that serves
// before it has counted (the sweep's counts and repairs come later, checked
// again against the current store) and ready sequence numbers reserved on
// disk. (History trimming: tests/engine/history_test.cc.)
#include <doctest/doctest.h>

#include <set>
#include <tuple>

#include "engine/engine.h"
#include "engine/invariants.h"
#include "storage/codec.h"
#include "storage/keys.h"
#include "storage/mem_kv.h"
#include "tests/support/engine_fixture.h"

using namespace tarde;
using engine::Answer;
using storage::TxState;

namespace {

constexpr int64_t kStartMs = 1'700'000'000'000;

// An engine on a MemKv with small ready pages, so that a few entries cross
// several pages and push the head's limit.
struct Paged {
  // With recover false, the caller runs (part of) recovery itself.
  explicit Paged(storage::MemKv& kv_in, bool recover = true) : kv(kv_in) {
    options.ready.page_limit = 3;
    options.ready.memory_limit = 4;
    open(recover);
  }
  void open(bool recover = true) {
    engine.reset();
    store = std::make_unique<storage::Store>(kv);
    engine = std::make_unique<engine::Engine>(*store, clock, random, options);
    engine::RecoveryReport report;
    if (recover) REQUIRE(engine->recover(&report).is_ok());
  }
  void enqueue(const std::string& tx, std::optional<int64_t> delay_ms = std::nullopt) {
    auto args = testing::enqueue_args("q", tx);
    args.delay_ms = delay_ms;
    REQUIRE(engine->enqueue(args).value().outcome == engine::Outcome::kCreated);
  }
  std::string reserve() {
    auto got = engine->reserve("q", 1);
    REQUIRE(got.is_ok());
    return got.value() ? got.value()->tx_id : std::string();
  }
  void advance(int64_t ms) {
    clock.advance_ms(ms);
    while (engine->run_timers().value()) {
    }
  }
  storage::TxRecord tx(const std::string& id) { return *store->get_tx(id).value(); }

  storage::MemKv& kv;
  ::tarde::ManualClock clock{kStartMs};
  engine::FixedRandom random{0.5};
  engine::Engine::Options options;
  std::unique_ptr<storage::Store> store;
  std::unique_ptr<engine::Engine> engine;
};

}  // namespace

TEST_CASE(
    "a paged ready queue hands out in (ready_at, seq) order across pages, puts and restarts") {
  storage::MemKv kv;
  Paged p(kv);
  // Scheduled retries whose ready time (their due instant) is earlier than
  // requests enqueued later, so that fires land before the head.
  for (int i = 0; i < 5; ++i) p.enqueue("s" + std::to_string(i), 1 + i);
  p.clock.advance_ms(100);
  for (int i = 0; i < 7; ++i) p.enqueue("r" + std::to_string(i));
  std::set<std::tuple<int64_t, uint64_t, std::string>> model;
  auto add = [&](const std::string& id) {
    const auto rec = p.tx(id);
    model.emplace(rec.ready_at_ms, rec.ready_seq, id);
  };
  for (int i = 0; i < 7; ++i) add("r" + std::to_string(i));
  auto expect_next = [&] {
    REQUIRE(!model.empty());
    const std::string want = std::get<2>(*model.begin());
    model.erase(model.begin());
    CHECK(p.reserve() == want);
  };
  expect_next();
  expect_next();
  p.advance(0);  // the retries fire now, ready from their (earlier) due instants
  for (int i = 0; i < 5; ++i) add("s" + std::to_string(i));
  expect_next();
  p.open();  // restart: the two leases are gone, their requests ready again
  model.clear();
  for (int i = 0; i < 7; ++i) add("r" + std::to_string(i));
  for (int i = 1; i < 5; ++i) add("s" + std::to_string(i));
  add("s0");
  p.enqueue("late");
  add("late");
  while (!model.empty()) expect_next();
  CHECK(p.reserve().empty());
  CHECK(p.engine->stats().ready == 0);
  CHECK(p.engine->stats().leased == 13);
}

TEST_CASE("a leased request pushed out of the head and read again is not handed out twice") {
  storage::MemKv kv;
  Paged p(kv);
  for (int i = 0; i < 6; ++i) p.enqueue("s" + std::to_string(i), 1);
  p.clock.advance_ms(10);
  for (int i = 0; i < 5; ++i) p.enqueue("r" + std::to_string(i));
  CHECK(p.reserve() == "r0");
  CHECK(p.reserve() == "r1");
  p.advance(0);  // six fires before the head: the head overflows, r0 and r1 lie past its cursor
  std::vector<std::string> got;
  for (std::string id = p.reserve(); !id.empty(); id = p.reserve()) got.push_back(id);
  CHECK(got == std::vector<std::string>{"s0", "s1", "s2", "s3", "s4", "s5", "r2", "r3", "r4"});
  CHECK(p.engine->stats().leased == 11);
}

TEST_CASE(
    "start_recovery serves at once; finish_recovery adds the sweep's counts to the changes since") {
  storage::MemKv kv;
  {
    Paged p(kv);
    p.enqueue("a");
    p.enqueue("b", 60'000);
    p.enqueue("c");
    REQUIRE(p.engine->sent("c", 1).value().outcome == engine::Outcome::kOk);
  }
  Paged p(kv, /*recover=*/false);
  engine::RecoveryReport report;
  REQUIRE(p.engine->start_recovery(&report).is_ok());
  CHECK(p.engine->stats().counting);
  CHECK(p.engine->queue_figures("q").counting);
  engine::Sweep sweep;  // what the background sweep sees: the store at start
  REQUIRE(engine::sweep_invariants(*p.store, &sweep).is_ok());
  CHECK(p.reserve() == "a");  // serving before the counts are in
  p.enqueue("d");
  REQUIRE(p.engine->respond("c", 1, Answer::kSuccess, "", std::nullopt).is_ok());
  CHECK(p.engine->stats().transactions == 1);  // only what changed since the start
  std::vector<std::string> repairs;
  REQUIRE(p.engine->finish_recovery(sweep, &repairs).is_ok());
  CHECK(repairs.empty());
  const engine::EngineStats stats = p.engine->stats();
  CHECK_FALSE(stats.counting);
  CHECK_FALSE(p.engine->queue_figures("q").counting);
  CHECK(stats.transactions == 4);
  CHECK(stats.by_state[static_cast<size_t>(TxState::kSending)] == 2);
  CHECK(stats.by_state[static_cast<size_t>(TxState::kScheduled)] == 1);
  CHECK(stats.by_state[static_cast<size_t>(TxState::kSucceeded)] == 1);
  CHECK(stats.ready == 1);  // d; a is leased
  CHECK(stats.leased == 1);
}

TEST_CASE("the deferred sweep repairs what still needs it, judged on the current store") {
  storage::MemKv kv;
  {
    Paged p(kv);
    p.enqueue("kept", 60'000);
    p.enqueue("moved", 60'000);
    p.enqueue("ready");
  }
  // Damage: both timers vanish, the ready request vanishes, an orphan timer
  // and an orphan request appear.
  storage::KvBatch damage;
  storage::Store reader(kv);
  const auto kept = *reader.get_tx("kept").value();
  const auto ready = *reader.get_tx("ready").value();
  damage.del(storage::Cf::kDue, storage::due_key(kept.due_at_ms, "kept"));
  damage.del(storage::Cf::kDue, storage::due_key(kept.due_at_ms, "moved"));
  damage.del(storage::Cf::kReady, storage::ready_key("q", ready.ready_at_ms, ready.ready_seq));
  damage.put(storage::Cf::kDue, storage::due_key(kStartMs + 5, "ghost"),
             storage::encode_due_value({storage::DueKind::kRetry, 1}));
  damage.put(storage::Cf::kReady, storage::ready_key("q", kStartMs - 1, 999'999),
             storage::encode_ready_value({"ghost", 1}));
  REQUIRE(kv.write(damage).is_ok());

  Paged p(kv, /*recover=*/false);
  engine::RecoveryReport report;
  REQUIRE(p.engine->start_recovery(&report).is_ok());
  engine::Sweep sweep;
  REQUIRE(engine::sweep_invariants(*p.store, &sweep).is_ok());
  CHECK(sweep.violations.size() == 5);
  // Before the sweep's result arrives, "moved" is resolved: it needs no
  // retry timer any more, only its retention timer, which the batch wrote.
  REQUIRE(p.engine->resolve("moved", TxState::kFailed, "").value().outcome == engine::Outcome::kOk);
  std::vector<std::string> repairs;
  REQUIRE(p.engine->finish_recovery(sweep, &repairs).is_ok());
  INFO(repairs.size());
  CHECK(repairs.size() == 4);
  engine::Sweep after;
  REQUIRE(engine::sweep_invariants(*p.store, &after).is_ok());
  CHECK(after.violations.empty());
  CHECK(p.reserve() == "ready");  // its rebuilt request joined the pager
  p.advance(60'000);              // and the rebuilt timer the due pager
  CHECK(p.tx("kept").state == TxState::kSending);
}

TEST_CASE("ready sequence numbers are reserved on disk, so a restart never reuses one") {
  storage::MemKv kv;
  uint64_t first_seq = 0;
  {
    Paged p(kv);
    p.enqueue("a");
    first_seq = p.tx("a").ready_seq;
    auto reserved = p.store->get_ready_seq_reserved();
    REQUIRE(reserved.value().has_value());
    CHECK(*reserved.value() == first_seq + 1 + engine::kReadySeqBlock);
  }
  Paged p(kv);
  p.enqueue("b");
  CHECK(p.tx("b").ready_seq > first_seq + engine::kReadySeqBlock);

  // A store written before the reservation existed: the largest seq in use
  // is found by a scan.
  storage::KvBatch forget;
  forget.del(storage::Cf::kMeta, std::string(storage::kMetaReadySeqKey));
  REQUIRE(kv.write(forget).is_ok());
  p.open();
  p.enqueue("c");
  CHECK(p.tx("c").ready_seq == p.tx("b").ready_seq + 1);
}
