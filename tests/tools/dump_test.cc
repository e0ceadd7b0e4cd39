// tarde-dump against a real data directory written by the engine.
#include <doctest/doctest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "engine/engine.h"
#include "storage/codec.h"
#include "storage/keys.h"
#include "storage/rocks_kv.h"
#include "tests/support/engine_fixture.h"
#include "tests/support/raw_client.h"
#include "tests/support/run_tool.h"
#include "tests/support/server_process.h"
#include "tests/support/slowdown.h"
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
  CHECK(summary.out.find("format version 5") != std::string::npos);
  // TX-READY, SENDING with its request in `ready`, has no state key.
  CHECK(summary.out.find("state index: 3 keys") != std::string::npos);
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
  for (const char* row :
       {"scheduled      TX-SCHED", "succeeded      TX-DONE", "dead_lettered  TX-DEAD"}) {
    CHECK_MESSAGE(state.out.find(row) != std::string::npos, state.out);
  }
  CHECK(state.out.find("TX-READY") == std::string::npos);
  CHECK(run(d + " state pagos --limit 1").out.find("TX-DONE") == std::string::npos);
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

TEST_CASE("a data directory counts as in use while a server holds it, and not after") {
  testing::ServerProcess server;
  CHECK(storage::RocksKv::locked_by_another_process(server.data_dir()));
  server.kill(SIGTERM);
  server.wait_exit();
  CHECK(!storage::RocksKv::locked_by_another_process(server.data_dir()));
  testing::TempDir empty;
  CHECK(!storage::RocksKv::locked_by_another_process(empty.path()));  // no LOCK file
  CHECK(!storage::RocksKv::locked_by_another_process(empty.sub("missing")));
}

// A running server flushes and compacts while tarde-dump opens and reads its
// files: before tarde-dump read a store in use again on a new secondary, 8 of
// 60 checks under this load failed (a missing file, or thousands of
// violations that were not there).
TEST_CASE("tarde-dump check on a server under load finds nothing wrong, every time") {
  testing::ServerProcess server;
  const int seconds = 10 * testing::kSlowdown;
  testing::ToolRun load;
  std::thread loader([&] {
    load = testing::run_tool("bench", "w1 --system tarde --port " + std::to_string(server.port()) +
                                          " --connections 16 --seconds " + std::to_string(seconds));
  });
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds - 1);
  int checks = 0;
  while (std::chrono::steady_clock::now() < until) {
    ToolRun check = run(server.data_dir() + " check");
    INFO(check.out.substr(0, 2000));
    CHECK(check.status == 0);
    ++checks;
  }
  loader.join();
  CHECK(load.status == 0);
  CHECK(checks >= 1);  // under a sanitizer a check of the growing store takes seconds
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

TEST_CASE("tarde-dump: a hostile reason keeps every table row on one line and the JSON valid") {
  // The embedded engine takes any bytes as a reason: quotes, backslashes,
  // control bytes, line ends, and a very long one.
  using namespace std::string_literals;
  testing::TempDir dir;
  const std::string hostile = "a\"b\\c\r\nFAKE-ROW 1 2 3\n\t\x01\x1b[31m"s + "\0"s + "end";
  const std::string long_reason(100'000, 'L');
  {
    auto kv = storage::RocksKv::open(dir.path(), storage::RocksKv::Options{});
    REQUIRE(kv.is_ok());
    testing::EngineFixture f(*kv.value());
    storage::QueueConfig config;
    config.max_deliveries = 1;
    REQUIRE(f.engine->set_config("pagos", config).is_ok());
    for (const auto& [id, why] :
         {std::pair{"TX-HOSTILE", hostile}, std::pair{"TX-LONG", long_reason}}) {
      REQUIRE(f.engine->enqueue(testing::enqueue_args("pagos", id)).is_ok());
      REQUIRE(f.engine->reserve("pagos", 1).value().value().tx_id == id);
      REQUIRE(f.engine->release(1, id, 1, 0, why).value().outcome == engine::Outcome::kBuried);
    }
    REQUIRE(kv.value()->close().is_ok());
  }
  const std::string d = dir.path();
  for (const char* command : {" dead pagos", " list", " tx TX-HOSTILE", " tx TX-LONG"}) {
    CAPTURE(command);
    const ToolRun table = run(d + command);
    REQUIRE(table.status == 0);
    CHECK((table.out.find("FAKE-ROW") == std::string::npos ||
           table.out.find("\\x0d\\x0aFAKE-ROW") != std::string::npos));
    CHECK(table.out.find('\r') == std::string::npos);
    CHECK(table.out.find('\x1b') == std::string::npos);
    CHECK(table.out.find(std::string(257, 'L')) == std::string::npos);  // cut at 256
    for (const char c : table.out) CHECK((c == '\n' || static_cast<unsigned char>(c) >= 0x20));
  }
  const ToolRun dead = run(d + " dead pagos");
  CHECK(dead.out.find(
            "a\"b\\x5cc\\x0d\\x0aFAKE-ROW\\x201\\x202\\x203\\x0a\\x09\\x01\\x1b[31m\\x00end") !=
        std::string::npos);
  size_t lines = 0;
  for (const char c : dead.out) lines += c == '\n' ? 1 : 0;
  CHECK(lines == 3);  // the header and one row per dead letter

  const ToolRun json = run(d + " dead pagos --json");
  REQUIRE(json.status == 0);
  const auto letters = nlohmann::json::parse(json.out);
  REQUIRE(letters.size() == 2);
  for (const auto& letter : letters) {
    const std::string failures = letter["failures"];
    if (letter["tx_id"] == "TX-HOSTILE") {
      CHECK(failures.substr(failures.find('/') + 1) == hostile);  // whole, byte for byte
    } else {
      CHECK(failures.substr(failures.find('/') + 1) == long_reason);
    }
  }
  const auto history = nlohmann::json::parse(run(d + " tx TX-HOSTILE --json").out);
  bool seen = false;
  for (const auto& event : history["history"]) seen = seen || event["reason"] == hostile;
  CHECK(seen);
}

TEST_CASE("tarde-dump tx shows the history as HISTORY does: marker, due, lateness, safe reasons") {
  testing::TempDir dir;
  int64_t due = 0;
  {
    auto kv = storage::RocksKv::open(dir.path(), storage::RocksKv::Options{});
    REQUIRE(kv.is_ok());
    testing::EngineFixture f(*kv.value());
    storage::QueueConfig config;
    config.history_max = 4;
    REQUIRE(f.engine->set_config("pagos", config).is_ok());
    REQUIRE(f.engine->enqueue(testing::enqueue_args("pagos", "TX-H")).is_ok());
    // Events 1..3: three RELEASEs, the last with a reason holding an escape
    // sequence and a line break (the engine keeps any text it is given).
    for (const char* why : {"ONE", "TWO", "evil\x1b[2J\nline"}) {
      REQUIRE(f.engine->reserve("pagos", 1).value().has_value());
      REQUIRE(f.engine->release(1, "TX-H", 1, 0, why).is_ok());
    }
    REQUIRE(f.engine->reserve("pagos", 1).value().has_value());
    REQUIRE(f.engine->sent("TX-H", 1).is_ok());  // event 4: event 1 goes
    REQUIRE(f.engine->respond("TX-H", 1, engine::Answer::kTransient, "", 5000).is_ok());
    due = f.tx("TX-H").next_fire_at_ms;  // event 5: event 2 goes
    f.clock.advance_ms(5000 + 7);
    while (f.engine->run_timers().value()) {
    }  // event 6, 7 ms late: event 3 goes
    REQUIRE(kv.value()->close().is_ok());
  }
  const std::string d = dir.path();
  ToolRun table = run(d + " tx TX-H");
  REQUIRE(table.status == 0);
  INFO(table.out);
  CHECK(table.out.find("dropped") != std::string::npos);
  CHECK(table.out.find("late_ms") != std::string::npos);
  CHECK(table.out.find("(3 events of its life are no longer kept") != std::string::npos);
  CHECK(table.out.find('\x1b') == std::string::npos);   // escaped, never sent to the terminal
  CHECK(table.out.find("\\x1b") == std::string::npos);  // (and the event holding it is gone)

  ToolRun json = run(d + " tx TX-H --json");
  REQUIRE(json.status == 0);
  const auto doc = nlohmann::json::parse(json.out);
  CHECK(doc["history_max"] == 4);
  CHECK(doc["dropped"] == 3);
  const auto& history = doc["history"];
  REQUIRE(history.size() == 4);
  CHECK(history[0]["seq"] == 0);
  CHECK(history[0]["cause"] == "ENQUEUE");
  CHECK(history[0]["dropped"] == 0);
  CHECK(history[0]["due"] == 0);
  CHECK(history[0]["late_ms"] == "-");
  CHECK(history[1]["seq"] == 4);
  CHECK(history[1]["dropped"] == 3);
  CHECK(history[3]["seq"] == 6);
  CHECK(history[3]["cause"] == "timer");
  CHECK(history[3]["due"] == due);
  CHECK(history[3]["late_ms"] == 7);

  ToolRun limited = run(d + " tx TX-H --json --limit 1");
  REQUIRE(limited.status == 0);
  CHECK(nlohmann::json::parse(limited.out)["history"].size() == 1);
}

TEST_CASE("tarde-dump tx escapes control bytes of a reason in its table, not in JSON") {
  testing::TempDir dir;
  {
    auto kv = storage::RocksKv::open(dir.path(), storage::RocksKv::Options{});
    REQUIRE(kv.is_ok());
    testing::EngineFixture f(*kv.value());
    REQUIRE(f.engine->enqueue(testing::enqueue_args("pagos", "TX-E")).is_ok());
    REQUIRE(f.engine->reserve("pagos", 1).value().has_value());
    REQUIRE(f.engine->release(1, "TX-E", 1, 0, "evil\x1b[2J\r\nx y\\").is_ok());
    REQUIRE(kv.value()->close().is_ok());
  }
  ToolRun table = run(dir.path() + " tx TX-E");
  REQUIRE(table.status == 0);
  INFO(table.out);
  CHECK(table.out.find('\x1b') == std::string::npos);
  CHECK(table.out.find("evil\\x1b[2J\\x0d\\x0ax\\x20y\\x5c") != std::string::npos);
  ToolRun json = run(dir.path() + " tx TX-E --json");
  REQUIRE(json.status == 0);
  const auto doc = nlohmann::json::parse(json.out);
  CHECK(doc["history"][1]["reason"] == "evil\x1b[2J\r\nx y\\");
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
