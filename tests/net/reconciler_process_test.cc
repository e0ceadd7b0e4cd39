// The periodic reconciler in the real server: a transaction left IN_FLIGHT
// past its queue's stuck_after shows in /metrics, in STATS and in the log,
// and stops counting once it moves.
#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "tests/support/http_get.h"
#include "tests/support/raw_client.h"
#include "tests/support/server_process.h"

using namespace tarde;
using tarde::testing::body_of;
using tarde::testing::free_port;
using tarde::testing::http_get;

namespace {

std::string stats(testing::RawClient& c) {
  c.send("STATS\r\n");
  const std::string head = c.read_line();
  std::string lines;
  for (int i = 0, n = std::stoi(head.substr(6)); i < n; ++i) lines += c.read_line() + "\n";
  return lines;
}

// Polls `ready` every 20 ms for at most 10 s: the server's reconciler runs
// on real time here.
bool eventually(const std::function<bool()>& ready) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < until) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ready();
}

}  // namespace

TEST_CASE("a transaction left IN_FLIGHT past stuck_after shows in /metrics, STATS and the log") {
  const uint16_t metrics_port = free_port();
  testing::ServerProcess server({"--metrics-listen", "127.0.0.1:" + std::to_string(metrics_port),
                                 "--reconcile-every", "50ms"});
  testing::RawClient c(server.port());
  REQUIRE(c.command("CONFIG q stuck_after=300ms").rfind("CONFIG", 0) == 0);
  REQUIRE(c.enqueue("q A sent=1").rfind("CREATED", 0) == 0);
  const std::string stuck = "tarde_stuck_transactions{queue=\"q\",state=\"IN_FLIGHT\"} 1\n";
  CHECK(eventually([&] {
    return body_of(http_get(metrics_port, "/metrics")).find(stuck) != std::string::npos;
  }));
  const std::string lines = stats(c);
  CHECK(lines.find("stuck.q.IN_FLIGHT 1\n") != std::string::npos);
  CHECK(lines.find("stuck 1\n") != std::string::npos);
  const std::string log = server.log();
  CHECK(log.find("alert.stuck msg=\"transaction A of queue q is stuck in IN_FLIGHT for ") !=
        std::string::npos);
  CHECK(log.find(": no answer, and no response timeout will settle it") != std::string::npos);

  // It moves: no longer stuck.
  REQUIRE(c.command("RESPOND A 1 SUCCESS").rfind("OK", 0) == 0);
  CHECK(stats(c).find("stuck.q.IN_FLIGHT 0\n") != std::string::npos);
  const std::string body = body_of(http_get(metrics_port, "/metrics"));
  CHECK(body.find("tarde_stuck_transactions{queue=\"q\",state=\"IN_FLIGHT\"} 0\n") !=
        std::string::npos);
  CHECK(body.find("tarde_reconcile_passes_total ") != std::string::npos);
  CHECK(body.find("tarde_reconcile_last_pass_seconds ") != std::string::npos);
}

TEST_CASE("--reconcile-every off: nothing is reported") {
  const uint16_t metrics_port = free_port();
  testing::ServerProcess server({"--metrics-listen", "127.0.0.1:" + std::to_string(metrics_port),
                                 "--reconcile-every", "off"});
  testing::RawClient c(server.port());
  REQUIRE(c.command("CONFIG q stuck_after=1ms").rfind("CONFIG", 0) == 0);
  REQUIRE(c.enqueue("q A sent=1").rfind("CREATED", 0) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::string lines = stats(c);
  CHECK(lines.find("reconcile_passes 0\n") != std::string::npos);
  CHECK(lines.find("stuck 0\n") != std::string::npos);
}
