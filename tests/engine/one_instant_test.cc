// A transition happens at one instant: the record's updated_at, its due
// times and its audit event all come from the one reading of the clock that
// decided it, even when the clock moves while the transition is written.
#include <doctest/doctest.h>

#include "storage/mem_kv.h"
#include "tests/support/engine_fixture.h"

using namespace tarde;
using engine::Answer;
using engine::Outcome;
using storage::TxState;

namespace {

constexpr int64_t kHourMs = 3600 * 1000;

// An engine whose clock moves one millisecond at every reading of wall time:
// each reading a transition makes shows in its figures.
struct Rig {
  storage::MemKv kv;
  testing::EngineFixture f{kv};

  Rig() {
    storage::QueueConfig config = f.engine->config("pagos");
    config.response_timeout_ms = kHourMs;
    REQUIRE(f.engine->set_config("pagos", config).is_ok());
    f.clock.set_step_per_reading_ms(1);
  }

  // Enqueues tx_id and hands its first request out; the attempt.
  uint32_t hand_out(const std::string& tx_id) {
    REQUIRE(f.engine->enqueue(testing::enqueue_args("pagos", tx_id)).is_ok());
    auto got = f.engine->reserve("pagos", 1);
    REQUIRE(got.is_ok());
    REQUIRE(got.value().has_value());
    return got.value()->attempt;
  }
};

}  // namespace

TEST_CASE("ENQUEUE stamps created_at and updated_at with one instant") {
  Rig rig;
  auto created = rig.f.engine->enqueue(testing::enqueue_args("pagos", "t1"));
  REQUIRE(created.is_ok());
  const storage::TxRecord rec = rig.f.tx("t1");
  CHECK(rec.updated_at_ms == rec.created_at_ms);
}

TEST_CASE("a request in flight is due exactly its response timeout after its update") {
  Rig rig;
  auto sent = rig.f.engine->sent("t1", rig.hand_out("t1"));
  REQUIRE(sent.is_ok());
  REQUIRE(sent.value().outcome == Outcome::kOk);
  const storage::TxRecord rec = rig.f.tx("t1");
  REQUIRE(rec.state == TxState::kInFlight);
  CHECK(rec.due_at_ms - rec.updated_at_ms == kHourMs);
}

TEST_CASE("a retry fires exactly retry_after after the answer that asked for it") {
  Rig rig;
  auto answered = rig.f.engine->respond("t1", rig.hand_out("t1"), Answer::kCancelled, "", 5000);
  REQUIRE(answered.is_ok());
  REQUIRE(answered.value().outcome == Outcome::kOk);
  const storage::TxRecord rec = rig.f.tx("t1");
  REQUIRE(rec.state == TxState::kScheduled);
  CHECK(rec.next_fire_at_ms - rec.updated_at_ms == 5000);
}
