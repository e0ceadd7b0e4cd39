// Engine::Options::retry_lead_ms: a due retry becomes SENDING ahead of its
// instant (so the change can commit in time) but is handed out no earlier;
// the other due kinds keep their instant.
#include <doctest/doctest.h>

#include <algorithm>

#include "engine/engine.h"
#include "storage/mem_kv.h"
#include "storage/staged_kv.h"
#include "tests/support/engine_fixture.h"

using namespace tarde;
using engine::Answer;
using storage::TxState;
using testing::enqueue_args;

namespace {

constexpr int64_t kLeadMs = 10;

engine::Engine::Options with_lead(int64_t lead_ms) {
  engine::Engine::Options options;
  options.retry_lead_ms = lead_ms;
  return options;
}

struct Rig {
  storage::MemKv kv;
  testing::EngineFixture f{kv, 1'700'000'000'000, with_lead(kLeadMs)};

  // Runs every timer due now, as the server's loop does: again while it
  // says there is more, or while its next wake is not in the future.
  void run_timers() {
    for (int turn = 0; turn < 100; ++turn) {
      auto more = f.engine->run_timers();
      REQUIRE(more.is_ok());
      const std::optional<int64_t> next = f.engine->next_timer_ms();
      if (!more.value() && (!next || *next > f.clock.now_wall_ms())) return;
    }
    FAIL("timers still due after 100 turns");
  }
  std::optional<engine::HandOut> reserve() {
    auto got = f.engine->reserve("pagos", 1);
    REQUIRE(got.is_ok());
    return got.value();
  }
  // Enqueues t1, hands it out and answers CANCELLED with a 1 s wait: its
  // retry is due at the returned instant.
  int64_t schedule_retry() {
    REQUIRE(f.engine->enqueue(enqueue_args("pagos", "t1")).is_ok());
    auto got = reserve();
    REQUIRE(got.has_value());
    auto reply = f.engine->respond("t1", 1, Answer::kCancelled, "", int64_t{1000});
    REQUIRE(reply.is_ok());
    REQUIRE(f.tx("t1").state == TxState::kScheduled);
    return f.tx("t1").next_fire_at_ms;
  }
  // schedule_retry(), then time runs to retry_lead_ms before the instant:
  // t1 is SENDING, its request queued for the returned instant.
  int64_t move_retry_ahead() {
    const int64_t due_ms = schedule_retry();
    f.clock.set_wall_ms(due_ms - kLeadMs);
    run_timers();
    REQUIRE(f.tx("t1").state == TxState::kSending);
    return due_ms;
  }
};

}  // namespace

TEST_CASE("a retry moves to SENDING retry_lead_ms early and is handed out at its instant") {
  Rig rig;
  const int64_t due_ms = rig.schedule_retry();
  CHECK(rig.f.engine->next_timer_ms() <= due_ms - kLeadMs);  // a wake may come early

  rig.f.clock.set_wall_ms(due_ms - kLeadMs - 1);
  rig.run_timers();
  CHECK(rig.f.tx("t1").state == TxState::kScheduled);

  rig.f.clock.set_wall_ms(due_ms - kLeadMs);
  rig.run_timers();
  const storage::TxRecord moved = rig.f.tx("t1");
  CHECK(moved.state == TxState::kSending);
  CHECK(moved.next_attempt == 2);
  CHECK(moved.ready_at_ms == due_ms);  // ready from the announced instant

  // Before the instant the request stays in the queue, and a wake is armed
  // for the instant itself.
  rig.f.clock.set_wall_ms(due_ms - 1);
  CHECK_FALSE(rig.reserve().has_value());
  CHECK(rig.f.engine->next_timer_ms() <= due_ms);

  rig.f.clock.set_wall_ms(due_ms);
  rig.f.woken.clear();
  rig.run_timers();
  CHECK(std::count(rig.f.woken.begin(), rig.f.woken.end(), "pagos") >= 1);
  auto got = rig.reserve();
  REQUIRE(got.has_value());
  CHECK(got->tx_id == "t1");
  CHECK(got->attempt == 2);
}

TEST_CASE("retry_lead_ms 0 moves a retry at its instant") {
  storage::MemKv kv;
  testing::EngineFixture f{kv, 1'700'000'000'000, with_lead(0)};
  REQUIRE(f.engine->enqueue(enqueue_args("pagos", "t1")).is_ok());
  REQUIRE(f.engine->reserve("pagos", 1).is_ok());
  REQUIRE(f.engine->respond("t1", 1, Answer::kCancelled, "", int64_t{1000}).is_ok());
  const int64_t due_ms = f.tx("t1").next_fire_at_ms;
  CHECK(f.engine->next_timer_ms() <= due_ms);
  f.clock.set_wall_ms(due_ms - 1);
  REQUIRE(f.engine->run_timers().is_ok());
  CHECK(f.tx("t1").state == TxState::kScheduled);
  f.clock.set_wall_ms(due_ms);
  REQUIRE(f.engine->run_timers().is_ok());
  CHECK(f.tx("t1").state == TxState::kSending);
}

TEST_CASE("a response timeout keeps its instant, and retries behind it still go early") {
  Rig rig;
  storage::QueueConfig config = rig.f.engine->config("pagos");
  config.response_timeout_ms = 5000;
  REQUIRE(rig.f.engine->set_config("pagos", config).is_ok());
  const int64_t start_ms = rig.f.clock.now_wall_ms();
  // t0 is in flight: its response timeout is due at start + 5 s.
  REQUIRE(rig.f.engine->enqueue(enqueue_args("pagos", "t0")).is_ok());
  REQUIRE(rig.reserve().has_value());
  REQUIRE(rig.f.engine->sent("t0", 1).is_ok());
  const int64_t timeout_ms = start_ms + 5000;
  // t1's retry is due 2 ms after that timeout.
  rig.f.clock.set_wall_ms(start_ms + 1002);
  REQUIRE(rig.f.engine->enqueue(enqueue_args("pagos", "t1")).is_ok());
  REQUIRE(rig.reserve().has_value());
  REQUIRE(rig.f.engine->respond("t1", 1, Answer::kCancelled, "", int64_t{4000}).is_ok());
  const int64_t retry_ms = rig.f.tx("t1").next_fire_at_ms;
  REQUIRE(retry_ms == timeout_ms + 2);

  rig.f.clock.set_wall_ms(timeout_ms - kLeadMs);
  rig.run_timers();
  CHECK(rig.f.tx("t0").state == TxState::kInFlight);
  CHECK(rig.f.tx("t1").state == TxState::kScheduled);  // behind the timeout
  CHECK(rig.f.engine->next_timer_ms() == timeout_ms);  // the held timeout's own instant

  rig.f.clock.set_wall_ms(timeout_ms - 1);
  rig.run_timers();
  CHECK(rig.f.tx("t0").state == TxState::kInFlight);

  rig.f.clock.set_wall_ms(timeout_ms);
  rig.run_timers();
  CHECK(rig.f.tx("t0").state == TxState::kScheduled);  // silence counts as TRANSIENT
  CHECK(rig.f.tx("t1").state == TxState::kSending);    // 2 ms before its instant
  CHECK(rig.f.tx("t1").ready_at_ms == retry_ms);
}

TEST_CASE("before its instant a retry moved ahead answers like the SCHEDULED retry it was") {
  Rig rig;
  const int64_t due_ms = rig.move_retry_ahead();

  // A late SENT or answer of attempt 2's predecessor cannot be for a request
  // that is not out yet.
  rig.f.clock.set_wall_ms(due_ms - 1);
  auto sent = rig.f.engine->sent("t1", 2);
  REQUIRE(sent.is_ok());
  CHECK(sent.value().outcome == engine::Outcome::kStale);
  auto answer = rig.f.engine->respond("t1", 2, Answer::kSuccess, "", std::nullopt);
  REQUIRE(answer.is_ok());
  CHECK(answer.value().outcome == engine::Outcome::kStale);
  CHECK(rig.f.tx("t1").state == TxState::kSending);

  SUBCASE("RESOLVE still ends it, and its request goes with it") {
    auto resolved = rig.f.engine->resolve("t1", TxState::kSucceeded, "");
    REQUIRE(resolved.is_ok());
    CHECK(resolved.value().outcome == engine::Outcome::kOk);
    CHECK(rig.f.tx("t1").state == TxState::kSucceeded);
    rig.f.clock.set_wall_ms(due_ms);
    rig.run_timers();
    CHECK_FALSE(rig.reserve().has_value());
  }
  SUBCASE("from its instant on it is an ordinary request") {
    rig.f.clock.set_wall_ms(due_ms);
    auto late = rig.f.engine->respond("t1", 2, Answer::kSuccess, "", std::nullopt);
    REQUIRE(late.is_ok());
    CHECK(late.value().outcome == engine::Outcome::kOk);
    CHECK(rig.f.tx("t1").state == TxState::kSucceeded);
  }
}

TEST_CASE("run_timers(false) wakes waiting queues but fires nothing") {
  Rig rig;
  const int64_t due_ms = rig.move_retry_ahead();
  CHECK_FALSE(rig.reserve().has_value());  // arms the wake for due_ms
  REQUIRE(rig.f.engine->enqueue(enqueue_args("pagos", "t2")).is_ok());
  REQUIRE(rig.reserve().has_value());
  REQUIRE(rig.f.engine->respond("t2", 1, Answer::kCancelled, "", int64_t{0}).is_ok());
  REQUIRE(rig.f.tx("t2").state == TxState::kScheduled);  // due now

  rig.f.clock.set_wall_ms(due_ms);
  rig.f.woken.clear();
  auto more = rig.f.engine->run_timers(/*fire=*/false);
  REQUIRE(more.is_ok());
  CHECK_FALSE(more.value());
  CHECK(std::count(rig.f.woken.begin(), rig.f.woken.end(), "pagos") >= 1);
  CHECK(rig.f.tx("t2").state == TxState::kScheduled);
  CHECK(rig.f.engine->next_timer_ms(/*fire=*/false) != rig.f.engine->next_timer_ms());
  auto got = rig.reserve();
  REQUIRE(got.has_value());
  CHECK(got->tx_id == "t1");

  rig.run_timers();
  CHECK(rig.f.tx("t2").state == TxState::kSending);
}

namespace {

// A wall clock that moves one millisecond each time it is read, so that any
// two reads inside one command disagree.
class TickingClock final : public ::tarde::Clock {
 public:
  explicit TickingClock(int64_t wall_ms) : wall_ms_(wall_ms) {}
  int64_t now_wall_ms() const override { return wall_ms_++; }
  int64_t now_steady_ms() const override { return wall_ms_; }

 private:
  mutable int64_t wall_ms_;
};

}  // namespace

TEST_CASE("a STALE answer before the instant shows that instant, even as the clock moves") {
  // The crash harness caught a RESPOND that arrived in the very millisecond
  // a request moved ahead became ready: STALE (decided just before) beside
  // next_fire_at 0 (summarised just after). The reply must be taken at the
  // instant of its decision.
  for (int64_t delay_ms = 50; delay_ms <= 60; ++delay_ms) {
    CAPTURE(delay_ms);
    storage::MemKv kv;
    storage::Store store(kv);
    TickingClock clock(1'700'000'000'000);
    engine::FixedRandom random(0.5);
    engine::Engine engine(store, clock, random, with_lead(kLeadMs));
    engine::RecoveryReport report;
    REQUIRE(engine.recover(&report).is_ok());
    engine::EnqueueArgs args = enqueue_args("q", "t");
    args.delay_ms = delay_ms;
    REQUIRE(engine.enqueue(args).is_ok());
    for (int turn = 0; turn < 200 && store.get_tx("t").value()->state != TxState::kSending;
         ++turn) {
      REQUIRE(engine.run_timers().is_ok());
    }
    REQUIRE(store.get_tx("t").value()->state == TxState::kSending);  // ahead of its instant
    for (int call = 0; call < 20; ++call) {
      auto answer = engine.respond("t", 1, Answer::kSuccess, "", std::nullopt);
      REQUIRE(answer.is_ok());
      if (answer.value().outcome != engine::Outcome::kStale) break;
      const engine::Summary& shown = answer.value().summary;
      CHECK(shown.state == TxState::kSending);
      CHECK(shown.next_fire_at_ms != 0);  // it says what it waits for
    }
    CHECK(store.get_tx("t").value()->state == TxState::kSucceeded);
  }
}

TEST_CASE("a fired retry is written as a replayed batch; an expired lease is not") {
  // Over the group-commit overlay, as in the server: its open group says
  // whether every write in it was replayed.
  storage::MemKv base;
  storage::StagedKv staged(base);
  testing::EngineFixture f{staged, 1'700'000'000'000, with_lead(kLeadMs)};
  auto run_timers = [&] {
    auto more = f.engine->run_timers();
    REQUIRE(more.is_ok());
  };
  REQUIRE(f.engine->enqueue(enqueue_args("pagos", "t1")).is_ok());
  auto got = f.engine->reserve("pagos", 1);
  REQUIRE(got.is_ok());
  REQUIRE(got.value().has_value());
  REQUIRE(f.engine->respond("t1", 1, Answer::kCancelled, "", int64_t{1000}).is_ok());
  CHECK_FALSE(staged.open_group_replayed_only());
  staged.seal();

  f.clock.set_wall_ms(f.tx("t1").next_fire_at_ms);
  run_timers();
  REQUIRE(f.tx("t1").state == TxState::kSending);
  CHECK(staged.open_group_replayed_only());
  staged.seal();

  got = f.engine->reserve("pagos", 1);
  REQUIRE(got.is_ok());
  REQUIRE(got.value().has_value());
  CHECK_FALSE(staged.has_open_group());  // a hand-out writes nothing
  f.clock.set_wall_ms(f.clock.now_wall_ms() + storage::QueueConfig{}.lease_ms);
  run_timers();
  CHECK(staged.has_open_group());
  CHECK_FALSE(staged.open_group_replayed_only());  // the lease was memory only
}

TEST_CASE("a burst due at one instant arms one wake, which goes before the next chunk of fires") {
  Rig rig;
  const size_t burst = engine::Engine::Options{}.fires_per_turn + 8;
  for (size_t i = 0; i < burst; ++i) {
    engine::EnqueueArgs args = enqueue_args("pagos", "t" + std::to_string(i));
    args.delay_ms = 1000;
    REQUIRE(rig.f.engine->enqueue(args).is_ok());
  }
  const int64_t due_ms = rig.f.tx("t0").next_fire_at_ms;
  CHECK_FALSE(rig.reserve().has_value());  // a worker waits for the burst

  // One chunk moves ahead; the last 8 are still to fire at the instant.
  rig.f.clock.set_wall_ms(due_ms - kLeadMs);
  auto more = rig.f.engine->run_timers();
  REQUIRE(more.is_ok());
  CHECK(more.value());
  CHECK(rig.f.tx("t0").state == TxState::kSending);
  const std::string last = "t" + std::to_string(burst - 1);
  CHECK(rig.f.tx(last).state == TxState::kScheduled);

  // At the instant the call that wakes the queue fires nothing: the woken
  // RESERVE is served first. Its chunk's requests armed one wake between them.
  rig.f.clock.set_wall_ms(due_ms);
  rig.f.woken.clear();
  more = rig.f.engine->run_timers();
  REQUIRE(more.is_ok());
  CHECK(more.value());
  CHECK(std::count(rig.f.woken.begin(), rig.f.woken.end(), "pagos") == 1);
  CHECK(rig.f.tx(last).state == TxState::kScheduled);
  auto got = rig.reserve();
  REQUIRE(got.has_value());
  CHECK(got->tx_id == "t0");

  rig.run_timers();
  CHECK(rig.f.tx(last).state == TxState::kSending);
}
