// The per-queue figures the HTTP API shows: IN_FLIGHT and SCHEDULED counts
// kept as transitions happen and rebuilt by recovery, hand-outs since the
// start, and the leases with their times.
#include <doctest/doctest.h>

#include "engine/engine.h"
#include "storage/mem_kv.h"
#include "tests/support/engine_fixture.h"

using namespace tarde;
using testing::enqueue_args;

TEST_CASE("queue figures count IN_FLIGHT, SCHEDULED and hand-outs; leases carry their times") {
  storage::MemKv kv;
  testing::EngineFixture f{kv};
  engine::Engine& e = *f.engine;
  for (const char* id : {"a", "b", "c"}) REQUIRE(e.enqueue(enqueue_args("q", id)).is_ok());
  REQUIRE(e.enqueue(enqueue_args("other", "z")).is_ok());
  auto first = e.reserve("q", 1);
  REQUIRE(first.is_ok());
  REQUIRE(first.value());
  REQUIRE(e.sent(first.value()->tx_id, 1).is_ok());
  auto second = e.reserve("q", 2);
  REQUIRE(second.value());
  REQUIRE(e.sent(second.value()->tx_id, 1).is_ok());
  REQUIRE(
      e.respond(second.value()->tx_id, 1, engine::Answer::kCancelled, "", std::nullopt).is_ok());
  f.clock.advance_ms(250);
  auto third = e.reserve("q", 7);
  REQUIRE(third.value());

  engine::Engine::QueueFigures q = e.queue_figures("q");
  CHECK(q.in_flight == 1);
  CHECK(q.scheduled == 1);
  CHECK(q.leased == 1);
  CHECK(q.handed_out == 3);
  CHECK(e.queue_figures("other").handed_out == 0);
  CHECK(e.stats().handed_out == 3);

  const auto leases = e.leases("q");
  REQUIRE(leases.size() == 1);
  CHECK(leases[0].tx_id == third.value()->tx_id);
  CHECK(leases[0].conn == 7);
  CHECK(leases[0].leased_at_ms == f.clock.now_wall_ms());
  CHECK(leases[0].expires_at_ms == leases[0].leased_at_ms + e.config("q").lease_ms);
  CHECK(e.leases("").size() == 1);
  CHECK(e.leases("other").empty());

  // A restart counts them again from the store (leases and hand-outs are memory only).
  f.reopen();
  q = f.engine->queue_figures("q");
  CHECK(q.in_flight == 1);
  CHECK(q.scheduled == 1);
  CHECK(q.handed_out == 0);
  CHECK(f.engine->leases("").empty());
}
