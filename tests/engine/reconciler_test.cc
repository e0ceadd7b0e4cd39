// The periodic reconciler's engine side: stuck transactions in each state,
// repairs of lost timers and requests (on disk and in memory), the alert
// rate limit, and passes spread over bounded slices. ManualClock and MemKv:
// no threads, no sleeps.
#include "engine/reconciler.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "base/figures.h"
#include "storage/codec.h"
#include "storage/keys.h"
#include "storage/mem_kv.h"
#include "tests/support/engine_fixture.h"

using namespace tarde;
using engine::Answer;
using engine::Reconciler;
using storage::TxState;
using testing::enqueue_args;

namespace {

constexpr int64_t kHourMs = 3600 * 1000;

// A Kv whose reads and scans fail while `failing` is set.
class FailingKv final : public storage::Kv {
 public:
  explicit FailingKv(storage::Kv& inner) : inner_(inner) {}
  Result<std::optional<std::string>> get(storage::Cf cf, std::string_view key) override {
    if (failing) return Status::io_error("injected read error");
    return inner_.get(cf, key);
  }
  Status scan(storage::Cf cf, std::string_view lower, std::string_view upper,
              const storage::KvVisitor& visit) override {
    if (failing) return Status::io_error("injected read error");
    return inner_.scan(cf, lower, upper, visit);
  }
  Status write(const storage::KvBatch& batch) override { return inner_.write(batch); }
  bool failing = false;

 private:
  storage::Kv& inner_;
};

// A clock whose steady time moves 1 ms each time it is read: a slow disk.
class TickingClock final : public Clock {
 public:
  explicit TickingClock(const Clock& wall) : wall_(wall) {}
  int64_t now_wall_ms() const override { return wall_.now_wall_ms(); }
  int64_t now_steady_ms() const override { return ++steady_ms_; }

 private:
  const Clock& wall_;
  mutable int64_t steady_ms_ = 0;
};

struct Rig {
  explicit Rig(Reconciler::Options options = {}) {
    reconciler = std::make_unique<Reconciler>(*f.engine, *f.store, f.clock, options);
    f.engine->set_transition_listener(
        [this](const engine::TransitionNote& note) { reconciler->on_transition(note); });
  }

  // Runs slices until the pass is done; returns every line reported.
  Reconciler::SliceReport pass() {
    Reconciler::SliceReport all;
    for (int slices = 0; slices < 100000; ++slices) {
      Reconciler::SliceReport report;
      REQUIRE(reconciler->slice(&report).is_ok());
      all.repairs.insert(all.repairs.end(), report.repairs.begin(), report.repairs.end());
      all.alerts.insert(all.alerts.end(), report.alerts.begin(), report.alerts.end());
      all.examined += report.examined;
      if (report.pass_done) {
        all.pass_done = true;
        return all;
      }
    }
    FAIL("the pass never ended");
    return all;
  }
  void configure(const std::string& queue, int64_t stuck_after_ms,
                 int64_t response_timeout_ms = 0) {
    storage::QueueConfig config = f.engine->config(queue);
    config.stuck_after_ms = stuck_after_ms;
    config.response_timeout_ms = response_timeout_ms;
    REQUIRE(f.engine->set_config(queue, config).is_ok());
  }
  void enqueue(const std::string& queue, const std::string& tx_id, bool sent = false,
               std::optional<int64_t> delay_ms = std::nullopt) {
    auto args = enqueue_args(queue, tx_id);
    args.sent = sent;
    args.delay_ms = delay_ms;
    REQUIRE(f.engine->enqueue(args).is_ok());
  }
  void run_timers() {
    for (;;) {
      auto more = f.engine->run_timers();
      REQUIRE(more.is_ok());
      if (!more.value()) break;
    }
  }
  bool has_key(storage::Cf cf, const std::string& key) {
    auto value = kv.get(cf, key);
    REQUIRE(value.is_ok());
    return value.value().has_value();
  }
  void put_record(const storage::TxRecord& rec) {
    storage::Batch batch;
    batch.put_tx(rec);
    REQUIRE(f.store->write(batch).is_ok());
  }

  storage::MemKv kv;
  testing::EngineFixture f{kv};
  std::unique_ptr<Reconciler> reconciler;
};

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& line : lines) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_SUITE("reconciler") {
  TEST_CASE("IN_FLIGHT without a response timeout is stuck after stuck_after, alerted once") {
    Rig rig;
    rig.configure("q", kHourMs);
    rig.enqueue("q", "TX-1", /*sent=*/true);
    CHECK(rig.pass().alerts.empty());
    CHECK(rig.reconciler->stuck("q", TxState::kInFlight) == 0);

    rig.f.clock.advance_ms(kHourMs);  // exactly stuck_after: not yet
    CHECK(rig.pass().alerts.empty());
    rig.f.clock.advance_ms(1000);
    const auto report = rig.pass();
    REQUIRE(report.alerts.size() == 1);
    CHECK(report.alerts[0] ==
          "transaction TX-1 of queue q is stuck in IN_FLIGHT for 3601s: no answer, and no "
          "response timeout will settle it");
    CHECK(rig.reconciler->stuck("q", TxState::kInFlight) == 1);

    // Still stuck on the next pass: counted, not alerted again.
    rig.f.clock.advance_ms(60'000);
    CHECK(rig.pass().alerts.empty());
    CHECK(rig.reconciler->stuck("q", TxState::kInFlight) == 1);

    // It moves: it stops counting at once, without waiting for a pass.
    REQUIRE(rig.f.engine->respond("TX-1", 1, Answer::kSuccess, "", std::nullopt).is_ok());
    CHECK(rig.reconciler->stuck("q", TxState::kInFlight) == 0);
    CHECK(rig.pass().alerts.empty());
  }

  TEST_CASE("IN_FLIGHT with a response timeout counts only once the timeout is overdue") {
    Rig rig;
    rig.configure("q", kHourMs, /*response_timeout_ms=*/2 * kHourMs);
    rig.enqueue("q", "TX-1", /*sent=*/true);
    rig.f.clock.advance_ms(2 * kHourMs);  // past stuck_after; the timeout will settle it
    CHECK(rig.pass().alerts.empty());
    rig.f.clock.advance_ms(61'000);  // its timer is more than a minute late (never run)
    const auto report = rig.pass();
    REQUIRE(report.alerts.size() == 1);
    CHECK(mentions(report.alerts, "its response timeout has not fired, 61s late"));
    CHECK(rig.reconciler->stuck("q", TxState::kInFlight) == 1);
    rig.run_timers();  // it settles: no longer stuck
    CHECK(rig.reconciler->stuck("q", TxState::kInFlight) == 0);
  }

  TEST_CASE("stuck_after=0 never reports a queue's IN_FLIGHT or ready work") {
    Rig rig;
    rig.configure("q", 0);
    rig.enqueue("q", "TX-1", /*sent=*/true);
    rig.enqueue("q", "TX-2");
    rig.f.clock.advance_ms(100 * kHourMs);
    CHECK(rig.pass().alerts.empty());
    CHECK(rig.reconciler->stuck("q", TxState::kInFlight) == 0);
    CHECK(rig.reconciler->stuck("q", TxState::kSending) == 0);
  }

  TEST_CASE("a ready request not handed out for stuck_after is stuck; leased or paused is not") {
    Rig rig;
    rig.configure("q", kHourMs);
    rig.configure("p", kHourMs);
    rig.enqueue("q", "TX-1");
    rig.enqueue("q", "TX-2");
    rig.enqueue("p", "TX-P");
    storage::QueueConfig paused = rig.f.engine->config("p");
    paused.paused = true;
    REQUIRE(rig.f.engine->set_config("p", paused).is_ok());
    rig.f.clock.advance_ms(kHourMs + 5000);
    const auto report = rig.pass();
    CHECK(report.alerts.size() == 2);
    CHECK(mentions(report.alerts,
                   "transaction TX-1 of queue q is stuck in SENDING for 3605s: its request is "
                   "ready but no dispatcher took it"));
    CHECK(rig.reconciler->stuck("q", TxState::kSending) == 2);
    CHECK(rig.reconciler->stuck("p", TxState::kSending) == 0);

    // A dispatcher takes one (a hand-out is not a transition): the next
    // pass no longer counts it.
    auto got = rig.f.engine->reserve("q", 1);
    REQUIRE(got.is_ok());
    REQUIRE(got.value().has_value());
    rig.pass();
    CHECK(rig.reconciler->stuck("q", TxState::kSending) == 1);
  }

  TEST_CASE("SCHEDULED whose retry is more than a minute overdue is stuck until it fires") {
    Rig rig;
    rig.enqueue("q", "TX-1", false, /*delay_ms=*/5000);
    rig.f.clock.advance_ms(5000 + 60'000);  // a minute late: not yet
    CHECK(rig.pass().alerts.empty());
    rig.f.clock.advance_ms(1000);
    const auto report = rig.pass();
    REQUIRE(report.alerts.size() == 1);
    CHECK(report.alerts[0] ==
          "transaction TX-1 of queue q is stuck in SCHEDULED for 61s: its retry timer has not "
          "fired");
    CHECK(report.repairs.empty());  // the wheel holds it: late, not lost
    CHECK(rig.reconciler->stuck("q", TxState::kScheduled) == 1);
    rig.run_timers();
    CHECK(rig.f.tx("TX-1").state == TxState::kSending);
    CHECK(rig.reconciler->stuck("q", TxState::kScheduled) == 0);
  }

  TEST_CASE("a SCHEDULED transaction whose due entry was lost gets it back, and fires once") {
    Rig rig;
    rig.enqueue("q", "TX-1", false, /*delay_ms=*/5000);
    const storage::TxRecord rec = rig.f.tx("TX-1");
    const std::string key = storage::due_key(rec.due_at_ms, "TX-1");
    storage::KvBatch lose;
    lose.del(storage::Cf::kDue, key);
    REQUIRE(rig.kv.write(lose).is_ok());

    const auto report = rig.pass();
    REQUIRE(report.repairs.size() == 1);
    CHECK(report.repairs[0] == "repaired TX-1: its timer is missing from due");
    CHECK(rig.has_key(storage::Cf::kDue, key));
    CHECK(rig.reconciler->repairs() == 1);
    CHECK(rig.pass().repairs.empty());  // repaired for good

    rig.f.clock.advance_ms(5000);
    rig.run_timers();
    CHECK(rig.f.tx("TX-1").state == TxState::kSending);
    CHECK(rig.f.engine->stats().fired == 1);
  }

  TEST_CASE("a due entry the wheel never loaded is given back to memory and fires") {
    Rig rig;
    rig.enqueue("q", "TX-1", false, /*delay_ms=*/5000);
    // Behind the engine's back the timer moves to an instant the pager has
    // already read past: memory holds only the old one.
    storage::TxRecord rec = rig.f.tx("TX-1");
    const int64_t moved_ms = rec.due_at_ms - 2000;
    storage::Batch batch;
    batch.delete_due(rec.due_at_ms, "TX-1");
    rec.due_at_ms = moved_ms;
    rec.next_fire_at_ms = moved_ms;
    batch.put_tx(rec);
    batch.put_due({moved_ms, "TX-1", storage::DueKind::kRetry, rec.next_attempt});
    REQUIRE(rig.f.store->write(batch).is_ok());

    rig.f.clock.advance_ms(10'000);
    rig.run_timers();  // the old entry fires stale; the new one is never read
    CHECK(rig.f.tx("TX-1").state == TxState::kScheduled);

    const auto report = rig.pass();
    REQUIRE(report.repairs.size() == 1);
    CHECK(mentions(report.repairs, "restored TX-1: its timer was on disk but forgotten"));
    rig.run_timers();
    CHECK(rig.f.tx("TX-1").state == TxState::kSending);
  }

  TEST_CASE("a SENDING transaction whose ready entry was lost gets it back") {
    Rig rig;
    rig.enqueue("q", "TX-1");
    const storage::TxRecord rec = rig.f.tx("TX-1");
    const std::string key = storage::ready_key("q", rec.ready_at_ms, rec.ready_seq);
    storage::KvBatch lose;
    lose.del(storage::Cf::kReady, key);
    REQUIRE(rig.kv.write(lose).is_ok());

    const auto report = rig.pass();
    REQUIRE(report.repairs.size() == 1);
    CHECK(report.repairs[0] == "repaired TX-1: its request is missing from ready");
    CHECK(rig.has_key(storage::Cf::kReady, key));
    auto got = rig.f.engine->reserve("q", 1);
    REQUIRE(got.is_ok());
    REQUIRE(got.value().has_value());
    CHECK(got.value()->tx_id == "TX-1");
  }

  TEST_CASE("a request neither ready in memory nor leased is made ready again") {
    Rig rig;
    rig.enqueue("q", "TX-1");
    rig.enqueue("q", "TX-2");
    auto first = rig.f.engine->reserve("q", 1);  // pages the queue in
    REQUIRE(first.is_ok());
    REQUIRE(first.value().has_value());
    CHECK(first.value()->tx_id == "TX-1");
    // Behind the engine's back TX-2's request moves to a key already paged.
    storage::TxRecord rec = rig.f.tx("TX-2");
    storage::Batch batch;
    batch.delete_ready("q", rec.ready_at_ms, rec.ready_seq);
    rec.ready_seq += 1000;
    batch.put_tx(rec);
    batch.put_ready({"q", rec.ready_at_ms, rec.ready_seq, "TX-2", rec.next_attempt});
    REQUIRE(rig.f.store->write(batch).is_ok());
    auto none = rig.f.engine->reserve("q", 1);
    REQUIRE(none.is_ok());
    CHECK_FALSE(none.value().has_value());  // forgotten: nothing to hand out

    const auto report = rig.pass();
    REQUIRE(report.repairs.size() == 1);
    CHECK(mentions(report.repairs, "restored TX-2: its request was on disk but neither ready"));
    auto got = rig.f.engine->reserve("q", 1);
    REQUIRE(got.is_ok());
    REQUIRE(got.value().has_value());
    CHECK(got.value()->tx_id == "TX-2");
    // The leased TX-1 was left alone.
    CHECK(rig.pass().repairs.empty());
  }

  TEST_CASE("alerts are rate-limited per minute, then one summary line") {
    Reconciler::Options options;
    options.alerts_per_minute = 3;
    Rig rig(options);
    rig.configure("q", kHourMs);
    for (int i = 0; i < 10; ++i) rig.enqueue("q", "TX-" + std::to_string(i), /*sent=*/true);
    rig.f.clock.advance_ms(kHourMs + 1);
    auto report = rig.pass();
    CHECK(report.alerts.size() == 3);
    CHECK(rig.reconciler->stuck("q", TxState::kInFlight) == 10);
    rig.f.clock.advance_ms(59'000);
    CHECK(rig.pass().alerts.empty());  // the same minute; nothing new
    rig.f.clock.advance_ms(1000);
    report = rig.pass();
    REQUIRE(report.alerts.size() == 1);
    CHECK(report.alerts[0] ==
          "7 more transactions were found stuck in the last minute and not logged one by one "
          "(see stuck_transactions)");
    // A new minute: newly stuck ones are alerted again.
    rig.enqueue("q", "TX-new", /*sent=*/true);
    rig.f.clock.advance_ms(kHourMs + 1);
    report = rig.pass();
    CHECK(report.alerts.size() == 1);
    CHECK(mentions(report.alerts, "TX-new"));
  }

  TEST_CASE("beyond tracked_max stuck transactions are counted per pass, without names") {
    Reconciler::Options options;
    options.tracked_max = 2;
    Rig rig(options);
    rig.configure("q", kHourMs);
    for (int i = 0; i < 5; ++i) rig.enqueue("q", "TX-" + std::to_string(i), /*sent=*/true);
    rig.f.clock.advance_ms(kHourMs + 1);
    CHECK(rig.pass().alerts.size() == 2);
    CHECK(rig.reconciler->stuck("q", TxState::kInFlight) == 5);
    for (int i = 0; i < 5; ++i) {
      REQUIRE(
          rig.f.engine->respond("TX-" + std::to_string(i), 1, Answer::kSuccess, "", {}).is_ok());
    }
    rig.pass();
    CHECK(rig.reconciler->stuck("q", TxState::kInFlight) == 0);
  }

  TEST_CASE("a big store is covered over several slices, each bounded by keys_per_slice") {
    Reconciler::Options options;
    options.keys_per_slice = 64;
    Rig rig(options);
    for (int i = 0; i < 1000; ++i) rig.enqueue("q", "TX-" + std::to_string(10000 + i));
    size_t slices = 0;
    size_t examined = 0;
    for (;;) {
      Reconciler::SliceReport report;
      REQUIRE(rig.reconciler->slice(&report).is_ok());
      CHECK(report.examined <= 64);
      examined += report.examined;
      slices += 1;
      if (report.pass_done) break;
      CHECK(rig.reconciler->in_pass());
    }
    CHECK(slices == 16);  // 15 full slices and one of 40
    CHECK(examined == 1000);
    CHECK(rig.reconciler->passes() == 1);
    CHECK(rig.reconciler->last_pass_examined() == 1000);
    CHECK_FALSE(rig.reconciler->in_pass());
    // The next pass starts over from the first key.
    Reconciler::SliceReport report;
    REQUIRE(rig.reconciler->slice(&report).is_ok());
    CHECK(report.examined == 64);
  }

  TEST_CASE("a slice stops reading when its time budget is spent") {
    storage::MemKv kv;
    testing::EngineFixture f{kv};
    for (int i = 0; i < 100; ++i) {
      REQUIRE(f.engine->enqueue(enqueue_args("q", "TX-" + std::to_string(i))).is_ok());
    }
    TickingClock slow(f.clock);  // 1 ms per read of the clock
    Reconciler::Options options;
    options.slice_budget_ms = 3;
    Reconciler reconciler(*f.engine, *f.store, slow, options);
    Reconciler::SliceReport report;
    REQUIRE(reconciler.slice(&report).is_ok());
    CHECK(report.examined >= 1);
    CHECK(report.examined <= 3);
    CHECK_FALSE(report.pass_done);
    size_t examined = report.examined;
    while (!report.pass_done) {
      REQUIRE(reconciler.slice(&report).is_ok());
      examined += report.examined;
    }
    CHECK(examined == 100);
    CHECK(reconciler.last_pass_ms() > 0);
  }

  TEST_CASE("a store error ends the slice; the next one reads the same transactions") {
    storage::MemKv mem;
    FailingKv kv(mem);
    testing::EngineFixture f{kv};
    for (int i = 0; i < 10; ++i) {
      REQUIRE(f.engine->enqueue(enqueue_args("q", "TX-" + std::to_string(i))).is_ok());
    }
    Reconciler::Options options;
    options.keys_per_slice = 4;
    Reconciler reconciler(*f.engine, *f.store, f.clock, options);
    Reconciler::SliceReport report;
    REQUIRE(reconciler.slice(&report).is_ok());
    CHECK(report.examined == 4);
    kv.failing = true;
    Status failed = reconciler.slice(&report);
    CHECK(failed.code() == Status::Code::kIoError);
    CHECK(reconciler.in_pass());
    kv.failing = false;
    size_t examined = 4;
    do {
      REQUIRE(reconciler.slice(&report).is_ok());
      examined += report.examined;
    } while (!report.pass_done);
    CHECK(examined == 10);
    CHECK(reconciler.examined() == 10);
  }

  TEST_CASE("figures: stuck_transactions by queue and state, STATS stuck.<queue>.<state>") {
    Rig rig;
    Figures figures;
    rig.reconciler->declare_figures(figures);
    rig.configure("q", kHourMs);
    rig.enqueue("q", "TX-1", /*sent=*/true);
    rig.f.clock.advance_ms(kHourMs + 1);
    rig.pass();
    const std::string page = figures.prometheus_text();
    CHECK(page.find("tarde_stuck_transactions{queue=\"q\",state=\"IN_FLIGHT\"} 1") !=
          std::string::npos);
    CHECK(page.find("tarde_reconcile_passes_total 1") != std::string::npos);
    bool seen = false;
    for (const auto& [name, value] : figures.stats_lines()) {
      if (name == "stuck.q.IN_FLIGHT") seen = value == "1";
    }
    CHECK(seen);
  }
}
