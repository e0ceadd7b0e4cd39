#include "engine/due_timers.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "storage/mem_kv.h"
#include "storage/store.h"

namespace tarde::engine {
namespace {

using storage::DueEntry;

DueEntry due(int64_t fire_at_ms, std::string tx_id, uint32_t attempt = 1) {
  return DueEntry{fire_at_ms, std::move(tx_id), storage::DueKind::kRetry, attempt};
}

void write_put(storage::Store& store, const DueEntry& entry) {
  storage::Batch batch;
  batch.put_due(entry);
  REQUIRE(store.write(batch).is_ok());
}

void write_delete(storage::Store& store, int64_t fire_at_ms, const std::string& tx_id) {
  storage::Batch batch;
  batch.delete_due(fire_at_ms, tx_id);
  REQUIRE(store.write(batch).is_ok());
}

// Polls as a server loop would: again while next_wake_ms() says "now".
std::vector<DueEntry> poll_until_idle(DueTimers& timers, int64_t now_ms) {
  std::vector<DueEntry> out;
  REQUIRE(timers.poll(now_ms, out).is_ok());
  for (int turn = 0; turn < 100'000; ++turn) {
    const auto wake = timers.next_wake_ms();
    if (!wake.has_value() || *wake > now_ms) return out;
    REQUIRE(timers.poll(now_ms, out).is_ok());
  }
  FAIL("poll never went idle");
  return out;
}

std::vector<std::string> ids_of(const std::vector<DueEntry>& entries) {
  std::vector<std::string> ids;
  for (const auto& e : entries) ids.push_back(e.tx_id);
  return ids;
}

}  // namespace

TEST_SUITE("due_timers") {
  TEST_CASE("entries beyond the horizon stay on disk until their time, then fire") {
    storage::MemKv kv;
    storage::Store store(kv);
    const int64_t t0 = 1'700'000'000'000;
    const int64_t later = t0 + 10 * 3600 * 1000;
    write_put(store, due(later, "b"));
    write_put(store, due(later, "a"));
    write_put(store, due(later + 5, "c"));
    DueTimers timers(store, {.horizon_ms = 1000, .page_limit = 4});
    REQUIRE(timers.start(t0).is_ok());
    CHECK(timers.in_memory() == 0);
    CHECK(timers.next_wake_ms() == later);  // no wake every horizon while idle
    CHECK(poll_until_idle(timers, later - 1001).empty());
    CHECK(poll_until_idle(timers, later - 1).empty());
    CHECK(timers.in_memory() == 0);
    const auto fired = poll_until_idle(timers, later);
    CHECK(ids_of(fired) == std::vector<std::string>{"a", "b"});
    CHECK(fired[0] == due(later, "a"));
    CHECK(timers.in_memory() == 1);  // "c" was paged with them: within the horizon
    CHECK(timers.next_wake_ms() == later + 5);
    CHECK(ids_of(poll_until_idle(timers, later + 5)) == std::vector<std::string>{"c"});
    CHECK(timers.in_memory() == 0);
    CHECK(!timers.next_wake_ms().has_value());
  }

  TEST_CASE("on_put keeps entries of the paged range and leaves later ones on disk") {
    storage::MemKv kv;
    storage::Store store(kv);
    DueTimers timers(store, {.horizon_ms = 100, .page_limit = 10});
    REQUIRE(timers.start(1000).is_ok());
    CHECK(!timers.next_wake_ms().has_value());
    const DueEntry near = due(1050, "near");
    write_put(store, near);
    CHECK(timers.on_put(near));
    const DueEntry far = due(5000, "far");
    write_put(store, far);
    CHECK(!timers.on_put(far));
    CHECK(timers.in_memory() == 1);
    CHECK(timers.next_wake_ms() <= 1050);
    // The same key put again replaces, it is never in memory twice.
    const DueEntry near2 = due(1050, "near", 2);
    write_put(store, near2);
    CHECK(timers.on_put(near2));
    CHECK(timers.in_memory() == 1);
    auto fired = poll_until_idle(timers, 1050);
    REQUIRE(fired.size() == 1);
    CHECK(fired[0] == near2);
    write_delete(store, 1050, "near");
    CHECK(timers.next_wake_ms() == 5000);
    // Deleting an entry left on disk: the wake stays a harmless lower bound.
    write_delete(store, 5000, "far");
    timers.on_delete(5000, "far");
    CHECK(poll_until_idle(timers, 5000).empty());
    CHECK(!timers.next_wake_ms().has_value());
  }

  TEST_CASE("a burst kept by on_put comes out in chunks of the limit, before the next page") {
    // Forty entries put while in the paged range all come due in one
    // millisecond; two more wait on disk beyond the paged range. Each poll
    // hands out at most five, in key order, and pages only once memory has
    // nothing due left.
    storage::MemKv kv;
    storage::Store store(kv);
    DueTimers timers(store, {.horizon_ms = 1000, .page_limit = 4});
    REQUIRE(timers.start(1000).is_ok());
    std::vector<std::string> ids;
    for (int i = 0; i < 40; ++i) {
      ids.push_back("tx" + std::to_string(100 + i));
      const DueEntry entry = due(1500, ids.back());
      write_put(store, entry);
      REQUIRE(timers.on_put(entry));
    }
    for (std::string id : {"later-a", "later-b"}) {
      write_put(store, due(2500, id));
      REQUIRE(!timers.on_put(due(2500, id)));
      ids.push_back(id);
    }
    std::vector<DueEntry> fired;
    int polls = 0;
    while (timers.next_wake_ms() && *timers.next_wake_ms() <= 3000) {
      const size_t before = fired.size();
      REQUIRE(timers.poll(3000, fired, 5).is_ok());
      CHECK(fired.size() - before <= 5);
      CHECK(timers.in_memory() <= 40);
      ++polls;
      REQUIRE(polls < 30);
    }
    CHECK(polls >= 9);
    CHECK(ids_of(fired) == ids);
    CHECK(timers.in_memory() == 0);
  }

  TEST_CASE("a burst larger than memory keeps its earliest keys, and the rest fire from disk") {
    // Forty entries put inside the paged range, in shuffled order, against
    // room for eight: memory never holds more, and keeps the earliest keys,
    // so that all forty fire once each, in key order, the rest paged in.
    storage::MemKv kv;
    storage::Store store(kv);
    DueTimers timers(store, {.horizon_ms = 1000, .page_limit = 4, .memory_limit = 8});
    REQUIRE(timers.start(1000).is_ok());
    std::vector<DueEntry> entries;
    for (int i = 0; i < 40; ++i) {
      entries.push_back(due(1500 + i % 3, "tx" + std::to_string(100 + i)));
    }
    std::vector<DueEntry> shuffled = entries;
    std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(7));
    std::set<std::pair<int64_t, std::string>> written;
    for (const DueEntry& entry : shuffled) {
      write_put(store, entry);
      written.insert({entry.fire_at_ms, entry.tx_id});
      const bool kept = timers.on_put(entry);
      CHECK(timers.in_memory() <= 8);
      // Kept exactly when it is among the eight earliest keys written so far.
      const auto rank =
          std::distance(written.begin(), written.find({entry.fire_at_ms, entry.tx_id}));
      CHECK(kept == (rank < 8));
      // An entry that left memory is not forgotten: the pager reads it again.
      CHECK(!timers.forgot(entry.fire_at_ms, entry.tx_id));
    }
    CHECK(timers.in_memory() == 8);
    CHECK(timers.next_wake_ms() <= 1500);
    std::vector<DueEntry> fired;
    for (int turn = 0; turn < 100 && timers.next_wake_ms() && *timers.next_wake_ms() <= 2000;
         ++turn) {
      std::vector<DueEntry> out;
      REQUIRE(timers.poll(2000, out, 5).is_ok());
      CHECK(timers.in_memory() <= 8);
      for (const DueEntry& entry : out) {
        write_delete(store, entry.fire_at_ms, entry.tx_id);  // as the transition would
        fired.push_back(entry);
      }
    }
    // In due order (within a millisecond, memory keeps the order of the puts).
    CHECK(std::is_sorted(fired.begin(), fired.end(), [](const DueEntry& a, const DueEntry& b) {
      return a.fire_at_ms < b.fire_at_ms;
    }));
    const auto key_order = [](const DueEntry& a, const DueEntry& b) {
      return std::pair(a.fire_at_ms, a.tx_id) < std::pair(b.fire_at_ms, b.tx_id);
    };
    std::sort(fired.begin(), fired.end(), key_order);
    std::sort(entries.begin(), entries.end(), key_order);
    CHECK(fired == entries);  // each once
    CHECK(timers.in_memory() == 0);
    CHECK(!timers.next_wake_ms().has_value());
  }

  TEST_CASE("a page of entries all in the cursor's millisecond still makes progress") {
    storage::MemKv kv;
    storage::Store store(kv);
    std::vector<std::string> ids;
    for (int i = 0; i < 30; ++i) {
      ids.push_back("tx" + std::to_string(100 + i));
      write_put(store, due(2000, ids.back()));
    }
    DueTimers timers(store, {.horizon_ms = 0, .page_limit = 7});
    REQUIRE(timers.start(2000).is_ok());
    CHECK(timers.in_memory() == 7);
    std::vector<DueEntry> fired;
    int polls = 0;
    while (timers.next_wake_ms() && *timers.next_wake_ms() <= 2000) {
      const size_t before = fired.size();
      REQUIRE(timers.poll(2000, fired).is_ok());
      CHECK(fired.size() - before <= 7 + 7);  // bounded chunks per loop turn
      CHECK(timers.in_memory() <= 7);
      ++polls;
      REQUIRE(polls < 20);
    }
    CHECK(ids_of(fired) == ids);
  }

  TEST_CASE("a fresh DueTimers over the same store fires overdue entries at once") {
    storage::MemKv kv;
    storage::Store store(kv);
    {
      DueTimers before(store, {.horizon_ms = 60'000, .page_limit = 5});
      REQUIRE(before.start(10'000).is_ok());
      for (int i = 0; i < 12; ++i) {
        const DueEntry entry = due(10'000 + 1000 * i, "t" + std::to_string(i));
        write_put(store, entry);
        (void)before.on_put(entry);
      }
      // "kill -9": the first timers are simply abandoned.
    }
    DueTimers after(store, {.horizon_ms = 60'000, .page_limit = 5});
    const int64_t restart_ms = 10'000 + 7000;
    REQUIRE(after.start(restart_ms).is_ok());
    CHECK(after.next_wake_ms() <= restart_ms);
    const auto fired = poll_until_idle(after, restart_ms);
    REQUIRE(fired.size() == 8);  // t0 .. t7
    for (size_t i = 0; i < fired.size(); ++i) CHECK(fired[i].tx_id == "t" + std::to_string(i));
    // Paged in pages of 5 (t0..t4, t5..t9): t8 and t9 wait in memory; t10 and
    // t11 are still on disk.
    CHECK(after.in_memory() == 2);
    REQUIRE(after.next_wake_ms().has_value());
    CHECK(*after.next_wake_ms() > restart_ms);
    CHECK(*after.next_wake_ms() <= 18'000);
    CHECK(ids_of(poll_until_idle(after, 21'000)) ==
          std::vector<std::string>{"t8", "t9", "t10", "t11"});
  }

  TEST_CASE("a wall-clock step back never fires an entry before its time") {
    storage::MemKv kv;
    storage::Store store(kv);
    DueTimers timers(store, {.horizon_ms = 1000, .page_limit = 16});
    REQUIRE(timers.start(100'000).is_ok());
    CHECK(poll_until_idle(timers, 100'500).empty());
    const DueEntry entry = due(95'000, "x");  // due in 5 s by the clock after the step
    write_put(store, entry);
    (void)timers.on_put(entry);
    CHECK(poll_until_idle(timers, 90'000).empty());
    CHECK(poll_until_idle(timers, 94'999).empty());
    CHECK(ids_of(poll_until_idle(timers, 95'000)) == std::vector<std::string>{"x"});
  }

  // A brute-force model: the live due entries on disk, by key.
  struct Model {
    std::map<std::pair<int64_t, std::string>, DueEntry> live;
    std::map<std::string, int64_t> fire_of_tx;       // a transaction has at most one entry
    std::set<std::pair<int64_t, std::string>> kept;  // live entries on_put kept in memory
  };

  int64_t random_fire(std::mt19937_64 & rng, int64_t now) {
    switch (rng() % 6) {
      case 0:
        return std::max<int64_t>(0, now - static_cast<int64_t>(rng() % 100));  // overdue
      case 1:
        return now + static_cast<int64_t>(rng() % 30);
      case 2:
        return now + 40 + static_cast<int64_t>(rng() % 3);  // clustered near the horizon
      case 3:
        return (now / 100 + 1) * 100;  // one shared millisecond
      case 4:
        return now + static_cast<int64_t>(rng() % 400);
      default:
        return now + static_cast<int64_t>(rng() % 30'000);  // far beyond
    }
  }

  void random_put(std::mt19937_64 & rng, storage::Store & store, DueTimers & timers, Model & m,
                  int64_t now) {
    const std::string tx_id = "tx" + std::to_string(rng() % 80);
    const DueEntry entry = due(random_fire(rng, now), tx_id, static_cast<uint32_t>(rng() % 5));
    const auto key = std::make_pair(entry.fire_at_ms, tx_id);
    const auto old = m.fire_of_tx.find(tx_id);
    storage::Batch batch;
    if (old != m.fire_of_tx.end()) batch.delete_due(old->second, tx_id);
    batch.put_due(entry);
    REQUIRE(store.write(batch).is_ok());
    // Deletes before puts (the documented order); with distinct keys either works.
    const bool delete_first =
        old == m.fire_of_tx.end() || old->second == entry.fire_at_ms || rng() % 2 == 0;
    if (old != m.fire_of_tx.end() && delete_first) timers.on_delete(old->second, tx_id);
    const bool kept = timers.on_put(entry);
    if (old != m.fire_of_tx.end() && !delete_first) timers.on_delete(old->second, tx_id);
    if (old != m.fire_of_tx.end()) {
      m.live.erase({old->second, tx_id});
      m.kept.erase({old->second, tx_id});
    }
    m.live[key] = entry;
    m.fire_of_tx[tx_id] = entry.fire_at_ms;
    if (kept) m.kept.insert(key);
  }

  void random_delete(std::mt19937_64 & rng, storage::Store & store, DueTimers & timers, Model & m) {
    if (m.live.empty()) return;
    auto it = m.live.begin();
    std::advance(it, static_cast<long>(rng() % m.live.size()));
    const auto key = it->first;
    write_delete(store, key.first, key.second);
    timers.on_delete(key.first, key.second);
    m.fire_of_tx.erase(key.second);
    m.kept.erase(key);
    m.live.erase(key);
  }

  // Polls like the server loop and deletes what fired, as the caller's
  // transition batch would; checks every fired entry against the model.
  void poll_and_check(storage::Store & store, DueTimers & timers, Model & m, int64_t now,
                      size_t page_limit, size_t memory_limit) {
    int64_t last_fire = std::numeric_limits<int64_t>::min();
    for (int turn = 0;; ++turn) {
      REQUIRE(turn < 10'000);
      std::vector<DueEntry> out;
      REQUIRE(timers.poll(now, out).is_ok());
      for (const DueEntry& entry : out) {
        const auto key = std::make_pair(entry.fire_at_ms, entry.tx_id);
        REQUIRE(entry.fire_at_ms <= now);        // never early
        REQUIRE(entry.fire_at_ms >= last_fire);  // in due order, across the turns too
        last_fire = entry.fire_at_ms;
        const auto it = m.live.find(key);
        REQUIRE(it != m.live.end());  // never twice, never a deleted one
        REQUIRE(it->second == entry);
        write_delete(store, key.first, key.second);
        m.live.erase(it);
        m.kept.erase(key);
        m.fire_of_tx.erase(entry.tx_id);
      }
      REQUIRE(timers.in_memory() <= page_limit + m.kept.size());
      REQUIRE(timers.in_memory() <= memory_limit);
      const auto wake = timers.next_wake_ms();
      if (!wake.has_value() || *wake > now) break;
    }
    // Never missed: nothing due by now is left, and the next wake is not late.
    if (!m.live.empty()) {
      REQUIRE(m.live.begin()->first.first > now);
      const auto wake = timers.next_wake_ms();
      REQUIRE(wake.has_value());
      REQUIRE(*wake <= m.live.begin()->first.first);
    }
  }

  TEST_CASE("randomized against a brute-force model, with small pages, horizon and memory") {
    constexpr size_t kMemoryLimits[] = {4096, 9, 3};
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      CAPTURE(seed);
      std::mt19937_64 rng(seed);
      storage::MemKv kv;
      storage::Store store(kv);
      // Most seeds with room for about a page, or less than one, so that
      // bursts overflow memory and go back to disk.
      const DueTimers::Options options{
          .horizon_ms = 50, .page_limit = 7, .memory_limit = kMemoryLimits[seed % 3]};
      auto timers = std::make_unique<DueTimers>(store, options);
      Model m;
      int64_t now = 1'000'000;
      REQUIRE(timers->start(now).is_ok());
      for (int op = 0; op < 4000; ++op) {
        const uint64_t kind = rng() % 20;
        if (kind < 9) {
          random_put(rng, store, *timers, m, now);
        } else if (kind < 12) {
          random_delete(rng, store, *timers, m);
        } else if (kind == 12 && rng() % 8 == 0) {
          // Restart: a fresh DueTimers over the same store.
          timers = std::make_unique<DueTimers>(store, options);
          m.kept.clear();
          REQUIRE(timers->start(now).is_ok());
          poll_and_check(store, *timers, m, now, options.page_limit, options.memory_limit);
        } else if (kind < 16 && timers->next_wake_ms()) {
          // Wake exactly when asked, as the server's one timer does.
          now = std::max(now, *timers->next_wake_ms());
          poll_and_check(store, *timers, m, now, options.page_limit, options.memory_limit);
        } else {
          const uint64_t size = rng() % 10;
          now += size < 6   ? static_cast<int64_t>(rng() % 20)
                 : size < 9 ? static_cast<int64_t>(rng() % 300)
                            : static_cast<int64_t>(rng() % 20'000);
          poll_and_check(store, *timers, m, now, options.page_limit, options.memory_limit);
        }
      }
      // Drain: follow next_wake_ms like the server's one timer would.
      for (int wake = 0; wake < 100'000 && timers->next_wake_ms(); ++wake) {
        now = std::max(now, *timers->next_wake_ms());
        poll_and_check(store, *timers, m, now, options.page_limit, options.memory_limit);
      }
      REQUIRE(m.live.empty());
      REQUIRE(timers->in_memory() == 0);
      REQUIRE(kv.size(storage::Cf::kDue) == 0);
    }
  }

}  // TEST_SUITE

}  // namespace tarde::engine
