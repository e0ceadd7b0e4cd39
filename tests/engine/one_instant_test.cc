// A transition happens at one instant: the record's updated_at, its due
// times and its audit event all come from the one reading of the clock that
// decided it, even when the clock moves while the transition is written.
#include <doctest/doctest.h>

#include "base/clock.h"
#include "engine/engine.h"
#include "engine/random.h"
#include "storage/mem_kv.h"
#include "storage/store.h"
#include "tests/support/engine_fixture.h"

using namespace tarde;
using engine::Answer;
using engine::Outcome;
using storage::TxState;

namespace {

constexpr int64_t kHourMs = 3600 * 1000;

// A clock whose wall time moves one millisecond at every reading: each
// reading of a transition shows in its figures.
class TickingClock final : public Clock {
 public:
  int64_t now_wall_ms() const override { return wall_ms_++; }
  int64_t now_steady_ms() const override { return wall_ms_ - kStart; }

 private:
  static constexpr int64_t kStart = 1'700'000'000'000;
  mutable int64_t wall_ms_ = kStart;
};

struct Rig {
  storage::MemKv kv;
  storage::Store store{kv};
  TickingClock clock;
  engine::FixedRandom random{0.5};
  engine::Engine engine{store, clock, random};

  Rig() {
    engine::RecoveryReport report;
    REQUIRE(engine.recover(&report).is_ok());
    storage::QueueConfig config = engine.config("pagos");
    config.response_timeout_ms = kHourMs;
    REQUIRE(engine.set_config("pagos", config).is_ok());
  }

  // Enqueues tx_id and hands its first request out; the attempt.
  uint32_t hand_out(const std::string& tx_id) {
    REQUIRE(engine.enqueue(testing::enqueue_args("pagos", tx_id)).is_ok());
    auto got = engine.reserve("pagos", 1);
    REQUIRE(got.is_ok());
    REQUIRE(got.value().has_value());
    return got.value()->attempt;
  }

  storage::TxRecord tx(const std::string& tx_id) {
    auto found = store.get_tx(tx_id);
    REQUIRE(found.is_ok());
    REQUIRE(found.value().has_value());
    return *found.value();
  }
};

}  // namespace

TEST_CASE("ENQUEUE stamps created_at and updated_at with one instant") {
  Rig rig;
  auto created = rig.engine.enqueue(testing::enqueue_args("pagos", "t1"));
  REQUIRE(created.is_ok());
  const storage::TxRecord rec = rig.tx("t1");
  CHECK(rec.updated_at_ms == rec.created_at_ms);
}

TEST_CASE("a request in flight is due exactly its response timeout after its update") {
  Rig rig;
  auto sent = rig.engine.sent("t1", rig.hand_out("t1"));
  REQUIRE(sent.is_ok());
  REQUIRE(sent.value().outcome == Outcome::kOk);
  const storage::TxRecord rec = rig.tx("t1");
  REQUIRE(rec.state == TxState::kInFlight);
  CHECK(rec.due_at_ms - rec.updated_at_ms == kHourMs);
}

TEST_CASE("a retry fires exactly retry_after after the answer that asked for it") {
  Rig rig;
  auto answered = rig.engine.respond("t1", rig.hand_out("t1"), Answer::kCancelled, "", 5000);
  REQUIRE(answered.is_ok());
  REQUIRE(answered.value().outcome == Outcome::kOk);
  const storage::TxRecord rec = rig.tx("t1");
  REQUIRE(rec.state == TxState::kScheduled);
  CHECK(rec.next_fire_at_ms - rec.updated_at_ms == 5000);
}
