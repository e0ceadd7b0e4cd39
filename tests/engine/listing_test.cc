// The state index and LIST through the Engine: every transition keeps
// at most one index key per transaction (none while it is SENDING with a
// ready request, which its ready entry indexes; and writes none when the
// filed state stays), purge deletes it, the invariant sweep checks and repairs it,
// an old store is upgraded at recovery, and LIST pages every state with
// cursors, prefixes, reasons and its per-page budget. MemKv, ManualClock.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/invariants.h"
#include "storage/codec.h"
#include "storage/keys.h"
#include "storage/mem_kv.h"
#include "tests/support/engine_fixture.h"

using namespace tarde;
using engine::Answer;
using engine::ListState;
using engine::Outcome;
using storage::Cf;
using storage::TxState;
using testing::enqueue_args;

namespace {

constexpr int64_t kHourMs = 3600 * 1000;

// A Kv that forwards to a MemKv and counts the state index ops of the last
// write, so that a test sees what one transition wrote.
class CountingKv final : public storage::Kv {
 public:
  Result<std::optional<std::string>> get(Cf cf, std::string_view key) override {
    return mem.get(cf, key);
  }
  Status scan(Cf cf, std::string_view lower, std::string_view upper,
              const storage::KvVisitor& visit) override {
    return mem.scan(cf, lower, upper, visit);
  }
  Status write(const storage::KvBatch& batch) override {
    state_puts = 0;
    state_deletes = 0;
    for (const storage::KvOp& op : batch.ops()) {
      if (op.cf != Cf::kState) continue;
      (op.is_delete ? state_deletes : state_puts) += 1;
    }
    return mem.write(batch);
  }
  storage::MemKv mem;
  int state_puts = 0;
  int state_deletes = 0;
};

struct Rig {
  CountingKv kv;
  testing::EngineFixture f{kv};

  void enqueue(const engine::EnqueueArgs& args) {
    auto reply = f.engine->enqueue(args);
    REQUIRE(reply.is_ok());
    REQUIRE(reply.value().outcome == Outcome::kCreated);
  }
  // The state index as "queue/state/tx_id" lines.
  std::vector<std::string> index() {
    std::vector<std::string> keys;
    REQUIRE(f.store
                ->scan_all_state([&keys](const storage::StateKey& k) {
                  keys.push_back(k.queue + "/" + std::to_string(k.state) + "/" + k.tx_id);
                  return true;
                })
                .is_ok());
    return keys;
  }
  void advance(int64_t ms) {
    f.clock.advance_ms(ms);
    for (;;) {
      auto more = f.engine->run_timers();
      REQUIRE(more.is_ok());
      if (!more.value()) break;
    }
  }
  engine::ListPage list(const std::string& queue, ListState state, const std::string& cursor = "",
                        size_t limit = engine::kListDefaultLimit, const std::string& prefix = "",
                        const std::string& reason = "") {
    auto page = f.engine->list(queue, state, cursor, limit, prefix, reason);
    REQUIRE_MESSAGE(page.is_ok(), page.status().to_string());
    return page.value();
  }
  // Every tx_id of a listing, following its cursors with pages of `limit`.
  std::vector<std::string> all(const std::string& queue, ListState state, size_t limit,
                               const std::string& prefix = "", const std::string& reason = "") {
    std::vector<std::string> ids;
    std::string cursor;
    for (int pages = 0; pages < 100'000; ++pages) {
      engine::ListPage page = list(queue, state, cursor, limit, prefix, reason);
      CHECK(page.items.size() <= limit);
      for (const auto& rec : page.items) ids.push_back(rec.tx_id);
      if (page.next.empty()) return ids;
      cursor = page.next;
    }
    FAIL("a listing that never ends");
    return ids;
  }
  void check_sweep_clean() {
    engine::Sweep sweep;
    REQUIRE(engine::sweep_invariants(*f.store, &sweep).is_ok());
    for (const auto& v : sweep.violations) FAIL(v.text);
  }
};

using Ids = std::vector<std::string>;

}  // namespace

TEST_CASE("the state index follows every transition, and a ready request moves no state key") {
  Rig rig;
  storage::QueueConfig config = rig.f.engine->config("pagos");
  config.max_deliveries = 1;
  config.retention_ms = 1000;
  REQUIRE(rig.f.engine->set_config("pagos", config).is_ok());

  rig.enqueue(enqueue_args("pagos", "TX-1"));  // its ready entry indexes it
  CHECK(rig.kv.state_puts == 0);
  CHECK(rig.kv.state_deletes == 0);
  CHECK(rig.index().empty());

  auto got = rig.f.engine->reserve("pagos", 7);  // a lease: memory only
  REQUIRE(got.is_ok());
  REQUIRE(got.value().has_value());
  auto buried = rig.f.engine->release(7, "TX-1", 1, 0, "");  // SENDING, dead-lettered
  REQUIRE(buried.is_ok());
  CHECK(buried.value().outcome == Outcome::kBuried);
  CHECK(rig.kv.state_deletes == 0);
  CHECK(rig.kv.state_puts == 1);
  CHECK(rig.index() == Ids{"pagos/6/TX-1"});

  REQUIRE(rig.f.engine->redrive("pagos", "TX-1").is_ok());
  CHECK(rig.kv.state_deletes == 1);
  CHECK(rig.kv.state_puts == 0);
  CHECK(rig.index().empty());
  config.max_deliveries = 5;
  REQUIRE(rig.f.engine->set_config("pagos", config).is_ok());
  got = rig.f.engine->reserve("pagos", 7);
  REQUIRE(got.value().has_value());
  // RELEASE keeps SENDING: the record and its ready entry change, the index
  // does not.
  REQUIRE(rig.f.engine->release(7, "TX-1", 1, 0, "").value().outcome == Outcome::kOk);
  CHECK(rig.kv.state_puts == 0);
  CHECK(rig.kv.state_deletes == 0);
  got = rig.f.engine->reserve("pagos", 7);
  REQUIRE(got.value().has_value());
  REQUIRE(rig.f.engine->sent("TX-1", 1).is_ok());
  CHECK(rig.kv.state_deletes == 0);
  CHECK(rig.kv.state_puts == 1);
  CHECK(rig.index() == Ids{"pagos/2/TX-1"});
  REQUIRE(rig.f.engine->respond("TX-1", 1, Answer::kCancelled, "", 1000).is_ok());
  CHECK(rig.index() == Ids{"pagos/3/TX-1"});
  rig.advance(1000);  // the retry fires: SENDING again, its key goes
  CHECK(rig.index().empty());
  got = rig.f.engine->reserve("pagos", 7);
  REQUIRE(got.value().has_value());
  REQUIRE(rig.f.engine->respond("TX-1", 2, Answer::kRejected, "NO", std::nullopt).is_ok());
  CHECK(rig.index() == Ids{"pagos/5/TX-1"});
  rig.check_sweep_clean();

  engine::EnqueueArgs delayed = enqueue_args("pagos", "TX-2");
  delayed.delay_ms = kHourMs;
  rig.enqueue(delayed);
  REQUIRE(rig.f.engine->resolve("TX-2", TxState::kSucceeded, "").value().outcome == Outcome::kOk);
  CHECK(rig.index() == Ids{"pagos/4/TX-2", "pagos/5/TX-1"});
  rig.advance(1000);  // retention purges both, index keys included
  CHECK(rig.index().empty());
  rig.check_sweep_clean();
}

TEST_CASE("LIST pages each state of a queue in order, with cursors, prefixes and reasons") {
  Rig rig;
  storage::QueueConfig config = rig.f.engine->config("pagos");
  config.lease_ms = 10 * kHourMs;
  REQUIRE(rig.f.engine->set_config("pagos", config).is_ok());
  for (int i = 0; i < 7; ++i) {
    engine::EnqueueArgs args = enqueue_args("pagos", "S-" + std::to_string(i));
    args.delay_ms = kHourMs;
    rig.enqueue(args);
  }
  for (int i = 0; i < 3; ++i) {
    engine::EnqueueArgs args = enqueue_args("pagos", "F-" + std::to_string(i));
    args.sent = true;
    rig.enqueue(args);
  }
  rig.enqueue(enqueue_args("other", "S-9"));  // another queue
  for (const char* id : {"R-2", "R-0", "R-1", "D-0", "D-1"}) rig.enqueue(enqueue_args("pagos", id));
  // R-2, R-0 go first; the two D go to the dead letters; R-1 stays leased.
  for (const char* expected : {"R-2", "R-0", "R-1", "D-0", "D-1"}) {
    auto got = rig.f.engine->reserve("pagos", 1);
    REQUIRE(got.value().has_value());
    CHECK(got.value()->tx_id == expected);
  }
  for (const char* id : {"R-2", "R-0"}) {
    REQUIRE(rig.f.engine->release(1, id, 1, 0, "").value().outcome == Outcome::kOk);
  }
  config.max_deliveries = 1;
  REQUIRE(rig.f.engine->set_config("pagos", config).is_ok());
  REQUIRE(rig.f.engine->release(1, "D-0", 1, 0, "GONE").value().outcome == Outcome::kBuried);
  REQUIRE(rig.f.engine->release(1, "D-1", 1, 0, "").value().outcome == Outcome::kBuried);
  REQUIRE(rig.f.engine->respond("F-2", 1, Answer::kRejected, "CARD", std::nullopt).is_ok());
  REQUIRE(rig.f.engine->respond("F-1", 1, Answer::kSuccess, "", std::nullopt).is_ok());

  CHECK(rig.all("pagos", ListState::kScheduled, 1) ==
        Ids{"S-0", "S-1", "S-2", "S-3", "S-4", "S-5", "S-6"});
  CHECK(rig.all("pagos", ListState::kScheduled, 3) == rig.all("pagos", ListState::kScheduled, 100));
  CHECK(rig.all("pagos", ListState::kInFlight, 2) == Ids{"F-0"});
  CHECK(rig.all("pagos", ListState::kFailed, 2) == Ids{"F-2"});
  CHECK(rig.all("pagos", ListState::kSucceeded, 2) == Ids{"F-1"});
  CHECK(rig.all("pagos", ListState::kDead, 1) == Ids{"D-0", "D-1"});
  CHECK(rig.all("pagos", ListState::kLeased, 1) == Ids{"R-1"});
  // Ready: hand-out order (released again after the lease: behind), the
  // leased one left out; with a prefix too.
  CHECK(rig.all("pagos", ListState::kReady, 1) == Ids{"R-2", "R-0"});
  CHECK(rig.all("pagos", ListState::kReady, 1, "R") == Ids{"R-2", "R-0"});
  CHECK(rig.all("pagos", ListState::kReady, 1, "R-0") == Ids{"R-0"});
  CHECK(rig.all("pagos", ListState::kReady, 1, "S").empty());
  CHECK(rig.all("other", ListState::kScheduled, 5).empty());
  CHECK(rig.all("nobody", ListState::kLeased, 5).empty());

  SUBCASE("a page carries its items as GET shows them and the cursor of the next") {
    engine::ListPage first = rig.list("pagos", ListState::kScheduled, "", 3);
    REQUIRE(first.items.size() == 3);
    CHECK(first.items[0].next_fire_at_ms == rig.f.clock.now_wall_ms() + kHourMs);
    CHECK(first.items[0].state == TxState::kScheduled);
    CHECK(first.next == "tS-2");
    CHECK(first.examined == 3);
    engine::ListPage last = rig.list("pagos", ListState::kScheduled, "tS-5", 3);
    CHECK(last.items.size() == 1);
    CHECK(last.next.empty());
    // A full last page still says more may follow: the next one is empty.
    engine::ListPage full = rig.list("pagos", ListState::kScheduled, "tS-3", 3);
    CHECK(full.items.size() == 3);
    CHECK(full.next.empty());
    engine::ListPage ready = rig.list("pagos", ListState::kReady, "", 1);
    CHECK(ready.next.starts_with("r"));
  }
  SUBCASE("prefix= is a range of the index") {
    CHECK(rig.all("pagos", ListState::kScheduled, 2, "S-4") == Ids{"S-4"});
    CHECK(rig.all("pagos", ListState::kScheduled, 2, "S-") ==
          rig.all("pagos", ListState::kScheduled, 100));
    CHECK(rig.all("pagos", ListState::kScheduled, 2, "X").empty());
    CHECK(rig.all("pagos", ListState::kLeased, 2, "R-1") == Ids{"R-1"});
    CHECK(rig.all("pagos", ListState::kLeased, 2, "R-0").empty());
    CHECK(rig.all("pagos", ListState::kDead, 2, "D-1") == Ids{"D-1"});
    // A cursor before the prefix starts at the prefix.
    CHECK(rig.list("pagos", ListState::kScheduled, "tA", 10, "S-5").items.size() == 1);
    CHECK(rig.list("pagos", ListState::kLeased, "tA", 10, "R").items.size() == 1);
  }
  SUBCASE("reason= matches the terminal reason or the last failed delivery's") {
    CHECK(rig.all("pagos", ListState::kFailed, 5, "", "CARD") == Ids{"F-2"});
    CHECK(rig.all("pagos", ListState::kFailed, 5, "", "OTHER").empty());
    CHECK(rig.all("pagos", ListState::kDead, 5, "", "GONE") == Ids{"D-0"});
    CHECK(rig.all("pagos", ListState::kDead, 5, "", "RELEASED") == Ids{"D-1"});
    CHECK(engine::shown_reason(rig.f.tx("D-1")) == "RELEASED");
  }
  SUBCASE("bad arguments are invalid_argument") {
    auto bad = [&](std::string_view queue, ListState state, std::string_view cursor, size_t limit,
                   std::string_view prefix = {}) {
      auto page = rig.f.engine->list(queue, state, cursor, limit, prefix);
      return page.status().code();
    };
    const auto kInvalid = Status::Code::kInvalidArgument;
    CHECK(bad("pa/gos", ListState::kScheduled, "", 10) == kInvalid);
    CHECK(bad("pagos", ListState::kScheduled, "", 0) == kInvalid);
    CHECK(bad("pagos", ListState::kScheduled, "", engine::kListLimitMax + 1) == kInvalid);
    CHECK(bad("pagos", ListState::kScheduled, "", 10, "a b") == kInvalid);
    for (const char* cursor : {"x", "t", "t a", "r1.2", "-"}) {
      CHECK_MESSAGE(bad("pagos", ListState::kScheduled, cursor, 10) == kInvalid, cursor);
      CHECK_MESSAGE(bad("pagos", ListState::kLeased, cursor, 10) == kInvalid, cursor);
    }
    for (const char* cursor :
         {"tS-1", "r", "r1", "r1.", "r.2", "r-1.2", "r1.+2", "r1.2x", "r99999999999999999999.1"}) {
      CHECK_MESSAGE(bad("pagos", ListState::kReady, cursor, 10) == kInvalid, cursor);
    }
    CHECK(bad("pagos", ListState::kReady, "r0.0", 10) == Status::Code::kOk);
    CHECK(bad("pagos", ListState::kReady, "r0.0", 10, "R") == Status::Code::kOk);
    CHECK(bad("pagos", ListState::kReady, "tS-1", 10, "R") == kInvalid);
  }
  rig.check_sweep_clean();
}

TEST_CASE("a page walks at most kListExaminedMax entries, then ends early with a cursor") {
  Rig rig;
  const int kCount = static_cast<int>(engine::kListExaminedMax) + 5;
  for (int i = 0; i < kCount; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "T-%06d", i);
    engine::EnqueueArgs args = enqueue_args("pagos", id);
    args.delay_ms = kHourMs;
    rig.enqueue(args);
    auto resolved = rig.f.engine->resolve(id, TxState::kFailed, i == kCount - 1 ? "LAST" : "");
    REQUIRE(resolved.value().outcome == Outcome::kOk);
  }
  engine::ListPage first = rig.list("pagos", ListState::kFailed, "", 10, "", "LAST");
  CHECK(first.items.empty());
  CHECK(first.examined == engine::kListExaminedMax);
  CHECK(first.next == "tT-009999");
  engine::ListPage second = rig.list("pagos", ListState::kFailed, first.next, 10, "", "LAST");
  REQUIRE(second.items.size() == 1);
  CHECK(second.items[0].tx_id == "T-010004");
  CHECK(second.next.empty());
}

TEST_CASE("the sweep reports and repairs missing, orphan and misfiled state index keys") {
  Rig rig;
  for (const char* id : {"A", "B", "C"}) {
    engine::EnqueueArgs args = enqueue_args("pagos", id);
    args.delay_ms = kHourMs;
    rig.enqueue(args);
  }
  rig.enqueue(enqueue_args("pagos", "D"));  // ready: no key
  storage::Batch damage;
  damage.delete_state("pagos", storage::IndexedState::kScheduled, "A");   // missing
  damage.put_state("pagos", storage::IndexedState::kScheduled, "GHOST");  // orphan
  damage.put_state("pagos", storage::IndexedState::kInFlight, "B");       // misfiled: B has two
  damage.put_state("elsewhere", storage::IndexedState::kScheduled, "C");  // wrong queue
  damage.put_state("pagos", storage::IndexedState::kSending, "D");        // format 4's key
  REQUIRE(rig.f.store->write(damage).is_ok());
  engine::Sweep sweep;
  REQUIRE(engine::sweep_invariants(*rig.f.store, &sweep).is_ok());
  std::vector<std::string> texts;
  for (const auto& v : sweep.violations) texts.push_back(v.text);
  CHECK(texts.size() == 5);
  CHECK(std::find(texts.begin(), texts.end(), "A: its state index key is missing") != texts.end());
  CHECK(std::find(texts.begin(), texts.end(),
                  "state 'pagos\\x00\\x03GHOST': no transaction is filed under this state index "
                  "key") != texts.end());
  CHECK(std::find(texts.begin(), texts.end(),
                  "state 'pagos\\x00\\x01D': no transaction is filed under this state index "
                  "key") != texts.end());
  // A listing skips what the index names wrongly.
  CHECK(rig.all("pagos", ListState::kInFlight, 5).empty());
  CHECK(rig.all("elsewhere", ListState::kScheduled, 5, "C").empty());

  rig.f.reopen();  // recovery repairs
  CHECK(rig.index() == Ids{"pagos/3/A", "pagos/3/B", "pagos/3/C"});
  rig.check_sweep_clean();
  CHECK(rig.all("pagos", ListState::kScheduled, 1, "") == Ids{"A", "B", "C"});
  CHECK(rig.all("pagos", ListState::kReady, 1, "") == Ids{"D"});
}

TEST_CASE("recovery upgrades a store of format 1 and LIST works on it") {
  Rig rig;
  for (const char* id : {"A", "B"}) {
    engine::EnqueueArgs args = enqueue_args("pagos", id);
    args.delay_ms = kHourMs;
    rig.enqueue(args);
  }
  // As format 1 left it: no index, version 1.
  storage::Batch old;
  old.delete_state("pagos", storage::IndexedState::kScheduled, "A");
  old.delete_state("pagos", storage::IndexedState::kScheduled, "B");
  old.put_meta(storage::kMetaFormatKey, storage::encode_format_version(1));
  REQUIRE(rig.f.store->write(old).is_ok());
  // Format 1 has no index to check.
  rig.check_sweep_clean();
  rig.f.reopen();
  CHECK(rig.f.store->get_meta(storage::kMetaFormatKey).value() ==
        std::optional<std::string>(storage::encode_format_version(storage::kFormatVersion)));
  CHECK(rig.all("pagos", ListState::kScheduled, 1) == Ids{"A", "B"});
  rig.check_sweep_clean();
}

TEST_CASE("recovery upgrades a store of format 4: its SENDING keys go, and LIST works on it") {
  Rig rig;
  rig.enqueue(enqueue_args("pagos", "A"));  // ready
  engine::EnqueueArgs later = enqueue_args("pagos", "B");
  later.delay_ms = kHourMs;
  rig.enqueue(later);
  // As format 4 left it: A filed as SENDING.
  storage::Batch old;
  old.put_state("pagos", storage::IndexedState::kSending, "A");
  old.put_meta(storage::kMetaFormatKey, storage::encode_format_version(4));
  REQUIRE(rig.f.store->write(old).is_ok());
  CHECK(rig.index() == Ids{"pagos/1/A", "pagos/3/B"});
  rig.check_sweep_clean();  // format 4 files SENDING: A owns its key
  storage::Batch lost;
  lost.delete_state("pagos", storage::IndexedState::kSending, "A");
  REQUIRE(rig.f.store->write(lost).is_ok());
  engine::Sweep sweep;
  REQUIRE(engine::sweep_invariants(*rig.f.store, &sweep).is_ok());
  REQUIRE(sweep.violations.size() == 1);
  CHECK(sweep.violations[0].text == "A: its state index key is missing");
  REQUIRE(rig.f.store->write(old).is_ok());

  rig.f.reopen();
  CHECK(rig.f.store->get_meta(storage::kMetaFormatKey).value() ==
        std::optional<std::string>(storage::encode_format_version(5)));
  CHECK(rig.index() == Ids{"pagos/3/B"});
  CHECK(rig.all("pagos", ListState::kReady, 1) == Ids{"A"});
  CHECK(rig.all("pagos", ListState::kReady, 1, "A") == Ids{"A"});
  CHECK(rig.all("pagos", ListState::kScheduled, 1) == Ids{"B"});
  rig.check_sweep_clean();
}
