// The ready floor: where a restart starts reading a queue's ready index, so
// that it does not walk the deletions of every request handed out before.
// It must never be above a request still to be handed out, leased ones and
// ones put below it after it was raised included.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "engine/invariants.h"
#include "engine/ready_queue.h"
#include "storage/keys.h"
#include "storage/mem_kv.h"
#include "storage/store.h"
#include "tests/support/engine_fixture.h"

namespace tarde::engine {
namespace {

constexpr int64_t kHourMs = 3'600'000;

void put_ready(storage::Store& store, int64_t ready_at_ms, uint64_t seq) {
  storage::Batch batch;
  batch.put_ready({"q", ready_at_ms, seq, "tx-" + std::to_string(seq), 1});
  REQUIRE(store.write(batch).is_ok());
}

std::optional<ReadyQueue::Key> front_key(ReadyQueue& queue, storage::Store& store) {
  auto front = queue.front(store);
  REQUIRE(front.is_ok());
  if (!front.value()) return std::nullopt;
  return front.value()->first;
}

std::optional<storage::ReadyFloor> floor_on_disk(storage::Store& store, const std::string& queue) {
  auto value = store.get_meta(storage::ready_floor_key(queue));
  REQUIRE(value.is_ok());
  if (!value.value()) return std::nullopt;
  auto floor = storage::decode_ready_floor(*value.value());
  REQUIRE(floor.is_ok());
  return floor.value();
}

// Hands out and answers SUCCESS n requests of queue; returns their ids.
std::set<std::string> hand_out_and_answer(testing::EngineFixture& f, const std::string& queue,
                                          int n) {
  std::set<std::string> ids;
  for (int i = 0; i < n; ++i) {
    auto got = f.engine->reserve(queue, 1);
    REQUIRE(got.is_ok());
    REQUIRE(got.value().has_value());
    ids.insert(got.value()->tx_id);
    REQUIRE(
        f.engine
            ->respond(got.value()->tx_id, got.value()->attempt, Answer::kSuccess, "", std::nullopt)
            .is_ok());
  }
  return ids;
}

// Everything a queue hands out now, by id.
std::set<std::string> drain(testing::EngineFixture& f, const std::string& queue) {
  std::set<std::string> ids;
  while (true) {
    auto got = f.engine->reserve(queue, 2);
    REQUIRE(got.is_ok());
    if (!got.value()) return ids;
    ids.insert(got.value()->tx_id);
  }
}

}  // namespace

TEST_SUITE("ready_floor") {
  TEST_CASE("a queue reads from its floor, which follows hand-outs and puts below it") {
    storage::MemKv kv;
    storage::Store store(kv);
    for (uint64_t seq = 1; seq <= 5; ++seq) put_ready(store, 1000, seq);
    ReadyQueue queue("q", {.page_limit = 2, .memory_limit = 4});
    queue.start_from({1000, 3});
    CHECK(queue.floor() == ReadyQueue::Key{1000, 3});
    CHECK(front_key(queue, store) == ReadyQueue::Key{1000, 3});  // 1 and 2 not read
    queue.pop_front();
    CHECK(queue.floor() == ReadyQueue::Key{1000, 4});
    put_ready(store, 500, 9);  // below the floor: an overdue retry
    queue.on_put({500, 9}, {"tx-9", 1});
    CHECK(queue.floor() == ReadyQueue::Key{500, 9});
    CHECK(front_key(queue, store) == ReadyQueue::Key{500, 9});
    queue.pop_front();
    CHECK(front_key(queue, store) == ReadyQueue::Key{1000, 4});
    // Memory forgotten: reading starts at the floor again, here the
    // lowered one (500, 10). The entries the caller said were not there, and
    // the ones handed out, are gone by now, as they would be.
    storage::Batch gone;
    for (uint64_t seq : {1, 2, 3}) gone.delete_ready("q", 1000, seq);
    gone.delete_ready("q", 500, 9);
    REQUIRE(store.write(gone).is_ok());
    queue.reset();
    CHECK(queue.floor() == ReadyQueue::Key{500, 10});
    CHECK(front_key(queue, store) == ReadyQueue::Key{1000, 4});
  }

  TEST_CASE("hand-outs raise the floor on disk, and a restart reads from it") {
    storage::MemKv kv;
    testing::EngineFixture f{kv};
    constexpr int kCount = 3 * static_cast<int>(kReadyFloorEvery);
    for (int i = 0; i < kCount; ++i) {
      REQUIRE(f.engine->enqueue(testing::enqueue_args("q", "TX-" + std::to_string(i))).is_ok());
    }
    CHECK(!floor_on_disk(*f.store, "q").has_value());
    const auto first = f.tx("TX-0");
    hand_out_and_answer(f, "q", 2 * static_cast<int>(kReadyFloorEvery) + 10);
    const auto floor = floor_on_disk(*f.store, "q");
    REQUIRE(floor.has_value());
    CHECK(floor->seq >= first.ready_seq + 2 * kReadyFloorEvery - 1);  // raised twice
    f.reopen();
    CHECK(drain(f, "q").size() == kCount - 2 * kReadyFloorEvery - 10);
  }

  TEST_CASE("a leased request stays above the floor and is handed out again after a restart") {
    storage::MemKv kv;
    testing::EngineFixture f{kv};
    const int count = static_cast<int>(kReadyFloorEvery) + 500;
    for (int i = 0; i < count; ++i) {
      REQUIRE(f.engine->enqueue(testing::enqueue_args("q", "TX-" + std::to_string(i))).is_ok());
    }
    auto leased = f.engine->reserve("q", 7);  // held, never answered
    REQUIRE(leased.is_ok());
    REQUIRE(leased.value().has_value());
    hand_out_and_answer(f, "q", static_cast<int>(kReadyFloorEvery) + 100);
    const auto floor = floor_on_disk(*f.store, "q");
    REQUIRE(floor.has_value());
    CHECK(floor->seq <= f.tx(leased.value()->tx_id).ready_seq);
    f.reopen();  // the lease is gone with the process
    const std::set<std::string> again = drain(f, "q");
    CHECK(again.count(leased.value()->tx_id) == 1);
    CHECK(again.size() == static_cast<size_t>(count) - kReadyFloorEvery - 100);
  }

  TEST_CASE("a request below its queue's floor is a violation; recovery lowers the floor") {
    storage::MemKv kv;
    testing::EngineFixture f{kv};
    REQUIRE(f.engine->enqueue(testing::enqueue_args("q", "BELOW")).is_ok());
    REQUIRE(f.engine->enqueue(testing::enqueue_args("q", "ABOVE")).is_ok());
    // Damage: a floor above a request still to be handed out, which a
    // restart would never read again.
    const auto above = f.tx("ABOVE");
    storage::Batch damage;
    damage.put_ready_floor("q", {above.ready_at_ms, above.ready_seq});
    REQUIRE(f.store->write(damage).is_ok());

    Sweep sweep;
    REQUIRE(sweep_invariants(*f.store, &sweep).is_ok());
    REQUIRE(sweep.violations.size() == 1);
    CHECK(sweep.violations[0].text ==
          "BELOW: its request is below its queue's ready floor, where a restart starts reading");

    f.reopen();  // recovery sweeps and repairs
    const auto lowered = floor_on_disk(*f.store, "q");
    REQUIRE(lowered.has_value());
    CHECK(lowered->seq == f.tx("BELOW").ready_seq);
    REQUIRE(sweep_invariants(*f.store, &sweep).is_ok());
    CHECK(sweep.violations.empty());
    CHECK(drain(f, "q") == std::set<std::string>{"BELOW", "ABOVE"});
  }

  TEST_CASE("a retry overdue at restart is queued below the floor and still handed out") {
    storage::MemKv kv;
    testing::EngineFixture f{kv};
    REQUIRE(f.engine->enqueue(testing::enqueue_args("q", "OVERDUE")).is_ok());
    auto got = f.engine->reserve("q", 1);
    REQUIRE(got.is_ok());
    REQUIRE(got.value().has_value());
    REQUIRE(f.engine->respond("OVERDUE", 1, Answer::kCancelled, "", std::nullopt).is_ok());
    const int64_t due_ms = f.tx("OVERDUE").due_at_ms;
    // Hours later, before any timer ran: enough newer requests handed out to
    // raise the floor above the retry's instant.
    f.clock.advance_ms(3 * kHourMs);
    const int count = static_cast<int>(kReadyFloorEvery) + 10;
    for (int i = 0; i < count; ++i) {
      REQUIRE(f.engine->enqueue(testing::enqueue_args("q", "TX-" + std::to_string(i))).is_ok());
    }
    hand_out_and_answer(f, "q", static_cast<int>(kReadyFloorEvery) + 1);
    const auto raised = floor_on_disk(*f.store, "q");
    REQUIRE(raised.has_value());
    CHECK(raised->ready_at_ms > due_ms);
    f.reopen();
    while (f.engine->run_timers().value()) {
    }
    const auto lowered = floor_on_disk(*f.store, "q");
    REQUIRE(lowered.has_value());
    CHECK(lowered->ready_at_ms == due_ms);  // lowered in the retry's own batch
    f.reopen();                             // and read from there after another restart
    const std::set<std::string> left = drain(f, "q");
    CHECK(left.count("OVERDUE") == 1);
    CHECK(left.size() == 10);
  }
}

}  // namespace tarde::engine
