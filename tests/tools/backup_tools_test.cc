// tarde-dump backups and restore, and the proof that a backup taken under load
// holds every change acknowledged before BACKUP was sent: kill -9 the server
// afterwards, restore the backup into a new directory, serve it, and find
// every such transaction at least as far along as it was.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "storage/backups.h"
#include "storage/rocks_kv.h"
#include "tests/support/engine_fixture.h"
#include "tests/support/raw_client.h"
#include "tests/support/run_tool.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

using namespace tarde;

namespace {

namespace fs = std::filesystem;
using testing::ToolRun;

ToolRun dump(const std::string& args) { return testing::run_tool("dump", args); }

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// A data directory with a few transactions, and two backups of it in
// `backup_dir`: the first before TX-LATE was enqueued, the second after.
void data_with_two_backups(const std::string& data, const std::string& backup_dir) {
  auto kv = storage::RocksKv::open(data, storage::RocksKv::Options{});
  REQUIRE(kv.is_ok());
  storage::BackupMaker maker({.backup_dir = backup_dir});
  {
    testing::EngineFixture f(*kv.value());
    for (const char* id : {"TX-A", "TX-B"}) {
      REQUIRE(f.engine->enqueue(testing::enqueue_args("pagos", id)).is_ok());
    }
    REQUIRE(maker.create(*kv.value()).is_ok());
    REQUIRE(f.engine->enqueue(testing::enqueue_args("pagos", "TX-LATE")).is_ok());
    REQUIRE(maker.create(*kv.value()).is_ok());
  }
  REQUIRE(kv.value()->close().is_ok());
}

}  // namespace

TEST_CASE("tarde-dump backups lists and verifies; restore makes a store that serves and checks") {
  testing::TempDir dir;
  const std::string backups = dir.sub("backups");
  data_with_two_backups(dir.sub("data"), backups);

  ToolRun listed = dump("backups " + backups);
  CHECK_MESSAGE(listed.status == 0, listed.out);
  CHECK(contains(listed.out, "id"));
  CHECK(contains(listed.out, "verified"));
  CHECK(contains(listed.out, "(2 backups in " + backups + ")"));
  ToolRun as_json = dump("backups " + backups + " --json");
  REQUIRE(as_json.status == 0);
  const auto rows = nlohmann::json::parse(as_json.out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["id"] == 1);
  CHECK(rows[1]["id"] == 2);
  CHECK(rows[1]["verified"] == "yes");
  CHECK(rows[1]["bytes"].get<uint64_t>() > 0);
  CHECK(rows[1]["files"].get<uint64_t>() > 0);

  const std::string target = dir.sub("restored");
  ToolRun restored = dump("restore " + backups + " 1 " + target);
  CHECK_MESSAGE(restored.status == 0, restored.out);
  CHECK(contains(restored.out, "restored backup 1 of " + backups + " into " + target));
  CHECK(contains(restored.out, "checksums verified"));
  CHECK(contains(restored.out, "next: tarde-dump " + target + " check"));
  ToolRun checked = dump(target + " check");
  CHECK_MESSAGE(checked.status == 0, checked.out);
  CHECK(dump(target + " tx TX-A").status == 0);
  CHECK(contains(dump(target + " tx TX-LATE").out, "no transaction TX-LATE"));
  // The restored directory is a store tarde serves.
  testing::ServerProcess server({"--data", target});
  testing::RawClient c(server.port());
  CHECK(c.command("GET TX-LATE") == "NOT_FOUND TX-LATE");
  CHECK(c.command("GET TX-B").rfind("TX id=TX-B queue=pagos state=SENDING", 0) == 0);
}

// "(2 backups in" is checked above, "(0 backups in" in tests/net/backup_test.cc.
TEST_CASE("tarde-dump backups says 1 backup, not 1 backups") {
  testing::TempDir dir;
  const std::string backups = dir.sub("backups");
  auto kv = storage::RocksKv::open(dir.sub("data"), storage::RocksKv::Options{});
  REQUIRE(kv.is_ok());
  storage::BackupMaker maker({.backup_dir = backups});
  REQUIRE(maker.create(*kv.value()).is_ok());
  REQUIRE(kv.value()->close().is_ok());
  ToolRun one = dump("backups " + backups);
  CHECK_MESSAGE(one.status == 0, one.out);
  CHECK(contains(one.out, "(1 backup in " + backups + ")"));
}

TEST_CASE("tarde-dump restore refuses, with distinct exit codes and clear words") {
  testing::TempDir dir;
  const std::string backups = dir.sub("backups");
  data_with_two_backups(dir.sub("data"), backups);

  SUBCASE("a target that is not empty: exit 4, nothing touched") {
    fs::create_directories(dir.sub("busy"));
    std::ofstream(dir.sub("busy/precious")) << "keep";
    ToolRun refused = dump("restore " + backups + " 2 " + dir.sub("busy"));
    CHECK(refused.status == 4);
    CHECK(contains(refused.out, "is not empty; a restore never writes over anything"));
    CHECK(fs::exists(dir.sub("busy/precious")));
    CHECK(std::distance(fs::directory_iterator(dir.sub("busy")), fs::directory_iterator()) == 1);
  }
  SUBCASE("an unknown id or a missing backup directory: exit 3") {
    ToolRun unknown = dump("restore " + backups + " 9 " + dir.sub("t"));
    CHECK(unknown.status == 3);
    CHECK(contains(unknown.out, "no backup 9 in " + backups));
    CHECK_FALSE(fs::exists(dir.sub("t")));
    ToolRun missing = dump("restore " + dir.sub("nowhere") + " 1 " + dir.sub("t"));
    CHECK(missing.status == 3);
    CHECK(contains(missing.out, "no backup directory at " + dir.sub("nowhere")));
    ToolRun list_missing = dump("backups " + dir.sub("nowhere"));
    CHECK(list_missing.status == 3);
    CHECK(contains(list_missing.out, "no backup directory at"));
  }
  SUBCASE("a damaged backup: backups exits 1 naming it, restore exits 3 and leaves nothing") {
    for (const auto& entry : fs::recursive_directory_iterator(backups)) {
      if (entry.path().filename().string().rfind("MANIFEST", 0) != 0) continue;
      std::fstream file(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
      file.seekp(10);
      file.put('\x7f');
    }
    ToolRun listed = dump("backups " + backups);
    CHECK(listed.status == 1);
    CHECK(contains(listed.out, "NO"));
    CHECK(contains(listed.out, "Corruption"));
    ToolRun restored = dump("restore " + backups + " 2 " + dir.sub("t"));
    CHECK(restored.status == 3);
    CHECK_FALSE(fs::exists(dir.sub("t")));
  }
  SUBCASE("a bad command line: exit 2") {
    CHECK(dump("backups").status == 2);
    CHECK(dump("backups a b").status == 2);
    ToolRun bad_id = dump("restore " + backups + " one " + dir.sub("t"));
    CHECK(bad_id.status == 2);
    CHECK(contains(bad_id.out, "the backup id expects a whole number"));
    CHECK(dump("restore " + backups + " 1").status == 2);
    CHECK(contains(dump("--help").out, "restore <backup-dir> <id> <target-dir>"));
  }
}

namespace {

// What a client saw of a transaction in an acknowledged reply.
struct Seen {
  std::string state;
  uint32_t attempt = 0;
  uint32_t next_attempt = 0;
};

bool terminal(const std::string& state) { return state == "SUCCEEDED" || state == "FAILED"; }

// How far along a transaction is, for a workload without TRANSIENT answers
// (a TRANSIENT re-send goes back from IN_FLIGHT n to SCHEDULED n, which is why
// the workload leaves it out): SCHEDULED k < SENDING k < IN_FLIGHT k <
// SCHEDULED k+1 < ... < SUCCEEDED or FAILED. Each transition of the workload
// moves it forward or leaves it (a lease given back).
int64_t progress(const Seen& seen) {
  if (terminal(seen.state)) return INT64_MAX;
  if (seen.state == "IN_FLIGHT") return 3 * int64_t{seen.attempt};
  if (seen.state == "SENDING") return 3 * int64_t{seen.next_attempt} - 1;
  return 3 * int64_t{seen.next_attempt} - 2;  // SCHEDULED
}

// "At least as far along": a terminal transaction stayed in the same
// terminal state; any other is terminal now, or no less far along, with an
// attempt number no lower.
bool at_least_as_far(const Seen& now, const Seen& then) {
  if (terminal(then.state)) return now.state == then.state && now.attempt == then.attempt;
  if (terminal(now.state)) return true;
  return progress(now) >= progress(then) && now.attempt >= then.attempt;
}

// The acknowledged summaries of every transaction, newest (furthest) kept.
class Ledger {
 public:
  void record(const std::string& reply) {
    const testing::Summary summary = testing::parse_summary(reply);
    const Seen seen{summary.state, summary.attempt, summary.next_attempt};
    std::lock_guard<std::mutex> guard(mutex_);
    auto [it, inserted] = seen_.emplace(summary.tx_id, seen);
    if (!inserted && progress(seen) >= progress(it->second)) it->second = seen;
  }
  std::map<std::string, Seen> copy() {
    std::lock_guard<std::mutex> guard(mutex_);
    return seen_;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, Seen> seen_;
};

// One client of the load: enqueues, takes requests, confirms and answers
// them (SUCCESS, CANCELLED or REJECTED), recording every acknowledged
// summary, until `stop` or until the connection dies (the kill).
void run_client(uint16_t port, int worker, Ledger& ledger, const std::atomic<bool>& stop,
                std::atomic<uint64_t>& acknowledged) {
  std::mt19937 random(static_cast<uint32_t>(worker) * 7919U + 1);
  try {
    testing::RawClient c(port);
    for (int n = 0; !stop; ++n) {
      if (random() % 10 < 4) {
        const std::string id = "w" + std::to_string(worker) + "-" + std::to_string(n);
        ledger.record(c.enqueue("load " + id + (random() % 10 == 0 ? " sent=1" : "")));
        acknowledged += 1;
        continue;
      }
      const testing::Request got = c.request("RESERVE load");
      if (!got.is_request) continue;
      const std::string tx = got.tx_id + " " + std::to_string(got.attempt);
      ledger.record(c.command("SENT " + tx));
      static const char* const kAnswers[] = {"SUCCESS", "CANCELLED", "CANCELLED", "REJECTED"};
      ledger.record(c.command("RESPOND " + tx + " " + kAnswers[random() % 4]));
      acknowledged += 2;
    }
  } catch (const std::exception&) {
    // The server was killed under this client: what it had recorded stands.
  }
}

}  // namespace

TEST_CASE("a backup under load holds every change acknowledged before BACKUP was sent") {
  testing::TempDir dir;
  const std::string backups = dir.sub("backups");
  testing::ServerProcess server({"--backup-dir", backups});
  {
    testing::RawClient admin(server.port());
    REQUIRE(admin.command("CONFIG load base=30ms factor=1 cap=30ms jitter=0 max_attempts=3")
                .rfind("CONFIG load ", 0) == 0);
  }
  Ledger ledger;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> acknowledged{0};
  std::vector<std::thread> clients;
  for (int worker = 0; worker < 4; ++worker) {
    clients.emplace_back(run_client, server.port(), worker, std::ref(ledger), std::cref(stop),
                         std::ref(acknowledged));
  }
  while (acknowledged < 600) std::this_thread::sleep_for(std::chrono::milliseconds(5));

  // Everything recorded here was acknowledged before BACKUP is sent.
  const std::map<std::string, Seen> before = ledger.copy();
  testing::RawClient admin(server.port());
  const std::string made = admin.command("BACKUP");
  REQUIRE_MESSAGE(made.rfind("BACKUP id=1 ", 0) == 0, made);
  const uint64_t at_reply = acknowledged;
  // The load went on during the backup and goes on after it; then kill -9.
  while (acknowledged < at_reply + 300) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  server.kill(SIGKILL);
  stop = true;
  for (std::thread& client : clients) client.join();
  server.wait_exit();

  const std::string target = dir.sub("restored");
  const ToolRun restored = dump("restore " + backups + " 1 " + target);
  REQUIRE_MESSAGE(restored.status == 0, restored.out);
  const ToolRun checked = dump(target + " check");
  CHECK_MESSAGE(checked.status == 0, checked.out);

  testing::ServerProcess again({"--data", target});
  testing::RawClient c(again.port());
  size_t terminal_before = 0;
  size_t open_before = 0;
  for (const auto& entry : before) {
    // Named copies: clang cannot capture structured bindings in the lambdas
    // the CHECK macros make.
    const std::string& tx_id = entry.first;
    const auto& then = entry.second;
    const std::string line = c.command("GET " + tx_id);
    REQUIRE_MESSAGE(line.rfind("TX id=" + tx_id + " ", 0) == 0, (tx_id + ": " + line));
    const auto fields = testing::parse_fields(line);
    const Seen now{fields.at("state"), static_cast<uint32_t>(std::stoul(fields.at("attempt"))),
                   static_cast<uint32_t>(std::stoul(fields.at("next_attempt")))};
    CHECK_MESSAGE(at_least_as_far(now, then), tx_id, ": acknowledged ", then.state, " ",
                  then.attempt, "/", then.next_attempt, " before BACKUP, restored ", now.state, " ",
                  now.attempt, "/", now.next_attempt);
    (terminal(then.state) ? terminal_before : open_before) += 1;
  }
  MESSAGE(before.size(), " transactions acknowledged before BACKUP, ", terminal_before,
          " of them ended; the load acknowledged ", acknowledged.load(), " replies in all");
  CHECK(terminal_before > 20);
  CHECK(open_before > 20);
}
