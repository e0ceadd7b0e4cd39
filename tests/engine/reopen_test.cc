// Reopening the store between any two transitions gives the same state and
// indexes: a scripted lifecycle over several transactions on a real RocksDB,
// closed and reopened (with recovery) after every step.
#include <doctest/doctest.h>

#include <functional>

#include "engine/engine.h"
#include "storage/rocks_kv.h"
#include "tests/support/engine_fixture.h"
#include "tests/support/temp_dir.h"

using namespace tarde;
using engine::Answer;
using storage::TxState;

namespace {

constexpr int64_t kHourMs = 3600 * 1000;

std::unique_ptr<storage::RocksKv> open_kv(const std::string& dir) {
  auto kv = storage::RocksKv::open(dir, storage::RocksKv::Options{});
  REQUIRE(kv.is_ok());
  return std::move(kv).value();
}

}  // namespace

TEST_CASE("reopening between any two transitions keeps state and indexes identical") {
  testing::TempDir dir;
  auto kv = open_kv(dir.path());
  auto f = std::make_unique<testing::EngineFixture>(*kv);

  auto respond = [&](const char* tx, uint32_t n, Answer a) {
    REQUIRE(f->engine->respond(tx, n, a, "", std::nullopt).is_ok());
  };
  auto reserve_and_send = [&]() {
    auto got = f->engine->reserve("pagos", 1);
    REQUIRE(got.value().has_value());
    REQUIRE(f->engine->sent(got.value()->tx_id, got.value()->attempt).is_ok());
  };
  auto advance = [&](int64_t ms) {
    f->clock.advance_ms(ms);
    while (f->engine->run_timers().value()) {
    }
  };
  storage::QueueConfig config;
  config.max_deliveries = 1;
  const std::vector<std::function<void()>> steps = {
      [&] { REQUIRE(f->engine->set_config("pagos", config).is_ok()); },
      [&] { REQUIRE(f->engine->enqueue(testing::enqueue_args("pagos", "A")).is_ok()); },
      [&] { REQUIRE(f->engine->enqueue(testing::enqueue_args("pagos", "B")).is_ok()); },
      [&] {
        auto args = testing::enqueue_args("pagos", "C");
        args.delay_ms = kHourMs;
        REQUIRE(f->engine->enqueue(args).is_ok());
      },
      [&] { reserve_and_send(); },                   // A in flight
      [&] { respond("A", 1, Answer::kCancelled); },  // A scheduled for attempt 2
      [&] {                                          // B dead-lettered
        auto got = f->engine->reserve("pagos", 1);
        REQUIRE(got.value().has_value());
        REQUIRE(f->engine->release(1, "B", 1, 0, "").is_ok());
      },
      [&] { advance(kHourMs); },                     // C fires
      [&] { reserve_and_send(); },                   // C in flight
      [&] { respond("C", 1, Answer::kTransient); },  // C re-send scheduled
      [&] { advance(3 * kHourMs); },                 // A and C fire
      [&] { reserve_and_send(); },
      [&] { reserve_and_send(); },
      [&] { respond("A", 2, Answer::kSuccess); },
      [&] { REQUIRE(f->engine->resolve("B", TxState::kFailed, "manual").is_ok()); },
      [&] { respond("C", 1, Answer::kRejected); },
  };
  for (size_t i = 0; i < steps.size(); ++i) {
    CAPTURE(i);
    steps[i]();
    const auto before = f->dump();
    const auto stats_before = f->engine->stats();
    const int64_t wall = f->clock.now_wall_ms();
    f.reset();
    REQUIRE(kv->close().is_ok());
    kv = open_kv(dir.path());
    f = std::make_unique<testing::EngineFixture>(*kv, wall);
    CHECK(f->dump() == before);
    const auto stats_after = f->engine->stats();
    CHECK(stats_after.by_state == stats_before.by_state);
    CHECK(stats_after.ready == stats_before.ready + stats_before.leased);
    CHECK(stats_after.dead_letters == stats_before.dead_letters);
  }
  CHECK(f->tx("A").state == TxState::kSucceeded);
  CHECK(f->tx("B").state == TxState::kFailed);
  CHECK(f->tx("C").state == TxState::kFailed);
}
