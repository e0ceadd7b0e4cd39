// The failure table of the deferred-retry pattern, row by row, in tarde's terms: "the process
// stopped between these two steps, and the message is delivered again". In
// tarde a transition is one atomic batch, so a stop leaves either all of it or
// none of it; a stop is simulated by dropping the engine's memory and
// recovering from the store (reopen), a write that never landed by a store
// that refuses writes. Each row must end in the same final state with exactly
// one retry scheduled and handed out, never two.
#include <doctest/doctest.h>

#include <set>

#include "engine/engine.h"
#include "storage/mem_kv.h"
#include "tests/support/engine_fixture.h"

using namespace tarde;
using engine::Answer;
using engine::Outcome;
using storage::TxState;

namespace {

constexpr int64_t kHourMs = 3600 * 1000;

struct Flow {
  storage::MemKv kv;
  testing::EngineFixture f{kv};
  std::vector<std::string> keys_handed_out;

  Flow() {
    REQUIRE(f.engine->enqueue(testing::enqueue_args("pagos", "TX-100200")).is_ok());
    take_and_send(1);
  }
  std::optional<engine::HandOut> take() {
    auto got = f.engine->reserve("pagos", 1);
    REQUIRE(got.is_ok());
    if (got.value()) {
      keys_handed_out.push_back(got.value()->tx_id + "#" + std::to_string(got.value()->attempt));
    }
    return got.value();
  }
  void take_and_send(uint32_t attempt) {
    auto got = take();
    REQUIRE(got.has_value());
    REQUIRE(got->attempt == attempt);
    REQUIRE(f.engine->sent("TX-100200", attempt).value().outcome == Outcome::kOk);
  }
  Outcome cancelled(uint32_t attempt) {
    auto reply = f.engine->respond("TX-100200", attempt, Answer::kCancelled, "", std::nullopt);
    REQUIRE(reply.is_ok());
    return reply.value().outcome;
  }
  void advance(int64_t ms) {
    f.clock.advance_ms(ms);
    while (f.engine->run_timers().value()) {
    }
  }
  size_t due_entries() {
    size_t n = 0;
    REQUIRE(f.store
                ->scan_due(nullptr, INT64_MAX,
                           [&](const storage::DueEntry& e) {
                             n += e.kind == storage::DueKind::kRetry ? 1 : 0;
                             return true;
                           })
                .is_ok());
    return n;
  }
  // The retry fires, is handed out and succeeds: the common ending.
  void finish() {
    advance(3 * kHourMs);
    take_and_send(2);
    REQUIRE(f.engine->respond("TX-100200", 2, Answer::kSuccess, "", std::nullopt).is_ok());
    CHECK(f.tx("TX-100200").state == TxState::kSucceeded);
    CHECK(keys_handed_out == std::vector<std::string>{"TX-100200#1", "TX-100200#2"});
  }
};

}  // namespace

TEST_CASE("stopped before the CANCELLED was recorded: redelivery schedules one retry") {
  Flow flow;
  flow.kv.fail_writes_for_test(true);
  auto refused = flow.f.engine->respond("TX-100200", 1, Answer::kCancelled, "", std::nullopt);
  CHECK_FALSE(refused.is_ok());
  CHECK(flow.f.tx("TX-100200").state == TxState::kInFlight);  // nothing half-applied
  flow.kv.fail_writes_for_test(false);
  flow.f.reopen();
  CHECK(flow.cancelled(1) == Outcome::kOk);
  CHECK(flow.due_entries() == 1);
  flow.finish();
}

TEST_CASE(
    "stopped after the retry was recorded, before the answer was acknowledged: the redelivered "
    "answer is STALE and the instant is not drawn again") {
  Flow flow;
  CHECK(flow.cancelled(1) == Outcome::kOk);
  const int64_t fire_at = flow.f.tx("TX-100200").next_fire_at_ms;
  flow.f.reopen();
  flow.f.random.set(0.0);
  CHECK(flow.cancelled(1) == Outcome::kStale);
  CHECK(flow.f.tx("TX-100200").next_fire_at_ms == fire_at);
  CHECK(flow.due_entries() == 1);
  flow.finish();
}

TEST_CASE("the timer comes due while the process is down: it fires once after restart") {
  Flow flow;
  CHECK(flow.cancelled(1) == Outcome::kOk);
  flow.f.clock.advance_ms(5 * kHourMs);  // down past the instant
  flow.f.reopen();
  flow.advance(0);
  CHECK(flow.f.tx("TX-100200").state == TxState::kSending);
  CHECK(flow.due_entries() == 0);
  flow.f.reopen();  // and again: the fire is not repeated
  flow.advance(0);
  CHECK(flow.f.tx("TX-100200").state == TxState::kSending);
  flow.take_and_send(2);
  CHECK_FALSE(flow.take().has_value());
}

TEST_CASE("the fire could not be recorded: the retry stays SCHEDULED and fires once later") {
  Flow flow;
  CHECK(flow.cancelled(1) == Outcome::kOk);
  flow.kv.fail_writes_for_test(true);
  flow.f.clock.advance_ms(3 * kHourMs);
  CHECK_FALSE(flow.f.engine->run_timers().is_ok());
  CHECK(flow.f.tx("TX-100200").state == TxState::kScheduled);
  flow.kv.fail_writes_for_test(false);
  flow.f.reopen();
  flow.advance(0);
  CHECK(flow.f.tx("TX-100200").state == TxState::kSending);
  flow.take_and_send(2);
  CHECK_FALSE(flow.take().has_value());
}

TEST_CASE("the fire is delivered twice: the second finds SENDING and changes nothing") {
  Flow flow;
  CHECK(flow.cancelled(1) == Outcome::kOk);
  const auto rec = flow.f.tx("TX-100200");
  engine::RowContext ctx{rec.next_fire_at_ms, &flow.f.engine->config("pagos"), &flow.f.random, 99};
  flow.advance(3 * kHourMs);
  const auto after_fire = flow.f.tx("TX-100200");
  CHECK(after_fire.state == TxState::kSending);
  // The same timer event again, against the stored record, is stale.
  const auto again = engine::on_retry_due(after_fire, rec.next_attempt, rec.next_fire_at_ms, ctx);
  CHECK(again.verdict == engine::Verdict::kStale);
  flow.take_and_send(2);
  CHECK_FALSE(flow.take().has_value());
}

TEST_CASE(
    "stopped after SENDING was recorded, before the request was taken: it is ready after restart") {
  Flow flow;
  CHECK(flow.cancelled(1) == Outcome::kOk);
  flow.advance(3 * kHourMs);
  flow.f.reopen();
  flow.take_and_send(2);
  CHECK(flow.keys_handed_out.back() == "TX-100200#2");
}

TEST_CASE("the dispatcher published but stopped before SENT: the same key is handed out again") {
  Flow flow;
  CHECK(flow.cancelled(1) == Outcome::kOk);
  flow.advance(3 * kHourMs);
  auto first = flow.take();
  REQUIRE(first.has_value());
  flow.f.reopen();  // tarde restarts too: leases are not persisted
  auto again = flow.take();
  REQUIRE(again.has_value());
  CHECK(again->attempt == first->attempt);
  CHECK(flow.keys_handed_out ==
        std::vector<std::string>{"TX-100200#1", "TX-100200#2", "TX-100200#2"});
  REQUIRE(flow.f.engine->sent("TX-100200", 2).value().outcome == Outcome::kOk);
}

TEST_CASE("an answer of an earlier attempt arrives late: the state is untouched") {
  Flow flow;
  CHECK(flow.cancelled(1) == Outcome::kOk);
  flow.advance(3 * kHourMs);
  flow.take_and_send(2);
  const auto before = flow.f.dump();
  auto late = flow.f.engine->respond("TX-100200", 1, Answer::kSuccess, "", std::nullopt);
  CHECK(late.value().outcome == Outcome::kStale);
  CHECK(flow.f.dump() == before);
}

TEST_CASE("attempts run out: FAILED with reason EXHAUSTED, no retry left") {
  Flow flow;
  for (uint32_t attempt = 1; attempt < 4; ++attempt) {
    CHECK(flow.cancelled(attempt) == Outcome::kOk);
    flow.advance(30 * kHourMs);
    flow.take_and_send(attempt + 1);
  }
  CHECK(flow.cancelled(4) == Outcome::kOk);
  CHECK(flow.f.tx("TX-100200").state == TxState::kFailed);
  CHECK(flow.f.tx("TX-100200").reason == "EXHAUSTED");
  CHECK(flow.due_entries() == 0);
  CHECK(flow.keys_handed_out.size() == 4);
}

TEST_CASE("a burst of cancellations loses and duplicates no retry") {
  storage::MemKv kv;
  testing::EngineFixture f{kv};
  f.random.set(0.25);
  constexpr int kCount = 2000;
  for (int i = 0; i < kCount; ++i) {
    REQUIRE(f.engine->enqueue(testing::enqueue_args("pagos", "TX-" + std::to_string(i))).is_ok());
  }
  for (int i = 0; i < kCount; ++i) {
    auto got = f.engine->reserve("pagos", 1);
    REQUIRE(got.value().has_value());
    REQUIRE(f.engine->respond(got.value()->tx_id, 1, Answer::kCancelled, "", std::nullopt).is_ok());
  }
  f.reopen();
  f.clock.advance_ms(3 * kHourMs);
  while (f.engine->run_timers().value()) {
  }
  std::set<std::string> seen;
  while (auto got = f.engine->reserve("pagos", 2).value()) {
    CHECK(got->attempt == 2);
    CHECK(seen.insert(got->tx_id).second);
  }
  CHECK(seen.size() == kCount);
}
