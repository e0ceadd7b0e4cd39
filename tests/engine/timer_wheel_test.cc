#include "engine/timer_wheel.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <vector>

namespace tarde::engine {
namespace {

using Wheel = TimerWheel<int>;

std::vector<Wheel::Fired> advance_to(Wheel& wheel, int64_t now_ms) {
  std::vector<Wheel::Fired> fired;
  wheel.advance(now_ms, fired);
  return fired;
}

std::vector<int> values_of(const std::vector<Wheel::Fired>& fired) {
  std::vector<int> values;
  for (const auto& f : fired) values.push_back(f.value);
  return values;
}

}  // namespace

TEST_SUITE("timer_wheel") {
  TEST_CASE("an entry inserted in the past fires at the next advance, even an earlier one") {
    Wheel wheel(1000);
    wheel.insert(400, 1);
    wheel.insert(1000, 2);
    wheel.insert(10, 3);
    CHECK(wheel.size() == 3);
    REQUIRE(wheel.next_due_ms().has_value());
    CHECK(*wheel.next_due_ms() <= 1000);
    const auto fired = advance_to(wheel, 900);  // earlier than now(): time stays
    CHECK(wheel.now_ms() == 1000);
    REQUIRE(fired.size() == 3);
    CHECK(values_of(fired) == std::vector<int>{3, 1, 2});
    CHECK(fired[0].due_ms == 10);
    CHECK(fired[2].due_ms == 1000);
    CHECK(wheel.size() == 0);
    CHECK(!wheel.next_due_ms().has_value());
    CHECK(wheel.invariants_hold_for_test());
  }

  TEST_CASE("a limited advance hands a burst out in chunks, in due order") {
    // A burst all due in one millisecond, behind two earlier entries, and one
    // inserted already due out of order: each advance moves at most three.
    Wheel wheel(0);
    for (int v = 0; v < 7; ++v) wheel.insert(5000, 100 + v);
    wheel.insert(4000, 2);
    wheel.insert(3000, 1);
    std::vector<Wheel::Fired> fired;
    wheel.advance(6000, fired, 3);
    CHECK(wheel.now_ms() == 6000);
    REQUIRE(fired.size() == 3);
    CHECK(fired[0].value == 1);
    CHECK(fired[1].value == 2);
    CHECK(fired[2].due_ms == 5000);
    CHECK(wheel.size() == 6);
    CHECK(wheel.next_due_ms() == 5000);  // "now": more is due
    wheel.insert(10, 3);                 // already due, earlier than the rest
    CHECK(wheel.invariants_hold_for_test());
    fired.clear();
    wheel.advance(6000, fired, 3);
    REQUIRE(fired.size() == 3);
    CHECK(fired[0].value == 3);
    CHECK(fired[1].due_ms == 5000);
    wheel.advance(6001, fired, 0);  // a zero limit moves time and fires nothing
    CHECK(fired.size() == 3);
    CHECK(wheel.now_ms() == 6001);
    wheel.advance(6001, fired, 100);
    CHECK(fired.size() == 7);
    CHECK(wheel.size() == 0);
    CHECK(!wheel.next_due_ms().has_value());
    CHECK(wheel.invariants_hold_for_test());
  }

  TEST_CASE("exact due times at slot and level boundaries") {
    for (int64_t start :
         {int64_t{0}, int64_t{1}, int64_t{63}, int64_t{1'700'000'000'000}, int64_t{-5000}}) {
      CAPTURE(start);
      for (int64_t delta : std::initializer_list<int64_t>{
               1, 2, 62, 63, 64, 65, 127, 128, 4095, 4096, 4097, 262143, 262144, 262145, 16777216,
               86'400'000, 365LL * 86'400'000}) {
        CAPTURE(delta);
        Wheel wheel(start);
        const int64_t due = start + delta;
        wheel.insert(due, 7);
        REQUIRE(wheel.next_due_ms().has_value());
        CHECK(*wheel.next_due_ms() > start);
        CHECK(*wheel.next_due_ms() <= due);
        CHECK(advance_to(wheel, due - 1).empty());
        CHECK(wheel.invariants_hold_for_test());
        CHECK(wheel.next_due_ms() == due);  // now in level 0: exact
        const auto fired = advance_to(wheel, due);
        REQUIRE(fired.size() == 1);
        CHECK(fired[0].due_ms == due);
        CHECK(wheel.size() == 0);
      }
    }
  }

  TEST_CASE("entries across levels come out in due order, and only when due") {
    Wheel wheel(0);
    const std::vector<int64_t> dues = {4096, 63, 64, 4095, 1, 262144, 64, 5000, 200000, 0, 4096};
    for (size_t i = 0; i < dues.size(); ++i) wheel.insert(dues[i], static_cast<int>(i));
    std::vector<int64_t> seen;
    for (int64_t now :
         std::initializer_list<int64_t>{0, 62, 63, 64, 4094, 4095, 4096, 100000, 262143, 262144}) {
      for (const auto& f : advance_to(wheel, now)) {
        CHECK(f.due_ms <= now);
        seen.push_back(f.due_ms);
      }
      CHECK(wheel.invariants_hold_for_test());
    }
    std::vector<int64_t> sorted = dues;
    std::sort(sorted.begin(), sorted.end());
    CHECK(seen == sorted);
  }

  TEST_CASE("cancel removes an entry; a stale handle cancels nothing") {
    Wheel wheel(0);
    const auto a = wheel.insert(100, 1);
    const auto b = wheel.insert(100, 2);
    const auto c = wheel.insert(-1, 3);
    CHECK(wheel.cancel(a));
    CHECK(!wheel.cancel(a));  // twice
    CHECK(wheel.cancel(c));   // from the "due now" list
    CHECK(wheel.size() == 1);
    CHECK(!wheel.cancel(Wheel::Handle{}));
    CHECK(!wheel.cancel(Wheel::Handle{12345, 1}));
    // a's slab node is reused: a's handle must not cancel the new entry.
    const auto d = wheel.insert(50, 4);
    CHECK(d.index == c.index);  // LIFO free list reuses c's node first
    const auto e = wheel.insert(60, 5);
    CHECK(e.index == a.index);
    CHECK(!wheel.cancel(a));
    CHECK(!wheel.cancel(c));
    CHECK(wheel.invariants_hold_for_test());
    const auto fired = advance_to(wheel, 100);
    CHECK(values_of(fired) == std::vector<int>{4, 5, 2});
    CHECK(!wheel.cancel(b));  // already fired
    CHECK(!wheel.cancel(d));
    CHECK(wheel.size() == 0);
  }

  TEST_CASE("advancing a year with few entries is fast") {
    Wheel wheel(1'700'000'000'000);
    const int64_t year_ms = 365LL * 86'400'000;
    for (int i = 0; i < 100; ++i) wheel.insert(wheel.now_ms() + (i + 1) * (year_ms / 100), i);
    const auto begin = std::chrono::steady_clock::now();
    std::vector<Wheel::Fired> fired;
    for (int step = 0; step < 1000; ++step) wheel.advance(wheel.now_ms() + year_ms / 1000, fired);
    wheel.advance(wheel.now_ms() + year_ms, fired);  // and one jump of a year
    const auto elapsed = std::chrono::steady_clock::now() - begin;
    CHECK(fired.size() == 100);
    CHECK(std::is_sorted(fired.begin(), fired.end(),
                         [](const auto& x, const auto& y) { return x.due_ms < y.due_ms; }));
    CHECK(elapsed < std::chrono::milliseconds(100));
  }

  TEST_CASE("next_due_ms is a lower bound of the earliest due, after now") {
    Wheel wheel(10'000);
    CHECK(!wheel.next_due_ms().has_value());
    wheel.insert(10'000 + 5000, 1);
    wheel.insert(10'000 + 300'000, 2);
    int wakes = 0;
    std::vector<Wheel::Fired> fired;
    while (wheel.size() > 0) {
      const auto next = wheel.next_due_ms();
      REQUIRE(next.has_value());
      CHECK(*next > wheel.now_ms());
      CHECK(*next <= (fired.empty() ? 15'000 : 310'000));
      wheel.advance(*next, fired);  // a timer armed for it
      ++wakes;
    }
    CHECK(fired.size() == 2);
    CHECK(fired[0].due_ms == 15'000);
    CHECK(fired[1].due_ms == 310'000);
    CHECK(wakes <= 2 * detail::kWheelLevels);
  }

  TEST_CASE("extreme due times have a level") {
    Wheel wheel(0);
    wheel.insert(std::numeric_limits<int64_t>::max(), 1);
    wheel.insert(std::numeric_limits<int64_t>::min(), 2);
    wheel.insert(int64_t{1} << 50, 3);
    CHECK(wheel.invariants_hold_for_test());
    CHECK(values_of(advance_to(wheel, 0)) == std::vector<int>{2});
    CHECK(values_of(advance_to(wheel, (int64_t{1} << 50) - 1)).empty());
    CHECK(values_of(advance_to(wheel, int64_t{1} << 50)) == std::vector<int>{3});
    CHECK(values_of(advance_to(wheel, std::numeric_limits<int64_t>::max() - 1)).empty());
    CHECK(wheel.next_due_ms() == std::numeric_limits<int64_t>::max());
    CHECK(values_of(advance_to(wheel, std::numeric_limits<int64_t>::max())) == std::vector<int>{1});
  }

  // A brute-force model: a multimap from due time to value, plus the handles.
  struct ModelCase {
    Wheel wheel;
    std::multimap<int64_t, int> model;
    std::map<int, Wheel::Handle> handles;  // live values
    std::vector<Wheel::Handle> dead_handles;

    explicit ModelCase(int64_t now) : wheel(now) {}
  };

  int64_t random_due(std::mt19937_64 & rng, int64_t now) {
    const int64_t year_ms = 365LL * 86'400'000;
    switch (rng() % 6) {
      case 0:
        return now - static_cast<int64_t>(rng() % 100'000);  // past
      case 1:
        return now + static_cast<int64_t>(rng() % 70);  // level 0/1 edge
      case 2:
        return now + static_cast<int64_t>(rng() % 5000);  // clustered
      case 3:
        return now + 4096 * static_cast<int64_t>(rng() % 3) - 1 +
               static_cast<int64_t>(rng() % 3);  // on boundaries
      case 4:
        return now + static_cast<int64_t>(rng() % 86'400'000);  // a day
      default:
        return now + static_cast<int64_t>(rng() % (3 * year_ms));  // years, sparse
    }
  }

  int64_t random_step(std::mt19937_64 & rng) {
    switch (rng() % 5) {
      case 0:
        return 0;
      case 1:
        return static_cast<int64_t>(rng() % 70);
      case 2:
        return static_cast<int64_t>(rng() % 10'000);
      case 3:
        return static_cast<int64_t>(rng() % (7LL * 86'400'000));
      default:
        return -static_cast<int64_t>(rng() % 1000);  // backwards: a no-op for time
    }
  }

  // Advances the wheel to `to`, firing at most `limit`, and checks it against
  // the model: the earliest entries due come out, in due order (equal due
  // times in any order), and next_due_ms() says "now" while any are left.
  void check_advance(ModelCase & c, int64_t to, size_t limit = std::numeric_limits<size_t>::max()) {
    const int64_t now = std::max(to, c.wheel.now_ms());
    std::vector<Wheel::Fired> fired;
    c.wheel.advance(to, fired, limit);
    REQUIRE(c.wheel.now_ms() == now);
    size_t due = 0;
    for (auto it = c.model.begin(); it != c.model.end() && it->first <= now; ++it) ++due;
    REQUIRE(fired.size() == std::min(due, limit));
    for (size_t i = 0; i < fired.size(); ++i) {
      if (i > 0) REQUIRE(fired[i - 1].due_ms <= fired[i].due_ms);
      auto [first, last] = c.model.equal_range(fired[i].due_ms);
      auto it =
          std::find_if(first, last, [&](const auto& m) { return m.second == fired[i].value; });
      REQUIRE(it != last);  // it was in the model with that due time
      c.model.erase(it);
      c.dead_handles.push_back(c.handles.at(fired[i].value));
      c.handles.erase(fired[i].value);
    }
    if (!fired.empty() && !c.model.empty()) {
      REQUIRE(c.model.begin()->first >= fired.back().due_ms);  // nothing earlier was skipped
    }
    REQUIRE(c.wheel.size() == c.model.size());
    const auto next = c.wheel.next_due_ms();
    REQUIRE(next.has_value() == !c.model.empty());
    if (next) {
      REQUIRE(*next <= c.model.begin()->first);
      if (c.model.begin()->first > now) REQUIRE(*next > now);
    }
  }

  int64_t random_limit(std::mt19937_64 & rng) {
    switch (rng() % 4) {
      case 0:
        return static_cast<int64_t>(rng() % 4);
      case 1:
        return static_cast<int64_t>(rng() % 100);
      default:
        return -1;  // no limit
    }
  }

  TEST_CASE("randomized against a brute-force model") {
    for (uint64_t seed = 1; seed <= 12; ++seed) {
      CAPTURE(seed);
      std::mt19937_64 rng(seed);
      ModelCase c(1'700'000'000'000 + static_cast<int64_t>(rng() % 1'000'000));
      int next_value = 0;
      for (int op = 0; op < 6000; ++op) {
        const uint64_t kind = rng() % 10;
        if (kind < 6) {
          const int64_t due = random_due(rng, c.wheel.now_ms());
          const int value = next_value++;
          c.handles[value] = c.wheel.insert(due, value);
          c.model.emplace(due, value);
        } else if (kind < 8 && !c.handles.empty()) {
          auto it = c.handles.lower_bound(static_cast<int>(rng() % next_value));
          if (it == c.handles.end()) it = c.handles.begin();
          REQUIRE(c.wheel.cancel(it->second));
          for (auto m = c.model.begin(); m != c.model.end(); ++m) {
            if (m->second == it->first) {
              c.model.erase(m);
              break;
            }
          }
          c.dead_handles.push_back(it->second);
          c.handles.erase(it);
        } else if (kind == 8 && !c.dead_handles.empty()) {
          // A stale handle never cancels, even after its node was reused.
          REQUIRE(!c.wheel.cancel(c.dead_handles[rng() % c.dead_handles.size()]));
        } else {
          const int64_t limit = random_limit(rng);
          check_advance(
              c, c.wheel.now_ms() + random_step(rng),
              limit < 0 ? std::numeric_limits<size_t>::max() : static_cast<size_t>(limit));
        }
        if (op % 500 == 0) REQUIRE(c.wheel.invariants_hold_for_test());
      }
      // Drain: follow next_due_ms like a real timer would, then jump far.
      for (int wake = 0; wake < 20000 && c.wheel.next_due_ms(); ++wake) {
        check_advance(c, *c.wheel.next_due_ms());
      }
      check_advance(c, c.wheel.now_ms() + 10 * 365LL * 86'400'000);
      REQUIRE(c.wheel.size() == 0);
      REQUIRE(c.wheel.invariants_hold_for_test());
    }
  }

}  // TEST_SUITE

}  // namespace tarde::engine
