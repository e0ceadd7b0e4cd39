#include "engine/backoff.h"

#include <doctest/doctest.h>

#include <cmath>

#include "engine/random.h"

using tarde::engine::cancelled_wait_ms;
using tarde::engine::SeededRandom;
using tarde::storage::RetryPolicy;

namespace {

constexpr int64_t kMinute = 60'000;
constexpr int64_t kHour = 60 * kMinute;
const double kHighestUnit = std::nextafter(1.0, 0.0);

// The classic policy of the deferred-retry pattern: base 2h, factor 2, cap 24h, jitter ±10 %.
RetryPolicy seed_policy() {
  RetryPolicy policy;
  policy.max_attempts = 4;
  policy.base_ms = 2 * kHour;
  policy.factor = 2;
  policy.cap_ms = 24 * kHour;
  policy.jitter = 0.1;
  return policy;
}

}  // namespace

TEST_CASE("the classic backoff table: three retries in 1h48-2h12, 3h36-4h24, 7h12-8h48") {
  const RetryPolicy policy = seed_policy();
  struct Row {
    uint32_t k;
    int64_t low_ms;
    int64_t high_ms;
  };
  const Row rows[] = {{1, kHour + 48 * kMinute, 2 * kHour + 12 * kMinute},
                      {2, 3 * kHour + 36 * kMinute, 4 * kHour + 24 * kMinute},
                      {3, 7 * kHour + 12 * kMinute, 8 * kHour + 48 * kMinute}};
  for (const Row& row : rows) {
    CAPTURE(row.k);
    CHECK(cancelled_wait_ms(policy, row.k, 0.0) == row.low_ms);
    CHECK(cancelled_wait_ms(policy, row.k, 0.5) == (row.low_ms + row.high_ms) / 2);
    CHECK(cancelled_wait_ms(policy, row.k, kHighestUnit) == row.high_ms);
    SeededRandom random(row.k);
    for (int i = 0; i < 10'000; ++i) {
      const int64_t wait = cancelled_wait_ms(policy, row.k, random.next_unit());
      REQUIRE(wait >= row.low_ms);
      REQUIRE(wait <= row.high_ms);
    }
  }
}

TEST_CASE("jitter applies after the cap: up to 26.4h, or 24h with strict_cap") {
  RetryPolicy policy = seed_policy();
  SeededRandom random(7);
  int64_t longest = 0;
  for (uint32_t k = 1; k <= 1000; ++k) {
    longest = std::max(longest, cancelled_wait_ms(policy, k, random.next_unit()));
    REQUIRE(cancelled_wait_ms(policy, k, kHighestUnit) <= 26 * kHour + 24 * kMinute);
  }
  CHECK(longest > 24 * kHour);  // the jitter does reach above the cap
  CHECK(cancelled_wait_ms(policy, 10, kHighestUnit) == 26 * kHour + 24 * kMinute);

  policy.strict_cap = true;
  for (uint32_t k = 1; k <= 1000; ++k) {
    REQUIRE(cancelled_wait_ms(policy, k, random.next_unit()) <= 24 * kHour);
  }
  CHECK(cancelled_wait_ms(policy, 10, kHighestUnit) == 24 * kHour);
  CHECK(cancelled_wait_ms(policy, 10, 0.0) == std::llround(24 * kHour * 0.9));
}

TEST_CASE("transient waits use the transient settings and count answers in a row") {
  RetryPolicy policy = seed_policy();
  policy.jitter = 0;
  CHECK(tarde::engine::transient_wait_ms(policy, 1, 0.5) == 1000);
  CHECK(tarde::engine::transient_wait_ms(policy, 2, 0.5) == 1600);
  CHECK(tarde::engine::transient_wait_ms(policy, 3, 0.5) == 2560);
  CHECK(tarde::engine::transient_wait_ms(policy, 50, 0.5) == 120'000);  // transient_cap
}

TEST_CASE("retry_after replaces the wait but stays within the cap") {
  CHECK(tarde::engine::bounded_retry_after_ms(5000, 24 * kHour) == 5000);
  CHECK(tarde::engine::bounded_retry_after_ms(48 * kHour, 24 * kHour) == 24 * kHour);
  CHECK(tarde::engine::bounded_retry_after_ms(0, 1000) == 0);
}
