// Resource limits over real sockets: a client that pipelines without reading
// is paused (bounded memory, one log line), and the listen address.
#include <doctest/doctest.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>

#include "net/server/command_line.h"
#include "tests/support/cli_spawn.h"
#include "tests/support/raw_client.h"
#include "tests/support/server_process.h"
#include "tests/support/slowdown.h"

namespace tarde::testing {
namespace {

size_t count_of(const std::string& text, std::string_view what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

// Resident memory of process pid, in bytes.
size_t resident_bytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

// Reads raw bytes from fd until `expected` replies starting with `head` (at
// the start of a line) have arrived, and nothing more; false on a 30 s stall.
bool count_replies(int fd, std::string_view head, size_t expected) {
  const std::string marker = "\n" + std::string(head);
  std::string window = "\n";  // the stream starts at a line start
  size_t seen = 0;
  char chunk[256 * 1024];
  while (seen < expected) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 30'000) <= 0) return false;
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    window.append(chunk, static_cast<size_t>(n));
    for (size_t at = window.find(marker); at != std::string::npos;
         at = window.find(marker, at + 1)) {
      ++seen;
    }
    window.erase(0, window.size() - std::min(window.size(), marker.size() - 1));
  }
  return seen == expected;
}

// Whether the server's log says `what` within `wait`.
bool logs_within(ServerProcess& server, std::string_view what, std::chrono::seconds wait) {
  const auto give_up = std::chrono::steady_clock::now() + wait;
  while (server.log().find(what) == std::string::npos) {
    if (std::chrono::steady_clock::now() >= give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

TEST_CASE("a client that pipelines and never reads is paused, logged once, then served in full") {
  ServerProcess server;
  RawClient c(server.port(), std::chrono::seconds(30));
  const size_t reply_bytes = [&] {
    size_t bytes = 0;
    for (const std::string& line : c.block("STATS")) bytes += line.size() + 2;
    return bytes;
  }();
  REQUIRE(reply_bytes > 200);
  const size_t rss_before = resident_bytes(server.pid());
  // About 128 MiB of replies if the server buffered them all.
  const size_t commands = (128u << 20) / reply_bytes;
  std::string pipeline;
  for (size_t i = 0; i < commands; ++i) pipeline += "STATS\r\n";
  std::thread sender([&] { c.send(pipeline); });

  REQUIRE(logs_within(server, "paused reading", std::chrono::seconds(20)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // would it keep growing?
  const size_t rss_paused = resident_bytes(server.pid());
  INFO("rss before " << rss_before << ", paused " << rss_paused);
  if (testing::kResidentSizeMeaningful) CHECK(rss_paused < rss_before + (48u << 20));

  CHECK(count_replies(c.fd(), "STATS ", commands));
  sender.join();
  CHECK(c.command("PING") == "PONG");
  const std::string log = server.log();
  INFO("log: " << log);
  // One line per pause, not per attempt to read: the sender keeps sending as
  // the server drains, so a pause may come back, each one ended by a line.
  const size_t pauses = count_of(log, "paused reading");
  CHECK(pauses >= 1);
  CHECK(pauses < 100);
  CHECK(count_of(log, "pause over") == pauses);
}

// CPU time (user and system) of process pid so far, in clock ticks.
long cpu_ticks(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string skip;
  for (int i = 0; i < 11; ++i) fields >> skip;  // state .. cmajflt
  long user = 0;
  long system = 0;
  fields >> user >> system;
  return user + system;
}

// The connections now open, from STATS on a connection of its own.
std::string open_connections(uint16_t port) {
  RawClient probe(port);
  for (const std::string& line : probe.block("STATS")) {
    if (line.rfind("connections ", 0) == 0) return line.substr(12);
  }
  return "<none>";
}

TEST_CASE("a paused client that hangs up is closed, and its socket costs nothing afterwards") {
  ServerProcess server;
  {
    RawClient c(server.port(), std::chrono::seconds(30));
    std::string pipeline;
    for (int i = 0; i < 200'000; ++i) pipeline += "STATS\r\n";
    // Send until the server stops reading (the pipe fills), never reading.
    std::thread sender([&] { c.try_send(pipeline); });
    REQUIRE(logs_within(server, "paused reading", std::chrono::seconds(20)));
    ::shutdown(c.fd(), SHUT_RDWR);  // unread replies: the hang-up is a reset
    sender.join();
    c.close();
  }
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (open_connections(server.port()) != "1" && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(open_connections(server.port()) == "1");  // the probe's own
  // A socket reported again and again would spin the io thread: a second of
  // it is about 100 ticks; an idle server spends next to none.
  const long before = cpu_ticks(server.pid());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const long spent = cpu_ticks(server.pid()) - before;
  INFO("ticks in one idle second: " << spent);
  CHECK(spent < 30);
}

TEST_CASE("the server listens on 127.0.0.1 unless told otherwise, and warns when reachable") {
  auto line = net::parse_command_line({"serve"});
  REQUIRE(line.is_ok());
  CHECK(line.value().options.listen_host == "127.0.0.1");

  TempDir dir;
  CliRun run = run_program("/usr/bin/timeout",
                           {"-s", "INT", "3", std::string(TARDE_BIN_DIR) + "/tarde", "serve",
                            "--listen", "0.0.0.0:0", "--data", dir.sub("data")});
  const std::string log = run.out + run.err;
  INFO("log: " << log);
  CHECK(log.find("tarde listening on 0.0.0.0:") != std::string::npos);
  CHECK(log.find("0.0.0.0 is reachable from other machines and no --auth-token-file") !=
        std::string::npos);
}

}  // namespace
}  // namespace tarde::testing
