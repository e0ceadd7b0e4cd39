// The Engine's queue administration (engine_admin.cc) on a MemKv and a
// ManualClock: pause and resume, TOUCH moving the lease's expiry, RESERVE over
// several queues, bulk redrive and resolve, payload reads, and their storage
// failures.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "storage/mem_kv.h"
#include "tests/support/engine_fixture.h"

using namespace tarde;
using engine::Outcome;
using storage::TxState;
using testing::enqueue_args;

namespace {

struct Rig {
  storage::MemKv kv;
  testing::EngineFixture f{kv};

  void enqueue(const std::string& queue, const std::string& tx_id) {
    auto reply = f.engine->enqueue(enqueue_args(queue, tx_id, "body-" + tx_id));
    REQUIRE(reply.is_ok());
    REQUIRE(reply.value().outcome == Outcome::kCreated);
  }
  std::optional<engine::HandOut> reserve(const std::string& queue, uint64_t conn = 1) {
    auto got = f.engine->reserve(queue, conn);
    REQUIRE(got.is_ok());
    return got.value();
  }
  void advance(int64_t ms) {
    f.clock.advance_ms(ms);
    for (;;) {
      auto more = f.engine->run_timers();
      REQUIRE(more.is_ok());
      if (!more.value()) break;
    }
  }
  // Buries tx_id: max_deliveries 1 on its queue, one hand-out released.
  void bury(const std::string& queue, const std::string& tx_id, const std::string& reason) {
    storage::QueueConfig config = f.engine->config(queue);
    config.max_deliveries = 1;
    REQUIRE(f.engine->set_config(queue, config).is_ok());
    enqueue(queue, tx_id);
    auto got = reserve(queue, 9);
    REQUIRE(got.has_value());
    REQUIRE(got->tx_id == tx_id);
    auto released = f.engine->release(9, tx_id, 1, 0, reason);
    REQUIRE(released.is_ok());
    REQUIRE(released.value().outcome == Outcome::kBuried);
  }
};

TEST_CASE("a paused queue hands nothing out; timers still fire into it; resume wakes it") {
  Rig rig;
  rig.enqueue("pagos", "TX-1");
  auto delayed = enqueue_args("pagos", "TX-2");
  delayed.delay_ms = 1000;
  REQUIRE(rig.f.engine->enqueue(delayed).is_ok());
  REQUIRE(rig.f.engine->pause("pagos").is_ok());
  CHECK(rig.f.engine->paused("pagos"));
  CHECK_FALSE(rig.reserve("pagos").has_value());
  rig.advance(1000);
  CHECK(rig.f.tx("TX-2").state == TxState::kSending);
  CHECK(rig.f.engine->queue_figures("pagos").ready == 2);
  CHECK(rig.f.engine->queue_figures("pagos").paused);
  rig.f.woken.clear();
  REQUIRE(rig.f.engine->resume("pagos").is_ok());
  CHECK(std::count(rig.f.woken.begin(), rig.f.woken.end(), "pagos") == 1);
  CHECK(rig.reserve("pagos")->tx_id == "TX-1");

  // Persisted: a restart keeps it paused.
  REQUIRE(rig.f.engine->pause("pagos").is_ok());
  rig.f.reopen();
  CHECK(rig.f.engine->paused("pagos"));
  CHECK_FALSE(rig.reserve("pagos").has_value());
}

TEST_CASE("a pause that cannot be written changes nothing") {
  Rig rig;
  rig.enqueue("pagos", "TX-1");
  rig.kv.fail_writes_for_test(true);
  CHECK_FALSE(rig.f.engine->pause("pagos").is_ok());
  rig.kv.fail_writes_for_test(false);
  CHECK_FALSE(rig.f.engine->paused("pagos"));
  CHECK(rig.reserve("pagos").has_value());
}

TEST_CASE("TOUCH moves the lease's expiry to the queue's lease from now") {
  Rig rig;
  rig.enqueue("pagos", "TX-1");
  REQUIRE(rig.reserve("pagos", 1).has_value());
  rig.advance(20'000);
  auto touched = rig.f.engine->touch(1, "TX-1", 1);
  REQUIRE(touched.is_ok());
  CHECK(touched.value().outcome == Outcome::kOk);
  CHECK(touched.value().summary.state == TxState::kSending);
  rig.advance(29'999);  // the old expiry (30 s) passed long ago
  CHECK(rig.f.tx("TX-1").deliveries == 0);
  CHECK_FALSE(rig.reserve("pagos", 2).has_value());
  rig.advance(1);
  CHECK(rig.f.tx("TX-1").deliveries == 1);
  CHECK(rig.f.tx("TX-1").failures.back().reason == "LEASE_EXPIRED");
  auto again = rig.reserve("pagos", 2);
  REQUIRE(again.has_value());
  CHECK(again->handouts == 2);

  // Another holder, another attempt, or an unknown transaction.
  CHECK(rig.f.engine->touch(1, "TX-1", 1).value().outcome == Outcome::kStale);
  CHECK(rig.f.engine->touch(2, "TX-1", 2).value().outcome == Outcome::kStale);
  CHECK(rig.f.engine->touch(2, "nope", 1).value().outcome == Outcome::kNotFound);
  CHECK(rig.f.engine->stats().stale_by_kind.at("TOUCH") == 2);
}

TEST_CASE("reserve_any starts at the given position, skips paused queues and names the queue") {
  Rig rig;
  rig.enqueue("a", "A-1");
  rig.enqueue("b", "B-1");
  rig.enqueue("b", "B-2");
  const std::vector<std::string> queues = {"a", "b"};
  auto got = rig.f.engine->reserve_any(queues, 1, 1);
  REQUIRE(got.is_ok());
  CHECK(got.value()->tx_id == "B-1");
  CHECK(got.value()->queue == "b");
  REQUIRE(rig.f.engine->pause("a").is_ok());
  CHECK(rig.f.engine->reserve_any(queues, 1, 0).value()->tx_id == "B-2");
  CHECK_FALSE(rig.f.engine->reserve_any(queues, 1, 0).value().has_value());
  REQUIRE(rig.f.engine->resume("a").is_ok());
  CHECK(rig.f.engine->reserve_any(queues, 1, 1).value()->queue == "a");
}

TEST_CASE("redrive_all and resolve_all change the matching letters, each its own transition") {
  Rig rig;
  rig.bury("pagos", "A-1", "timeout");
  rig.bury("pagos", "A-2", "refused");
  rig.bury("pagos", "B-1", "timeout");
  rig.bury("otros", "A-3", "timeout");

  engine::LetterFilter by_prefix{"A", ""};
  auto redriven = rig.f.engine->redrive_all("pagos", by_prefix, 1);
  REQUIRE(redriven.is_ok());
  CHECK(redriven.value() == 1);
  CHECK_FALSE(rig.f.tx("A-1").dead_lettered);
  CHECK(rig.f.tx("A-2").dead_lettered);

  engine::LetterFilter by_error{"", "timeout"};
  auto resolved = rig.f.engine->resolve_all("pagos", by_error, TxState::kFailed, "", 10);
  REQUIRE(resolved.is_ok());
  CHECK(resolved.value() == 1);  // B-1: A-1 is no letter now, A-3 is in otros
  CHECK(rig.f.tx("B-1").state == TxState::kFailed);
  CHECK(rig.f.tx("B-1").reason == "RESOLVED");
  CHECK(rig.f.tx("A-3").dead_lettered);
  CHECK(rig.f.engine->resolve_all("pagos", {}, TxState::kSucceeded, "BY_HAND", 10).value() == 1);
  CHECK(rig.f.tx("A-2").state == TxState::kSucceeded);
  CHECK(rig.f.tx("A-2").reason == "BY_HAND");
  CHECK(rig.f.engine->redrive_all("pagos", {}, 10).value() == 0);
  CHECK(rig.f.engine->queue_figures("pagos").dead == 0);
  CHECK(rig.f.engine->queue_figures("otros").dead == 1);

  // A write that fails stops the bulk command with its error.
  rig.kv.fail_writes_for_test(true);
  CHECK_FALSE(rig.f.engine->redrive_all("otros", {}, 10).is_ok());
  CHECK_FALSE(rig.f.engine->resolve_all("otros", {}, TxState::kFailed, "", 10).is_ok());
  rig.kv.fail_writes_for_test(false);
  CHECK(rig.f.tx("A-3").dead_lettered);
  CHECK(rig.f.engine->redrive_all("otros", {}, 10).value() == 1);
}

TEST_CASE("LetterFilter matches on the tx_id prefix and the last failure's reason") {
  storage::DeadLetter letter;
  letter.tx_id = "ORD-17";
  letter.failures = {{1, "timeout"}, {2, "refused"}};
  CHECK(engine::LetterFilter{}.matches(letter));
  CHECK(engine::LetterFilter{"ORD-", ""}.matches(letter));
  CHECK(engine::LetterFilter{"ORD-17", "refused"}.matches(letter));
  CHECK_FALSE(engine::LetterFilter{"ORD-170", ""}.matches(letter));
  CHECK_FALSE(engine::LetterFilter{"", "timeout"}.matches(letter));
  letter.failures.clear();
  CHECK_FALSE(engine::LetterFilter{"", "refused"}.matches(letter));
}

TEST_CASE("get_payload reads a transaction's payload") {
  Rig rig;
  rig.enqueue("pagos", "TX-1");
  auto payload = rig.f.engine->get_payload("TX-1");
  REQUIRE(payload.is_ok());
  CHECK(payload.value() == std::optional<std::string>("body-TX-1"));
  CHECK_FALSE(rig.f.engine->get_payload("nope").value().has_value());
}

}  // namespace
