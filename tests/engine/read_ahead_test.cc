// Reading ahead of a backlog (engine.h, kPrefetchBacklog): a hand-out from
// a long ready queue, and a chunk of fires, read the records they are about
// to need in one batch.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "engine/ready_queue.h"
#include "storage/mem_kv.h"
#include "storage/staged_kv.h"
#include "storage/store.h"
#include "tests/support/engine_fixture.h"

namespace tarde::engine {
namespace {

// A MemKv that counts the reads that reach it, single and batched.
class CountingKv final : public storage::Kv {
 public:
  Result<std::optional<std::string>> get(storage::Cf cf, std::string_view key) override {
    gets += 1;
    return inner.get(cf, key);
  }
  Status scan(storage::Cf cf, std::string_view lower, std::string_view upper,
              const storage::KvVisitor& visit) override {
    return inner.scan(cf, lower, upper, visit);
  }
  Status write(const storage::KvBatch& batch) override { return inner.write(batch); }
  Result<std::vector<std::optional<std::string>>> multi_get(
      storage::Cf cf, const std::vector<std::string>& keys) override {
    batches += 1;
    batched_keys += keys.size();
    return inner.multi_get(cf, keys);
  }

  storage::MemKv inner;
  size_t gets = 0;
  size_t batches = 0;
  size_t batched_keys = 0;
};

std::string id_of(int n) {
  std::string digits = std::to_string(n);
  return "TX-" + std::string(4 - digits.size(), '0') + digits;
}

// Enqueues `count` requests straight into `base`, so that a StagedKv put
// over it afterwards has remembered none of their records.
void enqueue_into(storage::Kv& base, int count, int64_t delay_ms = 0) {
  testing::EngineFixture writer(base);
  for (int n = 0; n < count; ++n) {
    EnqueueArgs args = testing::enqueue_args("pagos", id_of(n));
    if (delay_ms > 0) args.delay_ms = delay_ms;
    REQUIRE(writer.engine->enqueue(args).is_ok());
  }
}

TEST_CASE("ReadyQueue::first_ids: the head's ids in hand-out order, at most as many as asked") {
  storage::MemKv kv;
  storage::Store store(kv);
  ReadyQueue queue("q", {.page_limit = 8, .memory_limit = 8});
  queue.start_from({0, 0});
  CHECK(queue.first_ids(4).empty());
  auto empty = queue.front(store);  // reads the (empty) disk: later puts stay in memory
  REQUIRE(empty.is_ok());
  CHECK_FALSE(empty.value().has_value());
  queue.on_put({20, 2}, {"b", 1});
  queue.on_put({10, 1}, {"a", 1});
  queue.on_put({20, 3}, {"c", 1});
  CHECK(queue.first_ids(2) == std::vector<std::string_view>{"a", "b"});
  CHECK(queue.first_ids(10) == std::vector<std::string_view>{"a", "b", "c"});
}

TEST_CASE("a hand-out from a backlog reads the next requests' records ahead, a batch at a time") {
  CountingKv base;
  enqueue_into(base, 400);
  storage::StagedKv staged(base);
  testing::EngineFixture f(staged);
  const size_t recent = staged.recent_size();
  const size_t gets = base.gets;
  for (size_t n = 0; n < kPrefetchCount; ++n) {
    auto got = f.engine->reserve("pagos", 1);
    REQUIRE(got.is_ok());
    REQUIRE(got.value().has_value());
    CHECK(got.value()->tx_id == id_of(static_cast<int>(n)));
  }
  CHECK(base.batches == 1);
  CHECK(base.batched_keys == kPrefetchCount);
  CHECK(base.gets == gets);  // every hand-out found its record read ahead
  CHECK(staged.recent_size() == recent + kPrefetchCount);
  REQUIRE(f.engine->reserve("pagos", 1).is_ok());
  CHECK(base.batches == 2);
  CHECK(staged.recent_size() == recent + 2 * kPrefetchCount);
}

TEST_CASE("a short queue is not read ahead") {
  CountingKv base;
  enqueue_into(base, static_cast<int>(kPrefetchBacklog) - 1);
  storage::StagedKv staged(base);
  testing::EngineFixture f(staged);
  const size_t gets = base.gets;
  auto got = f.engine->reserve("pagos", 1);
  REQUIRE(got.is_ok());
  REQUIRE(got.value().has_value());
  CHECK(base.batches == 0);
  CHECK(base.gets == gets + 1);  // its own record only
}

TEST_CASE("a chunk of fires reads its records ahead") {
  CountingKv base;
  enqueue_into(base, 38, /*delay_ms=*/60'000);
  storage::StagedKv staged(base);
  testing::EngineFixture f(staged);
  const size_t gets = base.gets;
  f.clock.advance_ms(60'000);
  REQUIRE(f.engine->run_timers(true).is_ok());
  CHECK(base.batches == 1);
  CHECK(base.batched_keys == f.options.fires_per_turn);
  CHECK(base.gets == gets);          // each fire found its record read ahead
  CHECK(staged.overlay_size() > 0);  // and staged its transition
  // The rest, fewer than kPrefetchFiresMin, are read one by one.
  REQUIRE(f.engine->run_timers(true).is_ok());
  CHECK(base.batches == 1);
  CHECK(base.gets == gets + 38 - f.options.fires_per_turn);
}

}  // namespace
}  // namespace tarde::engine
