// The audit trail: HISTORY holds a transaction's whole life up to its
// queue's history_max, keeping the first event and the newest with a marker
// of what was dropped; timer fires carry their due instant and lateness; a
// store written with the old 8-event trimming and version 1 events reads.
#include "engine/history.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/engine.h"
#include "storage/codec.h"
#include "storage/keys.h"
#include "storage/mem_kv.h"
#include "storage/store.h"
#include "tests/support/engine_fixture.h"

using namespace tarde;
using engine::Answer;
using engine::HistoryEntry;
using engine::Outcome;
using storage::EventRecord;
using storage::TxState;

namespace {

// The keys of the `events` column family.
uint64_t events_in_family(storage::Kv& kv) {
  uint64_t n = 0;
  REQUIRE(kv.scan(storage::Cf::kEvents, "", "", [&](std::string_view, std::string_view) {
              n += 1;
              return true;
            }).is_ok());
  return n;
}

// Every stored event: those in `events` and those the records hold.
uint64_t count_events(storage::Kv& kv) {
  uint64_t held = 0;
  REQUIRE(storage::Store(kv)
              .scan_tx([&](const storage::TxRecord& rec) {
                held += (rec.first_event ? 1 : 0) + (rec.newest_event ? 1 : 0);
                return true;
              })
              .is_ok());
  return events_in_family(kv) + held;
}

std::vector<uint64_t> seqs_of(const std::vector<HistoryEntry>& entries) {
  std::vector<uint64_t> seqs;
  for (const HistoryEntry& e : entries) seqs.push_back(e.seq);
  return seqs;
}

std::vector<uint64_t> dropped_of(const std::vector<HistoryEntry>& entries) {
  std::vector<uint64_t> dropped;
  for (const HistoryEntry& e : entries) dropped.push_back(e.dropped_before);
  return dropped;
}

// Stored events with the given sequence numbers; event n is at n ms.
std::vector<std::pair<uint64_t, EventRecord>> stored(const std::vector<uint64_t>& seqs) {
  std::vector<std::pair<uint64_t, EventRecord>> out;
  for (uint64_t seq : seqs) {
    EventRecord e;
    e.at_ms = static_cast<int64_t>(seq);
    e.cause = "c" + std::to_string(seq);
    out.emplace_back(seq, e);
  }
  return out;
}

// A transaction ENQUEUE wrote into kv, as its record stands afterwards.
storage::TxRecord enqueued_alone(storage::MemKv& kv, const std::string& tx_id) {
  {
    testing::EngineFixture f(kv);
    REQUIRE(f.engine->enqueue(testing::enqueue_args("pagos", tx_id)).is_ok());
  }
  return *storage::Store(kv).get_tx(tx_id).value();
}

}  // namespace

TEST_CASE("history rule: the transition writing event n deletes event n - history_max + 1") {
  CHECK_FALSE(engine::event_trimmed_by(0, 1000).has_value());
  CHECK_FALSE(engine::event_trimmed_by(999, 1000).has_value());
  CHECK(engine::event_trimmed_by(1000, 1000) == 1u);  // event 0 is never deleted
  CHECK(engine::event_trimmed_by(1001, 1000) == 2u);
  CHECK_FALSE(engine::event_trimmed_by(1, 2).has_value());
  CHECK(engine::event_trimmed_by(2, 2) == 1u);
  CHECK(engine::event_trimmed_by(3, 2) == 2u);
  // A stored history_max below the minimum (only a damaged value) acts as 2.
  CHECK(engine::event_trimmed_by(2, 0) == 1u);
  CHECK(engine::event_trimmed_by(5, 1) == 4u);
}

TEST_CASE("history rule: select_history keeps the first and the newest, marking the gaps") {
  // All of a short life: no marker.
  auto all = engine::select_history(stored({0, 1, 2}), 5, 0);
  CHECK(seqs_of(all) == std::vector<uint64_t>{0, 1, 2});
  CHECK(dropped_of(all) == std::vector<uint64_t>{0, 0, 0});
  CHECK(all[2].event.cause == "c2");

  // Trimmed by history_max 3 (events 1..4 deleted as 5..7 were written).
  auto trimmed = engine::select_history(stored({0, 5, 6}), 3, 0);
  CHECK(seqs_of(trimmed) == std::vector<uint64_t>{0, 5, 6});
  CHECK(dropped_of(trimmed) == std::vector<uint64_t>{0, 4, 0});

  // history_max lowered from 10 to 3: 0..6 still stored, 0 and the newest 2 shown.
  auto lowered = engine::select_history(stored({0, 1, 2, 3, 4, 5, 6}), 3, 0);
  CHECK(seqs_of(lowered) == std::vector<uint64_t>{0, 5, 6});
  CHECK(dropped_of(lowered) == std::vector<uint64_t>{0, 4, 0});

  // A store trimmed to the newest 8 before event 0 was kept: the first
  // stored event carries the count of the events before it.
  auto old = engine::select_history(stored({12, 13, 14, 15, 16, 17, 18, 19}), 1000, 0);
  CHECK(seqs_of(old) == std::vector<uint64_t>{12, 13, 14, 15, 16, 17, 18, 19});
  CHECK(dropped_of(old) == std::vector<uint64_t>{12, 0, 0, 0, 0, 0, 0, 0});

  // A gap in the middle (history_max was low for a while, then raised).
  auto gap = engine::select_history(stored({0, 1, 5, 6}), 1000, 0);
  CHECK(dropped_of(gap) == std::vector<uint64_t>{0, 0, 3, 0});

  // limit keeps the newest of what is shown; a limit's omissions are no marker.
  auto limited = engine::select_history(stored({0, 5, 6}), 3, 2);
  CHECK(seqs_of(limited) == std::vector<uint64_t>{5, 6});
  CHECK(dropped_of(limited) == std::vector<uint64_t>{4, 0});
  auto newest = engine::select_history(stored({0, 1, 2}), 5, 1);
  CHECK(seqs_of(newest) == std::vector<uint64_t>{2});
  CHECK(dropped_of(newest) == std::vector<uint64_t>{0});

  CHECK(engine::select_history({}, 5, 0).empty());
}

TEST_CASE("history rule: lateness is fire time minus due time, never below 0") {
  EventRecord e;
  e.at_ms = 1000;
  CHECK_FALSE(engine::lateness_ms(e).has_value());  // not a timer fire
  e.due_at_ms = 990;
  CHECK(engine::lateness_ms(e) == 10);
  e.due_at_ms = 1000;
  CHECK(engine::lateness_ms(e) == 0);
  e.due_at_ms = 1010;  // moved ahead by the retry lead: handed out at its instant
  CHECK(engine::lateness_ms(e) == 0);
}

namespace {

// An engine on a MemKv and a ManualClock, with the steps of the proof.
struct Life {
  storage::MemKv kv;
  testing::EngineFixture f{kv};

  // What one step expects of its event, besides the row: the instant it
  // happened and, for a timer fire, when it was due.
  struct Times {
    int64_t at_ms = 0;
    int64_t due_at_ms = 0;
  };
  std::vector<Times> times;

  int64_t now() { return f.clock.now_wall_ms(); }
  void advance_to(int64_t wall_ms) {
    REQUIRE(wall_ms >= now());
    f.clock.advance_ms(wall_ms - now());
    for (;;) {
      auto more = f.engine->run_timers();
      REQUIRE(more.is_ok());
      if (!more.value()) break;
    }
  }
  void noted(int64_t due_at_ms = 0) { times.push_back({now(), due_at_ms}); }
  void enqueue() {
    REQUIRE(f.engine->enqueue(testing::enqueue_args("pagos", "TX-1")).value().outcome ==
            Outcome::kCreated);
    noted();
  }
  int64_t reserve(uint32_t attempt) {
    auto got = f.engine->reserve("pagos", 1);
    REQUIRE(got.is_ok());
    REQUIRE(got.value().has_value());
    REQUIRE(got.value()->attempt == attempt);
    return now();
  }
  // The lease of a request handed out now runs out; the expiry comes late_ms after it.
  void lease_expires(uint32_t attempt, int64_t late_ms) {
    const int64_t reserved_at = reserve(attempt);
    const int64_t lease_end = reserved_at + f.engine->config("pagos").lease_ms;
    advance_to(lease_end + late_ms);
    noted(lease_end);
  }
  void sent(uint32_t attempt) {
    REQUIRE(f.engine->sent("TX-1", attempt).value().outcome == Outcome::kOk);
    noted();
  }
  void respond(uint32_t attempt, Answer answer, const std::string& reason) {
    REQUIRE(f.engine->respond("TX-1", attempt, answer, reason, std::nullopt).value().outcome ==
            Outcome::kOk);
    noted();
  }
  // The scheduled retry fires late_ms after its instant.
  void retry_fires(int64_t late_ms) {
    const storage::TxRecord rec = f.tx("TX-1");
    REQUIRE(rec.state == TxState::kScheduled);
    advance_to(rec.next_fire_at_ms + late_ms);
    REQUIRE(f.tx("TX-1").state == TxState::kSending);
    noted(rec.next_fire_at_ms);
  }
  void hand_out_and_send(uint32_t attempt) {
    reserve(attempt);
    sent(attempt);
  }
};

// One expected event: the row of the state machine it records.
struct Row {
  TxState from;
  TxState to;
  uint32_t attempt;
  uint32_t next_attempt;
  const char* cause;
  const char* reason;
};

constexpr TxState kNone = TxState::kNone;
constexpr TxState kSending = TxState::kSending;
constexpr TxState kInFlight = TxState::kInFlight;
constexpr TxState kScheduled = TxState::kScheduled;

}  // namespace

TEST_CASE("proof: four attempts, two TRANSIENTs each, three lease expiries, then SUCCESS") {
  Life life;
  std::vector<Row> rows;
  life.enqueue();
  rows.push_back({kNone, kSending, 0, 1, "ENQUEUE", ""});
  int64_t late = 1;  // each fire comes a different number of ms late
  for (uint32_t k = 1; k <= 4; ++k) {
    CAPTURE(k);
    const uint32_t before = k - 1;  // the attempt whose request last went out
    if (k <= 3) {
      life.lease_expires(k, late++);
      rows.push_back({kSending, kSending, before, k, "lease", "LEASE_EXPIRED"});
    }
    for (int transient = 0; transient < 2; ++transient) {
      life.hand_out_and_send(k);
      rows.push_back({kSending, kInFlight, k, 0, "SENT", ""});
      life.respond(k, Answer::kTransient, "HTTP_503");
      rows.push_back({kInFlight, kScheduled, k, k, "RESPOND", "HTTP_503"});
      life.retry_fires(late++);
      rows.push_back({kScheduled, kSending, k, k, "timer", ""});
    }
    life.hand_out_and_send(k);
    rows.push_back({kSending, kInFlight, k, 0, "SENT", ""});
    if (k < 4) {
      life.respond(k, Answer::kCancelled, "NOT_NOW");
      rows.push_back({kInFlight, kScheduled, k, k + 1, "RESPOND", "NOT_NOW"});
      life.retry_fires(late++);
      rows.push_back({kScheduled, kSending, k, k + 1, "timer", ""});
    } else {
      life.respond(k, Answer::kSuccess, "");
      rows.push_back({kInFlight, TxState::kSucceeded, k, 0, "RESPOND", ""});
    }
  }
  REQUIRE(rows.size() == 39);  // 11 + 10 + 10 + 8: far more than the 8 once kept
  REQUIRE(life.times.size() == rows.size());

  std::vector<HistoryEntry> history;
  REQUIRE(life.f.engine->history("TX-1", 0, &history).is_ok());
  REQUIRE(history.size() == rows.size());
  CHECK(count_events(life.kv) == rows.size());
  // The record holds the first and the newest: the rest are keys.
  CHECK(events_in_family(life.kv) == rows.size() - 2);
  CHECK(life.f.tx("TX-1").first_event == history.front().event);
  CHECK(life.f.tx("TX-1").newest_event == history.back().event);
  int64_t fires = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    const HistoryEntry& entry = history[i];
    const EventRecord& e = entry.event;
    const Row& row = rows[i];
    CHECK(entry.seq == i);
    CHECK(entry.dropped_before == 0);
    CHECK(e.from == row.from);
    CHECK(e.to == row.to);
    CHECK(e.attempt == row.attempt);
    CHECK(e.next_attempt == row.next_attempt);
    CHECK(e.cause == row.cause);
    CHECK(e.reason == row.reason);
    CHECK(e.at_ms == life.times[i].at_ms);
    CHECK(e.due_at_ms == life.times[i].due_at_ms);
    const bool fire = std::string(row.cause) == "timer" || std::string(row.cause) == "lease";
    CHECK(fire == (e.due_at_ms != 0));
    if (fire) {
      fires += 1;
      // The fires came 1, 2, 3, ... ms late, in order.
      CHECK(engine::lateness_ms(e) == fires);
      CHECK(e.at_ms - e.due_at_ms == fires);
    } else {
      CHECK_FALSE(engine::lateness_ms(e).has_value());
    }
  }
  CHECK(fires == 3 + 4 * 2 + 3);  // lease expiries, TRANSIENT retries, CANCELLED retries
}

TEST_CASE("a small history_max keeps event 0 and the newest, with the dropped count") {
  Life life;
  storage::QueueConfig config = life.f.engine->config("pagos");
  config.history_max = 4;
  REQUIRE(life.f.engine->set_config("pagos", config).is_ok());
  life.enqueue();
  // Each RELEASE writes one event and makes the request ready again.
  for (int i = 0; i < 4; ++i) {
    REQUIRE(life.f.engine->reserve("pagos", 1).value().has_value());
    REQUIRE(life.f.engine->release(1, "TX-1", 1, 0, "").value().outcome == Outcome::kOk);
  }
  // Events 0..4: 0 and the newest 3 stay; the transition that wrote event 4
  // deleted event 1, in its own batch.
  CHECK(life.f.tx("TX-1").events == 5);
  CHECK(count_events(life.kv) == 4);
  std::vector<HistoryEntry> history;
  REQUIRE(life.f.engine->history("TX-1", 0, &history).is_ok());
  CHECK(seqs_of(history) == std::vector<uint64_t>{0, 2, 3, 4});
  CHECK(dropped_of(history) == std::vector<uint64_t>{0, 1, 0, 0});
  CHECK(history[0].event.cause == "ENQUEUE");
  // Far past the bound, still one delete per transition and event 0 kept.
  for (int i = 0; i < 40; ++i) {
    REQUIRE(life.f.engine->reserve("pagos", 1).value().has_value());
    // Under max_deliveries: sent and answered TRANSIENT, then the retry fires.
    REQUIRE(life.f.engine->sent("TX-1", 1).value().outcome == Outcome::kOk);
    REQUIRE(life.f.engine->respond("TX-1", 1, Answer::kTransient, "", 1).value().outcome ==
            Outcome::kOk);
    if (life.f.tx("TX-1").state != TxState::kScheduled) break;
    life.advance_to(life.f.tx("TX-1").next_fire_at_ms);
  }
  const uint64_t written = life.f.tx("TX-1").events;
  REQUIRE(written > 20);
  CHECK(count_events(life.kv) == 4);
  REQUIRE(life.f.engine->history("TX-1", 0, &history).is_ok());
  CHECK(seqs_of(history) == std::vector<uint64_t>{0, written - 3, written - 2, written - 1});
  CHECK(dropped_of(history) == std::vector<uint64_t>{0, written - 4, 0, 0});
  REQUIRE(life.f.engine->history("TX-1", 2, &history).is_ok());
  CHECK(seqs_of(history) == std::vector<uint64_t>{written - 2, written - 1});
}

TEST_CASE("lowering history_max hides older events until retention purges them") {
  Life life;
  storage::QueueConfig config = life.f.engine->config("pagos");
  config.retention_ms = 1000;
  REQUIRE(life.f.engine->set_config("pagos", config).is_ok());
  life.enqueue();
  for (int i = 0; i < 4; ++i) {
    REQUIRE(life.f.engine->reserve("pagos", 1).value().has_value());
    REQUIRE(life.f.engine->release(1, "TX-1", 1, 0, "").value().outcome == Outcome::kOk);
  }
  REQUIRE(count_events(life.kv) == 5);  // 0..4, all under the default 1000
  config.history_max = 2;
  REQUIRE(life.f.engine->set_config("pagos", config).is_ok());
  std::vector<HistoryEntry> history;
  REQUIRE(life.f.engine->history("TX-1", 0, &history).is_ok());
  CHECK(seqs_of(history) == std::vector<uint64_t>{0, 4});
  CHECK(dropped_of(history) == std::vector<uint64_t>{0, 3});
  // The next transition (event 5) deletes event 4 only: 1..3 stay stored,
  // hidden, since trimming never scans.
  REQUIRE(life.f.engine->reserve("pagos", 1).value().has_value());
  REQUIRE(life.f.engine->sent("TX-1", 1).value().outcome == Outcome::kOk);
  CHECK(count_events(life.kv) == 5);  // 0..3 and 5
  REQUIRE(life.f.engine->history("TX-1", 0, &history).is_ok());
  CHECK(seqs_of(history) == std::vector<uint64_t>{0, 5});
  CHECK(dropped_of(history) == std::vector<uint64_t>{0, 4});
  // The end, then retention: every stored event goes with the transaction.
  REQUIRE(life.f.engine->respond("TX-1", 1, Answer::kSuccess, "", std::nullopt).is_ok());
  life.advance_to(life.now() + 1000);
  CHECK_FALSE(life.f.store->get_tx("TX-1").value().has_value());
  CHECK(count_events(life.kv) == 0);
}

TEST_CASE("a retry moved ahead by the retry lead is written before its instant and is 0 late") {
  storage::MemKv kv;
  engine::Engine::Options options;
  options.retry_lead_ms = 10;
  testing::EngineFixture f(kv, 1'700'000'000'000, options);
  REQUIRE(f.engine->enqueue(testing::enqueue_args("pagos", "TX-1")).is_ok());
  REQUIRE(f.engine->reserve("pagos", 1).value().has_value());
  REQUIRE(f.engine->sent("TX-1", 1).is_ok());
  REQUIRE(f.engine->respond("TX-1", 1, Answer::kTransient, "", 5000).is_ok());
  const int64_t due = f.tx("TX-1").next_fire_at_ms;
  f.clock.advance_ms(due - 10 - f.clock.now_wall_ms());  // the lead's instant
  while (f.engine->run_timers().value()) {
  }
  std::vector<HistoryEntry> history;
  REQUIRE(f.engine->history("TX-1", 1, &history).is_ok());
  REQUIRE(history.size() == 1);
  const EventRecord& fire = history[0].event;
  CHECK(fire.cause == "timer");
  CHECK(fire.at_ms == due - 10);
  CHECK(fire.due_at_ms == due);
  CHECK(engine::lateness_ms(fire) == 0);
}

TEST_CASE("a store written with 8-event trimming and version 1 events still reads") {
  // What a build before EventRecord version 2 left: the newest 8 events of
  // a transaction whose life had 20, in the version 1 layout (no due time).
  storage::MemKv kv;
  storage::Store store(kv);
  storage::TxRecord rec = enqueued_alone(kv, "TX-OLD");
  rec.first_event.reset();  // that build's records held no event
  storage::KvBatch batch;
  for (uint64_t seq = 12; seq < 20; ++seq) {
    EventRecord e{static_cast<int64_t>(1000 + seq),
                  TxState::kSending,
                  TxState::kSending,
                  0,
                  1,
                  "lease",
                  "LEASE_EXPIRED"};
    // The version 1 bytes: class version 1, and no due_at_ms at the end.
    std::string v1 = storage::encode_event_with_cereal_for_test(e);
    v1[2] = 1;
    v1.resize(v1.size() - 8);
    batch.put(storage::Cf::kEvents, storage::event_key("TX-OLD", seq), v1);
  }
  rec.events = 20;
  batch.put(storage::Cf::kTx, storage::tx_key("TX-OLD"), storage::encode_tx(rec));
  REQUIRE(kv.write(batch).is_ok());

  testing::EngineFixture f(kv);
  std::vector<HistoryEntry> history;
  REQUIRE(f.engine->history("TX-OLD", 0, &history).is_ok());
  REQUIRE(history.size() == 8);
  CHECK(seqs_of(history) == std::vector<uint64_t>{12, 13, 14, 15, 16, 17, 18, 19});
  CHECK(dropped_of(history) == std::vector<uint64_t>{12, 0, 0, 0, 0, 0, 0, 0});
  CHECK(history[0].event.at_ms == 1012);
  CHECK(history[0].event.due_at_ms == 0);
  CHECK(history[0].event.reason == "LEASE_EXPIRED");
  // New events follow, in the compact layout, and nothing of the old is deleted
  // under the default history_max.
  REQUIRE(f.engine->reserve("pagos", 1).value().has_value());
  REQUIRE(f.engine->sent("TX-OLD", 1).value().outcome == Outcome::kOk);
  REQUIRE(f.engine->history("TX-OLD", 0, &history).is_ok());
  REQUIRE(history.size() == 9);
  CHECK(history.back().seq == 20);
  CHECK(history.back().event.cause == "SENT");
  CHECK(count_events(kv) == 9);
}

TEST_CASE("a record written before format 3 holds its newest event from its next transition") {
  storage::MemKv kv;
  storage::Store store(kv);
  storage::TxRecord rec = enqueued_alone(kv, "TX-OLD");
  // As a build of format 2 left it: events 0..2 in `events`, none held.
  REQUIRE(rec.first_event.has_value());
  const EventRecord created = *rec.first_event;
  rec.first_event.reset();
  storage::Batch batch;
  for (uint64_t seq = 0; seq < 3; ++seq) {
    EventRecord e = created;
    e.at_ms += static_cast<int64_t>(seq);
    batch.put_event("TX-OLD", seq, e);
  }
  rec.events = 3;
  batch.put_tx(rec);
  REQUIRE(store.write(batch).is_ok());

  testing::EngineFixture f(kv);
  storage::QueueConfig config = f.engine->config("pagos");
  config.history_max = 2;
  REQUIRE(f.engine->set_config("pagos", config).is_ok());
  // Event 3 is held; it trims event 2, which is in `events`: deleted there.
  REQUIRE(f.engine->reserve("pagos", 1).value().has_value());
  REQUIRE(f.engine->sent("TX-OLD", 1).value().outcome == Outcome::kOk);
  CHECK_FALSE(f.tx("TX-OLD").first_event.has_value());
  REQUIRE(f.tx("TX-OLD").newest_event.has_value());
  CHECK(f.tx("TX-OLD").newest_event->cause == "SENT");
  CHECK(events_in_family(kv) == 2);  // 0 and 1
  std::vector<HistoryEntry> history;
  REQUIRE(f.engine->history("TX-OLD", 0, &history).is_ok());
  CHECK(seqs_of(history) == std::vector<uint64_t>{0, 3});
  CHECK(dropped_of(history) == std::vector<uint64_t>{0, 2});
  // Event 4 trims event 3, the one held: it is neither moved nor deleted.
  REQUIRE(f.engine->respond("TX-OLD", 1, Answer::kSuccess, "", std::nullopt).is_ok());
  CHECK(events_in_family(kv) == 2);
  CHECK(f.tx("TX-OLD").newest_event->cause == "RESPOND");
  REQUIRE(f.engine->history("TX-OLD", 0, &history).is_ok());
  CHECK(seqs_of(history) == std::vector<uint64_t>{0, 4});
  CHECK(dropped_of(history) == std::vector<uint64_t>{0, 3});
}

TEST_CASE("a W1 life writes no key to `events`: its record holds both events") {
  storage::MemKv kv;
  testing::EngineFixture f(kv);
  REQUIRE(f.engine->enqueue(testing::enqueue_args("pagos", "TX-1")).is_ok());
  CHECK(events_in_family(kv) == 0);
  REQUIRE(f.engine->reserve("pagos", 1).value().has_value());
  REQUIRE(f.engine->respond("TX-1", 1, Answer::kSuccess, "", std::nullopt).is_ok());
  CHECK(events_in_family(kv) == 0);
  CHECK(f.tx("TX-1").events == 2);
  CHECK(f.tx("TX-1").first_event->cause == "ENQUEUE");
  CHECK(f.tx("TX-1").newest_event->cause == "RESPOND");
  // A third event moves the second out.
  REQUIRE(f.engine->enqueue(testing::enqueue_args("pagos", "TX-2")).is_ok());
  REQUIRE(f.engine->reserve("pagos", 1).value().has_value());
  REQUIRE(f.engine->sent("TX-2", 1).value().outcome == Outcome::kOk);
  REQUIRE(f.engine->respond("TX-2", 1, Answer::kSuccess, "", std::nullopt).is_ok());
  CHECK(events_in_family(kv) == 1);
  std::vector<HistoryEntry> history;
  REQUIRE(f.engine->history("TX-2", 0, &history).is_ok());
  CHECK(seqs_of(history) == std::vector<uint64_t>{0, 1, 2});
}

TEST_CASE("HISTORY of an unknown transaction is empty") {
  Life life;
  std::vector<HistoryEntry> history{HistoryEntry{}};
  REQUIRE(life.f.engine->history("NOPE", 0, &history).is_ok());
  CHECK(history.empty());
}
