// tarde-dump against a real data directory written by the engine.
#include <doctest/doctest.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/engine.h"
#include "storage/codec.h"
#include "storage/keys.h"
#include "storage/rocks_kv.h"
#include "tests/support/engine_fixture.h"
#include "tests/support/raw_client.h"
#include "tests/support/run_tool.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

using namespace tarde;

namespace {

using testing::ToolRun;

ToolRun run(const std::string& args) { return testing::run_tool("dump", args); }

// A data dir with one transaction in each interesting place.
void populate(const std::string& dir) {
  auto kv = storage::RocksKv::open(dir, storage::RocksKv::Options{});
  REQUIRE(kv.is_ok());
  {
    testing::EngineFixture f(*kv.value());
    storage::QueueConfig config;
    config.max_deliveries = 1;
    REQUIRE(f.engine->set_config("pagos", config).is_ok());
    for (const char* id : {"TX-READY", "TX-SCHED", "TX-DEAD", "TX-DONE"}) {
      REQUIRE(f.engine->enqueue(testing::enqueue_args("pagos", id)).is_ok());
    }
    auto take = [&] { return f.engine->reserve("pagos", 1).value().value(); };
    REQUIRE(take().tx_id == "TX-READY");  // leased only: ready again on disk
    REQUIRE(take().tx_id == "TX-SCHED");
    REQUIRE(f.engine->respond("TX-SCHED", 1, engine::Answer::kCancelled, "", {}).is_ok());
    REQUIRE(take().tx_id == "TX-DEAD");
    REQUIRE(f.engine->release(1, "TX-DEAD", 1, 0, "BROKEN").value().outcome ==
            engine::Outcome::kBuried);
    REQUIRE(take().tx_id == "TX-DONE");
    REQUIRE(f.engine->respond("TX-DONE", 1, engine::Answer::kSuccess, "", {}).is_ok());
  }
  REQUIRE(kv.value()->close().is_ok());
}

}  // namespace

TEST_CASE("tarde-dump summary, tx, list, due, ready, dead, state and check read a data directory") {
  testing::TempDir dir;
  populate(dir.path());
  const std::string d = dir.path();

  ToolRun summary = run(d + " summary");
  CHECK(summary.status == 0);
  CHECK(summary.out.find("format version 2") != std::string::npos);
  CHECK(summary.out.find("state index: 4 keys") != std::string::npos);
  CHECK(summary.out.find("retry index: 2 entries") != std::string::npos);  // retry + retention

  ToolRun tx = run(d + " tx TX-SCHED");
  CHECK(tx.status == 0);
  CHECK(tx.out.find("SCHEDULED") != std::string::npos);
  CHECK(tx.out.find("RESPOND") != std::string::npos);

  ToolRun list = run(d + " list --state SENDING");
  CHECK(list.status == 0);
  CHECK(list.out.find("TX-READY") != std::string::npos);
  CHECK(list.out.find("TX-DEAD") != std::string::npos);
  CHECK(list.out.find("TX-DONE") == std::string::npos);

  ToolRun due = run(d + " due --json");
  CHECK(due.status == 0);
  CHECK(due.out.find("\"kind\": \"retry\"") != std::string::npos);
  CHECK(due.out.find("\"kind\": \"retention\"") != std::string::npos);

  ToolRun ready = run(d + " ready pagos");
  CHECK(ready.out.find("TX-READY") != std::string::npos);
  CHECK(ready.out.find("TX-DEAD") == std::string::npos);

  ToolRun dead = run(d + " dead pagos");
  CHECK(dead.out.find("TX-DEAD#1") != std::string::npos);
  CHECK(dead.out.find("BROKEN") != std::string::npos);

  ToolRun state = run(d + " state pagos");
  CHECK(state.status == 0);
  for (const char* row : {"sending        TX-READY", "scheduled      TX-SCHED",
                          "succeeded      TX-DONE", "dead_lettered  TX-DEAD"}) {
    CHECK_MESSAGE(state.out.find(row) != std::string::npos, state.out);
  }
  CHECK(run(d + " state pagos --limit 1").out.find("TX-SCHED") == std::string::npos);
  CHECK(run(d + " state").status == 2);

  ToolRun check = run(d + " check");
  CHECK(check.status == 0);
  CHECK(check.out.find("0 violations") != std::string::npos);
}

TEST_CASE("tarde-dump check reports a broken invariant with exit status 1") {
  testing::TempDir dir;
  populate(dir.path());
  {
    auto kv = storage::RocksKv::open(dir.path(), storage::RocksKv::Options{});
    REQUIRE(kv.is_ok());
    storage::KvBatch batch;  // an orphan timer and a missing ready entry
    batch.put(storage::Cf::kDue, storage::due_key(5, "TX-GHOST"),
              storage::encode_due_value({storage::DueKind::kRetry, 2}));
    storage::Store store(*kv.value());
    auto rec = store.get_tx("TX-READY").value().value();
    batch.del(storage::Cf::kReady, storage::ready_key("pagos", rec.ready_at_ms, rec.ready_seq));
    // and a missing and an orphan state index key
    batch.del(storage::Cf::kState, storage::state_key("pagos", 4, "TX-DONE"));
    batch.put(storage::Cf::kState, storage::state_key("pagos", 3, "TX-LOST"), "");
    REQUIRE(kv.value()->write(batch).is_ok());
    REQUIRE(kv.value()->close().is_ok());
  }
  ToolRun check = run(dir.path() + " check");
  CHECK(check.status == 1);
  CHECK(check.out.find("TX-GHOST") != std::string::npos);
  CHECK(check.out.find("TX-READY") != std::string::npos);
  CHECK(check.out.find("TX-DONE: its state index key is missing") != std::string::npos);
  CHECK(check.out.find("TX-LOST': no transaction is filed under this state index key") !=
        std::string::npos);
  CHECK(check.out.find("4 violations") != std::string::npos);
}

TEST_CASE("tarde-dump refuses what it cannot read, clearly") {
  testing::TempDir dir;
  ToolRun missing = run(dir.path() + "/nope summary");
  CHECK(missing.status == 3);
  CHECK(missing.out.find("not a tarde data directory") != std::string::npos);
  ToolRun usage = run(dir.path());
  CHECK(usage.status == 2);
  populate(dir.path());
  CHECK(run(dir.path() + " frobnicate").status == 2);
  CHECK(run(dir.path() + " tx NOPE").status == 3);
}

TEST_CASE("tarde-dump reads a running server's data without disturbing it") {
  testing::ServerProcess server;
  testing::RawClient client(server.port());
  REQUIRE(client.enqueue("pagos TX-LIVE").rfind("CREATED", 0) == 0);
  ToolRun summary = run(server.data_dir() + " summary");
  CHECK(summary.status == 0);
  CHECK(summary.out.find("pagos") != std::string::npos);
  ToolRun tx = run(server.data_dir() + " tx TX-LIVE");
  CHECK(tx.status == 0);
  CHECK(tx.out.find("ENQUEUE") != std::string::npos);
  CHECK(run(server.data_dir() + " check").status == 0);
  // The server kept serving throughout.
  CHECK(client.enqueue("pagos TX-AFTER").rfind("CREATED", 0) == 0);
  CHECK(client.command("PING") == "PONG");
}

TEST_CASE("tarde-dump summary shows each queue's ready floor; check finds a request below it") {
  testing::TempDir dir;
  populate(dir.path());
  {
    auto kv = storage::RocksKv::open(dir.path(), storage::RocksKv::Options{});
    REQUIRE(kv.is_ok());
    storage::Store store(*kv.value());
    const auto rec = store.get_tx("TX-READY").value().value();
    storage::Batch batch;  // a floor just above the request still to hand out
    batch.put_ready_floor("pagos", {rec.ready_at_ms, rec.ready_seq + 1});
    REQUIRE(store.write(batch).is_ok());
    REQUIRE(kv.value()->close().is_ok());
  }
  ToolRun summary = run(dir.path() + " summary");
  CHECK(summary.status == 0);
  CHECK(summary.out.find("ready floors") != std::string::npos);
  ToolRun json = run(dir.path() + " summary --json");
  const auto summary_json = nlohmann::json::parse(json.out);
  REQUIRE(summary_json["ready_floors"].size() == 1);
  CHECK(summary_json["ready_floors"][0]["queue"] == "pagos");
  CHECK(summary_json["ready_floors"][0].contains("ready_at"));
  ToolRun check = run(dir.path() + " check");
  CHECK(check.status == 1);
  CHECK(check.out.find("TX-READY: its request is below its queue's ready floor") !=
        std::string::npos);
  CHECK(check.out.find("1 violations") != std::string::npos);
}

TEST_CASE("tarde-dump --json keeps UTF-8 as it is, and an invalid byte does not break the JSON") {
  // tx_ids and queue names are printable ASCII (the store refuses others);
  // reasons are free text as far as the engine goes.
  testing::TempDir dir;
  const std::string reason = "raison-é-日本";
  const std::string bad_reason = "bad-\xFF-byte";
  {
    auto kv = storage::RocksKv::open(dir.path(), storage::RocksKv::Options{});
    REQUIRE(kv.is_ok());
    testing::EngineFixture f(*kv.value());
    storage::QueueConfig config;
    config.max_deliveries = 1;
    REQUIRE(f.engine->set_config("pagos", config).is_ok());
    for (const auto& [id, why] : {std::pair{"TX-UTF8", reason}, std::pair{"TX-BAD", bad_reason}}) {
      REQUIRE(f.engine->enqueue(testing::enqueue_args("pagos", id)).is_ok());
      REQUIRE(f.engine->reserve("pagos", 1).value().value().tx_id == id);
      REQUIRE(f.engine->release(1, id, 1, 0, why).value().outcome == engine::Outcome::kBuried);
    }
    REQUIRE(kv.value()->close().is_ok());
  }
  const std::string d = dir.path();

  ToolRun dead = run(d + " dead pagos --json");
  REQUIRE(dead.status == 0);
  CHECK(dead.out.find(reason) != std::string::npos);     // not "\u00c3\u00a9" and so on
  const auto letters = nlohmann::json::parse(dead.out);  // throws on invalid JSON
  REQUIRE(letters.size() == 2);
  CHECK(letters[1]["tx_id"] == "TX-UTF8");
  CHECK(letters[1]["attempt"] == 1);
  CHECK(letters[1]["failures"].get<std::string>().find("/" + reason) != std::string::npos);
  CHECK(letters[0]["tx_id"] == "TX-BAD");  // U+FFFD for the invalid byte
  CHECK(letters[0]["failures"].get<std::string>().find("/bad-\xEF\xBF\xBD-byte") !=
        std::string::npos);

  ToolRun tx = run(d + " tx TX-UTF8 --json");
  REQUIRE(tx.status == 0);
  const auto doc = nlohmann::json::parse(tx.out);
  CHECK(doc["record"][0]["tx_id"] == "TX-UTF8");
  bool reason_seen = false;
  for (const auto& event : doc["history"]) reason_seen = reason_seen || event["reason"] == reason;
  CHECK(reason_seen);

  for (const char* command :
       {" list --json", " summary --json", " check --json", " due --json", " tx TX-BAD --json"}) {
    CAPTURE(command);
    const ToolRun out = run(d + command);
    CHECK_FALSE(nlohmann::json::parse(out.out, nullptr, false).is_discarded());
  }
}

TEST_CASE("tarde-dump refuses a bad command line with exit status 2 and says why") {
  testing::TempDir dir;
  populate(dir.path());
  const std::string d = dir.path();
  ToolRun unknown = run(d + " list --bogus");
  CHECK(unknown.status == 2);
  CHECK(unknown.out.find("tarde-dump: unknown flag --bogus (see tarde-dump --help)") !=
        std::string::npos);
  ToolRun missing = run(d + " list --limit");
  CHECK(missing.status == 2);
  CHECK(missing.out.find("tarde-dump: --limit needs a value (N)") != std::string::npos);
  ToolRun bad = run(d + " list --limit ten");
  CHECK(bad.status == 2);
  CHECK(bad.out.find("--limit expects a whole number from 0 to") != std::string::npos);
  ToolRun switch_value = run(d + " list --json=yes");
  CHECK(switch_value.status == 2);
  CHECK(switch_value.out.find("--json takes no value") != std::string::npos);
  ToolRun extra = run(d + " tx A B");
  CHECK(extra.status == 2);
  CHECK(extra.out.find("unexpected argument 'B'") != std::string::npos);
  ToolRun no_id = run(d + " tx");
  CHECK(no_id.status == 2);
  CHECK(no_id.out.find("tx needs an argument") != std::string::npos);
  // Flags anywhere, in both spellings.
  ToolRun limited = run("--limit=1 " + d + " list --state SENDING");
  CHECK(limited.status == 0);
  CHECK(limited.out.find("TX-DEAD") != std::string::npos);  // the first in id order
  CHECK(limited.out.find("TX-READY") == std::string::npos);
  ToolRun help = run("--help");
  CHECK(help.status == 0);
  for (const char* word : {"usage: tarde-dump", "--json", "--state S", "--queue Q", "--limit N",
                           "(default 0)", "check"}) {
    CHECK_MESSAGE(help.out.find(word) != std::string::npos, word);
  }
}
