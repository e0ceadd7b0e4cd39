// Storage faults for real: the running `tarde serve` gets a file-size limit
// (RLIMIT_FSIZE, set on its pid with prlimit(2)) so that every append to its
// WAL fails with EFBIG, as a disk that refuses writes would; then the limit is
// lifted. No mock: the real binary, the real RocksDB, the real kernel error.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>

#include "tests/support/cli_spawn.h"
#include "tests/support/raw_client.h"
#include "tests/support/server_process.h"
#include "tests/support/wal_file.h"

namespace tarde::testing {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Sets the soft file-size limit of process pid (the hard one stays).
void set_file_size_limit(pid_t pid, rlim_t bytes) {
  struct rlimit limit {};
  REQUIRE(prlimit(pid, RLIMIT_FSIZE, nullptr, &limit) == 0);
  limit.rlim_cur = bytes;
  REQUIRE(prlimit(pid, RLIMIT_FSIZE, &limit, nullptr) == 0);
}

// Where the data of the fullest WAL file in dir ends: its next append goes
// there (its size is set ahead of its data).
rlim_t wal_data_bytes(const std::string& dir) {
  rlim_t largest = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".log") {
      largest = std::max<rlim_t>(largest, wal_data_end(file_bytes(entry.path())));
    }
  }
  REQUIRE(largest > 40000);
  return largest;
}

size_t count_of(const std::string& text, std::string_view what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

TEST_CASE("a refused write answers ERR INTERNAL, reads go on, writes resume by themselves") {
  ServerProcess server;
  RawClient c(server.port());
  const std::string big(20000, 'p');
  REQUIRE(starts_with(c.enqueue("pagos tx-a", big), "CREATED tx-a "));
  REQUIRE(starts_with(c.enqueue("pagos tx-b", big), "CREATED tx-b "));

  // The limit is where the WAL's data ends: its next append fails with EFBIG, while the
  // server's own log (a file too, far smaller) can still take the error line.
  set_file_size_limit(server.pid(), wal_data_bytes(server.data_dir()));
  CHECK(starts_with(c.enqueue("pagos tx-c"), "ERR INTERNAL "));
  {
    const std::string log = server.log();
    INFO("log: " << log);
    CHECK(count_of(log, "storage refused a write") == 1);
    CHECK(log.find("File too large") != std::string::npos);
  }

  // Now nothing can be written anywhere, so the store cannot even reopen.
  // Pipelined in one write: none of them may say CREATED.
  set_file_size_limit(server.pid(), 1);
  c.send("ENQUEUE pagos tx-d 1\r\nx\r\nENQUEUE pagos tx-e 1\r\nx\r\nENQUEUE pagos tx-f 1\r\nx\r\n");
  for (int i = 0; i < 3; ++i) {
    const std::string reply = c.read_line();
    INFO("reply " << i << ": " << reply);
    CHECK(starts_with(reply, "ERR INTERNAL "));
  }
  // Reads keep working, and see nothing of the failed commands.
  CHECK(starts_with(c.command("GET tx-a"), "TX id=tx-a "));
  CHECK(c.command("GET tx-c") == "NOT_FOUND tx-c");
  CHECK(c.command("GET tx-d") == "NOT_FOUND tx-d");
  {
    // Every refused group is counted, for the disk-error alert.
    const std::vector<std::string> stats = c.block("STATS");
    const auto failed = std::find_if(stats.begin(), stats.end(), [](const std::string& line) {
      return line.rfind("commits_failed ", 0) == 0;
    });
    REQUIRE(failed != stats.end());
    CHECK(std::stoull(failed->substr(15)) >= 2);
  }
  CHECK(!c.block("HISTORY tx-a").empty());
  CHECK(starts_with(c.enqueue("pagos tx-f"), "ERR INTERNAL "));
  CHECK(starts_with(c.command("GET tx-b"), "TX id=tx-b "));

  // The fault clears: the next write goes through without a restart.
  set_file_size_limit(server.pid(), RLIM_INFINITY);
  CHECK(starts_with(c.enqueue("pagos tx-c"), "CREATED tx-c "));  // not EXISTS: nothing half-kept
  CHECK(starts_with(c.enqueue("pagos tx-g"), "CREATED tx-g "));
  const auto request = c.request("RESERVE pagos");
  CHECK(request.tx_id == "tx-a");
  CHECK(starts_with(c.command("SENT tx-a 1"), "OK"));
  CHECK(server.log().find("storage accepts writes again") != std::string::npos);
  {
    // Once the recount that follows the fault is done, STATS counts each
    // stored transaction once. (command-fuzz-recount: its sweep started at
    // the first good commit and counted tx-c, created in that commit, a
    // second time: 5 transactions.)
    std::string counting = "1";
    std::string transactions;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (counting != "0" && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      for (const std::string& line : c.block("STATS")) {
        if (starts_with(line, "counting ")) counting = line.substr(9);
        if (starts_with(line, "transactions ")) transactions = line.substr(13);
      }
    }
    CHECK(counting == "0");
    CHECK(transactions == "4");  // tx-a, tx-b, tx-c, tx-g
  }

  // Nothing acknowledged is lost, nothing refused is there, invariants hold.
  server.kill(SIGKILL);
  server.wait_exit();
  CliRun check =
      run_program(std::string(TARDE_BIN_DIR) + "/tarde-dump", {server.data_dir(), "check"});
  INFO("check: " << check.out << check.err);
  CHECK(check.exit_code == 0);
  CHECK(check.out.find("0 violations") != std::string::npos);
  server.restart();
  RawClient after(server.port());
  for (const char* id : {"tx-a", "tx-b", "tx-c", "tx-g"}) {
    CHECK(starts_with(after.command(std::string("GET ") + id), std::string("TX id=") + id + " "));
  }
  for (const char* id : {"tx-d", "tx-e", "tx-f"}) {
    CHECK(after.command(std::string("GET ") + id) == std::string("NOT_FOUND ") + id);
  }
  CHECK(after.command("GET tx-a").find("state=IN_FLIGHT") != std::string::npos);
}

TEST_CASE("a file-size limit does not kill the server (SIGXFSZ is ignored)") {
  ServerProcess server;
  RawClient c(server.port());
  set_file_size_limit(server.pid(), 1);
  CHECK(starts_with(c.enqueue("pagos tx-a"), "ERR INTERNAL "));
  CHECK(c.command("PING") == "PONG");
  CHECK(server.running());
}

}  // namespace
}  // namespace tarde::testing
