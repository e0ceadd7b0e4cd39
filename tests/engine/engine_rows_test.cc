// Every row of PROTOCOL.md's state machine through the Engine, with its stale
// and duplicate cases, on a MemKv and a ManualClock.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "engine/engine.h"
#include "engine/invariants.h"
#include "storage/mem_kv.h"
#include "tests/support/engine_fixture.h"

using namespace tarde;
using engine::Answer;
using engine::Outcome;
using storage::TxState;
using testing::enqueue_args;

namespace {

constexpr int64_t kHourMs = 3600 * 1000;

struct Rig {
  storage::MemKv kv;
  testing::EngineFixture f{kv};

  engine::TxReply enqueue(const engine::EnqueueArgs& args) {
    auto reply = f.engine->enqueue(args);
    REQUIRE(reply.is_ok());
    return reply.value();
  }
  engine::TxReply enqueue(const std::string& tx_id) {
    return enqueue(enqueue_args("pagos", tx_id));
  }
  std::optional<engine::HandOut> reserve(uint64_t conn = 1, const std::string& queue = "pagos") {
    auto got = f.engine->reserve(queue, conn);
    REQUIRE(got.is_ok());
    return got.value();
  }
  engine::TxReply sent(const std::string& tx_id, uint32_t attempt) {
    auto reply = f.engine->sent(tx_id, attempt);
    REQUIRE(reply.is_ok());
    return reply.value();
  }
  engine::TxReply respond(const std::string& tx_id, uint32_t attempt, Answer answer,
                          std::optional<int64_t> retry_after = std::nullopt,
                          const std::string& reason = "") {
    auto reply = f.engine->respond(tx_id, attempt, answer, reason, retry_after);
    REQUIRE(reply.is_ok());
    return reply.value();
  }
  engine::TxReply release(uint64_t conn, const std::string& tx_id, uint32_t attempt,
                          int64_t delay_ms = 0) {
    auto reply = f.engine->release(conn, tx_id, attempt, delay_ms, "");
    REQUIRE(reply.is_ok());
    return reply.value();
  }
  engine::TxReply resolve(const std::string& tx_id, TxState terminal) {
    auto reply = f.engine->resolve(tx_id, terminal, "");
    REQUIRE(reply.is_ok());
    return reply.value();
  }
  void advance(int64_t ms) {
    f.clock.advance_ms(ms);
    for (;;) {
      auto more = f.engine->run_timers();
      REQUIRE(more.is_ok());
      if (!more.value()) break;
    }
  }
  // Takes a transaction through hand-out and SENT of its next request.
  void send_next(const std::string& tx_id, uint32_t attempt) {
    auto got = reserve();
    REQUIRE(got.has_value());
    REQUIRE(got->tx_id == tx_id);
    REQUIRE(got->attempt == attempt);
    REQUIRE(sent(tx_id, attempt).outcome == Outcome::kOk);
  }
};

void check_summary(const engine::TxReply& reply, Outcome outcome, TxState state, uint32_t attempt,
                   uint32_t next_attempt) {
  CHECK(reply.outcome == outcome);
  CHECK(reply.summary.state == state);
  CHECK(reply.summary.attempt == attempt);
  CHECK(reply.summary.next_attempt == next_attempt);
}

}  // namespace

TEST_CASE(
    "ENQUEUE creates SENDING with attempt 1 queued; a known id is EXISTS and changes nothing") {
  Rig rig;
  check_summary(rig.enqueue("TX-1"), Outcome::kCreated, TxState::kSending, 0, 1);
  CHECK(rig.enqueue("TX-1").summary.next_fire_at_ms == 0);
  const auto before = rig.f.dump();
  check_summary(rig.enqueue("TX-1"), Outcome::kExists, TxState::kSending, 0, 1);
  CHECK(rig.f.dump() == before);
  CHECK(rig.f.engine->stats().ready == 1);
}

TEST_CASE("ENQUEUE sent=1 starts IN_FLIGHT at attempt 1; delay starts SCHEDULED") {
  Rig rig;
  auto args = enqueue_args("pagos", "TX-S");
  args.sent = true;
  check_summary(rig.enqueue(args), Outcome::kCreated, TxState::kInFlight, 1, 0);
  CHECK_FALSE(rig.reserve().has_value());

  auto delayed = enqueue_args("pagos", "TX-D");
  delayed.delay_ms = 5000;
  const auto reply = rig.enqueue(delayed);
  check_summary(reply, Outcome::kCreated, TxState::kScheduled, 0, 1);
  CHECK(reply.summary.next_fire_at_ms == rig.f.clock.now_wall_ms() + 5000);
  rig.advance(4999);
  CHECK_FALSE(rig.reserve().has_value());
  rig.advance(1);
  auto got = rig.reserve();
  REQUIRE(got.has_value());
  CHECK(got->tx_id == "TX-D");
  CHECK(got->attempt == 1);

  auto both = enqueue_args("pagos", "TX-X");
  both.sent = true;
  both.delay_ms = 10;
  auto refused = rig.f.engine->enqueue(both);
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.status().code() == Status::Code::kInvalidArgument);
}

TEST_CASE("SENDING n --SENT n--> IN_FLIGHT n; duplicates and other attempts are STALE") {
  Rig rig;
  rig.enqueue("TX-1");
  auto got = rig.reserve();
  REQUIRE(got.has_value());
  CHECK(got->handouts == 1);
  CHECK(got->payload == "payload");
  CHECK(rig.sent("TX-1", 2).outcome == Outcome::kStale);
  check_summary(rig.sent("TX-1", 1), Outcome::kOk, TxState::kInFlight, 1, 0);
  const auto before = rig.f.dump();
  check_summary(rig.sent("TX-1", 1), Outcome::kStale, TxState::kInFlight, 1, 0);
  CHECK(rig.f.dump() == before);
  CHECK(rig.sent("NOPE", 1).outcome == Outcome::kNotFound);
  CHECK(rig.f.engine->stats().leased == 0);
}

TEST_CASE("IN_FLIGHT --SUCCESS--> SUCCEEDED, --REJECTED--> FAILED; repeats are STALE") {
  Rig rig;
  rig.enqueue("TX-OK");
  rig.enqueue("TX-NO");
  rig.send_next("TX-OK", 1);
  rig.send_next("TX-NO", 1);
  check_summary(rig.respond("TX-OK", 1, Answer::kSuccess), Outcome::kOk, TxState::kSucceeded, 1, 0);
  check_summary(rig.respond("TX-NO", 1, Answer::kRejected), Outcome::kOk, TxState::kFailed, 1, 0);
  CHECK(rig.f.tx("TX-NO").reason == "REJECTED");
  CHECK(rig.respond("TX-OK", 1, Answer::kCancelled).outcome == Outcome::kStale);
  CHECK(rig.respond("TX-NO", 1, Answer::kSuccess).outcome == Outcome::kStale);
  CHECK(rig.f.tx("TX-OK").state == TxState::kSucceeded);
}

TEST_CASE("an answer while SENDING implies SENT") {
  Rig rig;
  rig.enqueue("TX-1");
  REQUIRE(rig.reserve().has_value());
  check_summary(rig.respond("TX-1", 1, Answer::kSuccess), Outcome::kOk, TxState::kSucceeded, 1, 0);
  CHECK(rig.f.engine->stats().leased == 0);
  CHECK(rig.f.engine->stats().ready == 0);
}

TEST_CASE(
    "CANCELLED below max_attempts schedules n+1 at the persisted instant; a late answer is STALE") {
  Rig rig;
  rig.enqueue("TX-1");
  rig.send_next("TX-1", 1);
  const int64_t now = rig.f.clock.now_wall_ms();
  const auto reply = rig.respond("TX-1", 1, Answer::kCancelled);
  check_summary(reply, Outcome::kOk, TxState::kScheduled, 1, 2);
  CHECK(reply.summary.next_fire_at_ms == now + 2 * kHourMs);  // draw 0.5: no jitter
  CHECK(rig.f.tx("TX-1").due_at_ms == now + 2 * kHourMs);

  rig.f.random.set(0.0);  // a redelivered answer must not draw again
  const auto before = rig.f.dump();
  CHECK(rig.respond("TX-1", 1, Answer::kCancelled).outcome == Outcome::kStale);
  CHECK(rig.f.dump() == before);

  rig.advance(2 * kHourMs - 1);
  CHECK(rig.f.tx("TX-1").state == TxState::kScheduled);
  rig.advance(1);
  CHECK(rig.f.tx("TX-1").state == TxState::kSending);
  rig.send_next("TX-1", 2);
  CHECK(rig.respond("TX-1", 1, Answer::kSuccess).outcome ==
        Outcome::kStale);  // late answer of attempt 1
  check_summary(rig.respond("TX-1", 2, Answer::kSuccess), Outcome::kOk, TxState::kSucceeded, 2, 0);
}

TEST_CASE("max_attempts 4 means the original plus exactly three retries, then FAILED EXHAUSTED") {
  Rig rig;
  rig.enqueue("TX-1");
  std::vector<uint32_t> handed_out;
  for (;;) {
    auto got = rig.reserve();
    if (!got) break;
    handed_out.push_back(got->attempt);
    REQUIRE(rig.sent("TX-1", got->attempt).outcome == Outcome::kOk);
    rig.respond("TX-1", got->attempt, Answer::kCancelled);
    rig.advance(30 * kHourMs);
  }
  CHECK(handed_out == std::vector<uint32_t>{1, 2, 3, 4});
  const auto rec = rig.f.tx("TX-1");
  CHECK(rec.state == TxState::kFailed);
  CHECK(rec.reason == "EXHAUSTED");
  CHECK(rec.attempt == 4);
}

TEST_CASE(
    "TRANSIENT re-sends the same attempt after the transient backoff, at most max_transient "
    "times") {
  Rig rig;
  rig.enqueue("TX-1");
  rig.send_next("TX-1", 1);
  const int64_t now = rig.f.clock.now_wall_ms();
  const auto reply = rig.respond("TX-1", 1, Answer::kTransient);
  check_summary(reply, Outcome::kOk, TxState::kScheduled, 1, 1);
  CHECK(reply.summary.next_fire_at_ms == now + 1000);
  for (uint32_t k = 2; k <= 10; ++k) {
    rig.advance(200'000);
    rig.send_next("TX-1", 1);
    CHECK(rig.respond("TX-1", 1, Answer::kTransient).summary.state == TxState::kScheduled);
  }
  CHECK(rig.f.tx("TX-1").transients == 10);
  rig.advance(200'000);
  rig.send_next("TX-1", 1);
  check_summary(rig.respond("TX-1", 1, Answer::kTransient), Outcome::kOk, TxState::kFailed, 1, 0);
  CHECK(rig.f.tx("TX-1").reason == "TRANSIENT_EXHAUSTED");
  CHECK(rig.f.tx("TX-1").attempt == 1);  // max_attempts untouched
}

TEST_CASE("a CANCELLED answer resets the transient count") {
  Rig rig;
  rig.enqueue("TX-1");
  rig.send_next("TX-1", 1);
  rig.respond("TX-1", 1, Answer::kTransient);
  rig.advance(2000);
  rig.send_next("TX-1", 1);
  rig.respond("TX-1", 1, Answer::kCancelled);
  CHECK(rig.f.tx("TX-1").transients == 0);
}

TEST_CASE(
    "retry_after replaces the wait, bounded by cap; deadline fails instead of retrying late") {
  Rig rig;
  auto args = enqueue_args("pagos", "TX-1");
  args.cap_ms = 10'000;
  rig.enqueue(args);
  rig.send_next("TX-1", 1);
  const int64_t now = rig.f.clock.now_wall_ms();
  CHECK(rig.respond("TX-1", 1, Answer::kCancelled, 60'000).summary.next_fire_at_ms == now + 10'000);

  auto late = enqueue_args("pagos", "TX-2");
  late.deadline_ms = kHourMs;
  rig.enqueue(late);
  rig.send_next("TX-2", 1);
  check_summary(rig.respond("TX-2", 1, Answer::kCancelled), Outcome::kOk, TxState::kFailed, 1, 0);
  CHECK(rig.f.tx("TX-2").reason == "DEADLINE");
}

TEST_CASE("RELEASE by the lease holder re-queues; others get STALE; max_deliveries buries") {
  Rig rig;
  rig.enqueue("TX-1");
  REQUIRE(rig.reserve(7).has_value());
  CHECK(rig.release(8, "TX-1", 1).outcome == Outcome::kStale);
  CHECK(rig.release(7, "TX-1", 2).outcome == Outcome::kStale);
  check_summary(rig.release(7, "TX-1", 1, 1000), Outcome::kOk, TxState::kSending, 0, 1);
  CHECK_FALSE(rig.reserve(7).has_value());  // delayed by 1 s
  rig.advance(1000);
  for (uint32_t delivery = 2; delivery <= 4; ++delivery) {
    auto got = rig.reserve(7);
    REQUIRE(got.has_value());
    CHECK(got->handouts == delivery);
    CHECK(rig.release(7, "TX-1", 1).outcome == Outcome::kOk);
  }
  REQUIRE(rig.reserve(7).has_value());
  check_summary(rig.release(7, "TX-1", 1), Outcome::kBuried, TxState::kSending, 0, 1);
  CHECK_FALSE(rig.reserve(7).has_value());
  std::vector<storage::DeadLetter> letters;
  REQUIRE(rig.f.engine->dead_letters("pagos", 0, &letters).is_ok());
  REQUIRE(letters.size() == 1);
  CHECK(letters[0].attempt == 1);
  CHECK(letters[0].deliveries == 5);
  CHECK(letters[0].payload == "payload");
  CHECK(letters[0].failures.size() == 5);

  auto redriven = rig.f.engine->redrive("pagos", "TX-1");
  REQUIRE(redriven.is_ok());
  CHECK(redriven.value().outcome == Outcome::kOk);
  auto got = rig.reserve(7);
  REQUIRE(got.has_value());
  CHECK(got->handouts == 1);
  REQUIRE(rig.f.engine->dead_letters("pagos", 0, &letters).is_ok());
  CHECK(letters.empty());
  CHECK(rig.f.engine->redrive("pagos", "TX-1").value().outcome == Outcome::kNotFound);
}

TEST_CASE("an expired lease or a closed connection makes the request ready again") {
  Rig rig;
  rig.enqueue("TX-1");
  REQUIRE(rig.reserve(1).has_value());
  rig.advance(29'999);
  CHECK_FALSE(rig.reserve(2).has_value());
  rig.advance(1);
  auto got = rig.reserve(2);
  REQUIRE(got.has_value());
  CHECK(got->handouts == 2);
  CHECK(rig.f.tx("TX-1").failures.back().reason == "LEASE_EXPIRED");
  REQUIRE(rig.f.engine->connection_closed(2).is_ok());
  got = rig.reserve(3);
  REQUIRE(got.has_value());
  CHECK(got->handouts == 3);
  CHECK(rig.f.tx("TX-1").failures.back().reason == "DISCONNECTED");
}

TEST_CASE("closing a connection ends the leases it still holds, and only those") {
  Rig rig;
  for (const char* tx_id : {"TX-1", "TX-2", "TX-3", "TX-4", "TX-5"}) rig.enqueue(tx_id);
  CHECK_FALSE(rig.f.engine->holds_leases(1));
  std::vector<std::string> held;
  for (int i = 0; i < 4; ++i) held.push_back(rig.reserve(1)->tx_id);
  const std::string other = rig.reserve(2)->tx_id;
  CHECK(rig.f.engine->holds_leases(1));
  // Answered leases leave the connection's list: the first, one in the
  // middle and the last handed out.
  rig.respond(held[0], 1, Answer::kSuccess);
  rig.respond(held[2], 1, Answer::kSuccess);
  rig.respond(held[3], 1, Answer::kSuccess);
  CHECK(rig.f.engine->holds_leases(1));
  REQUIRE(rig.f.engine->connection_closed(1).is_ok());
  CHECK_FALSE(rig.f.engine->holds_leases(1));
  CHECK(rig.f.engine->holds_leases(2));
  CHECK(rig.f.tx(held[1]).failures.back().reason == "DISCONNECTED");
  CHECK(rig.f.tx(held[1]).state == TxState::kSending);
  CHECK(rig.f.tx(held[0]).state == TxState::kSucceeded);
  CHECK(rig.f.tx(other).failures.empty());
  // The request it held is handed out again; the other connection's lease
  // still stands and ends with its own connection.
  auto again = rig.reserve(3);
  REQUIRE(again.has_value());
  CHECK(again->tx_id == held[1]);
  CHECK(rig.f.engine->leases("pagos").size() == 2);
  REQUIRE(rig.f.engine->connection_closed(2).is_ok());
  CHECK(rig.f.tx(other).failures.back().reason == "DISCONNECTED");
  CHECK(rig.f.engine->leases("pagos").size() == 1);
  REQUIRE(rig.f.engine->connection_closed(3).is_ok());
  CHECK(rig.f.engine->leases("pagos").empty());
  CHECK_FALSE(rig.f.engine->holds_leases(3));
}

TEST_CASE(
    "RESOLVE ends SCHEDULED or dead-lettered work; CONFLICT while a request is out; STALE when "
    "terminal") {
  Rig rig;
  rig.enqueue("TX-1");
  rig.send_next("TX-1", 1);
  CHECK(rig.resolve("TX-1", TxState::kSucceeded).outcome == Outcome::kConflict);
  rig.respond("TX-1", 1, Answer::kCancelled);
  check_summary(rig.resolve("TX-1", TxState::kSucceeded), Outcome::kOk, TxState::kSucceeded, 1, 0);
  CHECK(rig.f.tx("TX-1").due_kind == storage::DueKind::kRetention);
  rig.advance(3 * kHourMs);
  CHECK(rig.f.tx("TX-1").state == TxState::kSucceeded);  // the retry never fires
  CHECK(rig.resolve("TX-1", TxState::kFailed).outcome == Outcome::kStale);

  rig.enqueue("TX-2");
  CHECK(rig.resolve("TX-2", TxState::kFailed).outcome == Outcome::kConflict);  // live request
  CHECK(rig.resolve("NOPE", TxState::kFailed).outcome == Outcome::kNotFound);
}

TEST_CASE("HISTORY lists every transition, oldest first, and limit keeps the newest") {
  Rig rig;
  rig.enqueue("TX-1");
  rig.send_next("TX-1", 1);
  rig.respond("TX-1", 1, Answer::kCancelled);
  rig.advance(3 * kHourMs);
  rig.send_next("TX-1", 2);
  rig.respond("TX-1", 2, Answer::kSuccess);
  std::vector<engine::HistoryEntry> events;
  REQUIRE(rig.f.engine->history("TX-1", 0, &events).is_ok());
  REQUIRE(events.size() == 6);
  CHECK(events[0].event.cause == "ENQUEUE");
  CHECK(events[0].event.to == TxState::kSending);
  CHECK(events[1].event.cause == "SENT");
  CHECK(events[2].event.cause == "RESPOND");
  CHECK(events[2].event.to == TxState::kScheduled);
  CHECK(events[2].event.next_attempt == 2);
  CHECK(events[3].event.cause == "timer");
  CHECK(events[3].event.to == TxState::kSending);
  CHECK(events[3].event.due_at_ms == events[2].event.at_ms + 2 * kHourMs);
  CHECK(events[5].event.to == TxState::kSucceeded);
  REQUIRE(rig.f.engine->history("TX-1", 2, &events).is_ok());
  REQUIRE(events.size() == 2);
  CHECK(events[1].event.to == TxState::kSucceeded);
}

TEST_CASE("response_timeout treats silence as TRANSIENT with the same attempt") {
  Rig rig;
  storage::QueueConfig config = rig.f.engine->config("pagos");
  config.response_timeout_ms = 5000;
  REQUIRE(rig.f.engine->set_config("pagos", config).is_ok());
  rig.enqueue("TX-1");
  rig.send_next("TX-1", 1);
  rig.advance(4999);
  CHECK(rig.f.tx("TX-1").state == TxState::kInFlight);
  rig.advance(1);
  const auto rec = rig.f.tx("TX-1");
  CHECK(rec.state == TxState::kScheduled);
  CHECK(rec.next_attempt == 1);
  CHECK(rec.transients == 1);
  std::vector<engine::HistoryEntry> events;
  REQUIRE(rig.f.engine->history("TX-1", 1, &events).is_ok());
  CHECK(events.back().event.reason == "RESPONSE_TIMEOUT");
  CHECK(events.back().event.cause == "timer");
  CHECK(events.back().event.due_at_ms == rec.updated_at_ms);  // fired at its instant
  CHECK(engine::lateness_ms(events.back().event) == 0);
  rig.advance(1000);  // the transient backoff: the same attempt goes out again
  auto again = rig.reserve();
  REQUIRE(again.has_value());
  CHECK(again->attempt == 1);  // same attempt, so the same key TX-1#1
}

TEST_CASE("retention purges a terminal transaction and its history; its id can be enqueued anew") {
  Rig rig;
  storage::QueueConfig config = rig.f.engine->config("pagos");
  config.retention_ms = 1000;
  REQUIRE(rig.f.engine->set_config("pagos", config).is_ok());
  rig.enqueue("TX-1");
  rig.send_next("TX-1", 1);
  rig.respond("TX-1", 1, Answer::kSuccess);
  rig.advance(1000);
  auto gone = rig.f.engine->get("TX-1");
  REQUIRE(gone.is_ok());
  CHECK_FALSE(gone.value().has_value());
  for (const std::string& line : rig.f.dump()) {
    CHECK(line.rfind("meta ", 0) == 0);  // only the format and queue settings remain
  }
  engine::Sweep sweep;
  REQUIRE(engine::sweep_invariants(*rig.f.store, &sweep).is_ok());
  CHECK(sweep.violations.empty());
  CHECK(rig.enqueue("TX-1").outcome == Outcome::kCreated);
}

TEST_CASE("a rate-limited queue hands out no faster than its rate, in ready order") {
  Rig rig;
  storage::QueueConfig config = rig.f.engine->config("pagos");
  config.rate = 10;
  REQUIRE(rig.f.engine->set_config("pagos", config).is_ok());
  for (int i = 0; i < 30; ++i) rig.enqueue("TX-" + std::to_string(100 + i));
  int handed = 0;
  std::string last;
  for (int ms = 0; ms <= 2000; ms += 10) {
    while (auto got = rig.reserve()) {
      CHECK(got->tx_id > last);
      last = got->tx_id;
      handed += 1;
    }
    rig.advance(10);
  }
  CHECK(handed >= 20);
  CHECK(handed <= 22);
}

TEST_CASE(
    "the breaker opens on mostly TRANSIENT answers, holds, probes one at a time, and closes") {
  Rig rig;
  storage::QueueConfig config = rig.f.engine->config("pagos");
  config.lease_ms = 3600 * 1000;
  REQUIRE(rig.f.engine->set_config("pagos", config).is_ok());
  for (int i = 0; i < 25; ++i) rig.enqueue("TX-" + std::to_string(100 + i));
  for (int i = 0; i < 20; ++i) {
    auto got = rig.reserve();
    REQUIRE(got.has_value());
    rig.respond(got->tx_id, 1, Answer::kTransient);
  }
  CHECK(rig.f.engine->queue_figures("pagos").breaker == engine::Breaker::State::kOpen);
  CHECK_FALSE(rig.reserve().has_value());
  rig.advance(29'999);
  CHECK_FALSE(rig.reserve().has_value());
  rig.advance(1);
  auto probe = rig.reserve();
  REQUIRE(probe.has_value());
  CHECK_FALSE(rig.reserve().has_value());  // one probe at a time
  rig.respond(probe->tx_id, 1, Answer::kSuccess);
  CHECK(rig.f.engine->queue_figures("pagos").breaker == engine::Breaker::State::kClosed);
  CHECK(rig.reserve().has_value());
}

TEST_CASE(
    "a burst of 10,000 retries due at once leaves a rate=2000 queue at 2000/s, in due order") {
  Rig rig;
  storage::QueueConfig config = rig.f.engine->config("pagos");
  config.rate = 2000;
  REQUIRE(rig.f.engine->set_config("pagos", config).is_ok());
  constexpr int kCount = 10'000;
  for (int i = 0; i < kCount; ++i) {
    auto args = enqueue_args("pagos", "TX-" + std::to_string(100'000 + i));
    args.delay_ms = 60'000;
    rig.enqueue(args);
  }
  rig.advance(60'000);
  std::vector<std::string> order;
  std::vector<int64_t> at_ms;
  const int64_t start = rig.f.clock.now_wall_ms();
  while (static_cast<int>(order.size()) < kCount && rig.f.clock.now_wall_ms() - start < 20'000) {
    while (auto got = rig.reserve()) {
      order.push_back(got->tx_id);
      at_ms.push_back(rig.f.clock.now_wall_ms() - start);
    }
    rig.advance(1);
  }
  REQUIRE(order.size() == kCount);
  CHECK(std::is_sorted(order.begin(), order.end()));  // same instant: due key order
  // 10,000 at 2000/s take 5 s: within 10 %.
  const double seconds = at_ms.back() / 1000.0;
  CHECK(seconds >= 4.5);
  CHECK(seconds <= 5.5);
  // And no second ever held more than 2000 (+10 %).
  std::map<int64_t, int> per_second;
  for (int64_t t : at_ms) per_second[t / 1000] += 1;
  for (const auto& [second, n] : per_second) CHECK(n <= 2200);
}
