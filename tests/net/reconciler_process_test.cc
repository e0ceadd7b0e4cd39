// The periodic reconciler in the real server: a transaction left IN_FLIGHT
// past its queue's stuck_after shows in /metrics, in STATS and in the log,
// and stops counting once it moves.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "tests/support/raw_client.h"
#include "tests/support/server_process.h"

using namespace tarde;

namespace {

uint16_t free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  close(fd);
  return ntohs(addr.sin_port);
}

std::string metrics_body(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n";
  REQUIRE(write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size()));
  std::string response;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = read(fd, buffer, sizeof buffer)) > 0) response.append(buffer, n);
  close(fd);
  return response.substr(response.find("\r\n\r\n") + 4);
}

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
  CHECK(eventually([&] { return metrics_body(metrics_port).find(stuck) != std::string::npos; }));
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
  const std::string body = metrics_body(metrics_port);
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
