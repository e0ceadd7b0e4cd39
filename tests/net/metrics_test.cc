// The metrics page and the logs an operator reads, against the real server.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "base/log_record.h"
#include "tests/support/http_get.h"
#include "tests/support/raw_client.h"
#include "tests/support/server_process.h"

using namespace tarde;
using tarde::testing::free_port;
using tarde::testing::http_get;

namespace {

// Checks the Prometheus text exposition format line by line and returns the
// metric names that have samples. Every sample must belong to a family
// declared by a TYPE line before it.
std::set<std::string> parse_exposition(const std::string& text) {
  static const std::regex sample(
      R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"(,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*")*\})? (-?[0-9.eE+-]+|\+Inf|NaN)$)");
  static const std::regex type_line(
      R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$)");
  std::set<std::string> declared;
  std::set<std::string> sampled;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    CAPTURE(line);
    std::smatch m;
    if (line.rfind("# HELP ", 0) == 0) continue;
    if (line.rfind("# TYPE", 0) == 0) {
      REQUIRE(std::regex_match(line, m, type_line));
      declared.insert(m[1]);
      continue;
    }
    REQUIRE(std::regex_match(line, m, sample));
    std::string family = m[1];
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string s(suffix);
      if (!declared.count(family) && family.size() > s.size() &&
          family.compare(family.size() - s.size(), s.size(), s) == 0) {
        family = family.substr(0, family.size() - s.size());
      }
    }
    CHECK(declared.count(family) == 1);
    sampled.insert(family);
  }
  return sampled;
}

}  // namespace

TEST_CASE("GET /metrics parses as Prometheus text and has every metric an operator needs") {
  const uint16_t metrics_port = free_port();
  testing::ServerProcess server({"--metrics-listen", "127.0.0.1:" + std::to_string(metrics_port)});
  testing::RawClient c(server.port());
  REQUIRE(c.command("CONFIG q base=50ms jitter=0 max_deliveries=1").rfind("CONFIG", 0) == 0);
  REQUIRE(c.enqueue("q A").rfind("CREATED", 0) == 0);
  REQUIRE(c.enqueue("q B").rfind("CREATED", 0) == 0);
  REQUIRE(c.enqueue("q C").rfind("CREATED", 0) == 0);
  c.send("RESERVE q\r\n");
  c.read_line();
  c.read_line();
  REQUIRE(c.command("RESPOND A 1 CANCELLED").rfind("OK", 0) == 0);
  REQUIRE(c.command("SENT A 1").rfind("STALE", 0) == 0);
  c.send("RESERVE q wait=2s\r\n");  // B
  c.read_line();
  c.read_line();
  REQUIRE(c.command("RELEASE B 1").rfind("BURIED", 0) == 0);
  REQUIRE(c.command("RESPOND C 1 REJECTED").rfind("OK", 0) == 0);
  c.send("RESERVE q wait=2s\r\n");  // A's retry, after 50 ms
  CHECK(c.read_line().rfind("REQUEST A 2", 0) == 0);
  c.read_line();

  const std::string response = http_get(metrics_port, "/metrics");
  REQUIRE(response.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  const std::string body = response.substr(response.find("\r\n\r\n") + 4);
  const std::set<std::string> metrics = parse_exposition(body);
  for (const char* name : {"tarde_transactions",
                           "tarde_answers_total",
                           "tarde_retries_scheduled_total",
                           "tarde_stale_dropped_total",
                           "tarde_failures_total",
                           "tarde_dead_letters",
                           "tarde_dead_lettered_total",
                           "tarde_ready",
                           "tarde_leased",
                           "tarde_oldest_ready_age_seconds",
                           "tarde_breaker_open",
                           "tarde_timer_lateness_seconds",
                           "tarde_commit_latency_seconds",
                           "tarde_commands_per_commit",
                           "tarde_connections",
                           "tarde_uptime_seconds",
                           "tarde_build_info",
                           "process_cpu_seconds_total",
                           "process_resident_memory_bytes",
                           "process_virtual_memory_bytes",
                           "process_open_fds",
                           "process_max_fds",
                           "process_start_time_seconds"}) {
    CAPTURE(name);
    CHECK(metrics.count(name) == 1);
  }
  CHECK(body.find("tarde_answers_total{queue=\"q\",outcome=\"CANCELLED\"} 1") != std::string::npos);
  CHECK(body.find("tarde_failures_total{queue=\"q\",reason=\"REJECTED\"} 1") != std::string::npos);
  CHECK(body.find("tarde_stale_dropped_total{kind=\"SENT\"} 1") != std::string::npos);
  CHECK(body.find("tarde_dead_lettered_total{queue=\"q\"} 1") != std::string::npos);
  CHECK(body.find("tarde_retries_scheduled_total{queue=\"q\"} 1") != std::string::npos);
  CHECK(body.find("tarde_timer_lateness_seconds_count{queue=\"q\"} 1") != std::string::npos);
  // Base units: commit latencies in seconds, buckets from 0.1 ms to 1 s.
  CHECK(body.find("tarde_commit_latency_seconds_bucket{le=\"0.0001\"}") != std::string::npos);
  CHECK(body.find("tarde_commit_latency_seconds_bucket{le=\"1\"}") != std::string::npos);
  CHECK(body.find("tarde_build_info{version=\"0.1.0\",revision=\"") != std::string::npos);
  // Every counter ends in _total; no family is named in milliseconds.
  std::istringstream types(body);
  for (std::string line; std::getline(types, line);) {
    CAPTURE(line);
    if (line.rfind("# TYPE ", 0) != 0) continue;
    CHECK(line.find("_ms ") == std::string::npos);
    if (line.size() > 8 && line.compare(line.size() - 8, 8, " counter") == 0) {
      CHECK(line.find("_total counter") != std::string::npos);
    }
  }

  CHECK(http_get(metrics_port, "/healthz").find("\r\n\r\nok\n") != std::string::npos);
  CHECK(http_get(metrics_port, "/nope").rfind("HTTP/1.1 404", 0) == 0);

  c.send("STATS\r\n");
  const std::string head = c.read_line();
  std::string stats;
  for (int i = 0, n = std::stoi(head.substr(6)); i < n; ++i) stats += c.read_line() + "\n";
  CHECK(stats.find("breaker.q 0") != std::string::npos);
  CHECK(stats.find("stale.SENT 1") != std::string::npos);
}

TEST_CASE("reasons from clients reach /metrics escaped, and a flood of them stays bounded") {
  const uint16_t metrics_port = free_port();
  testing::ServerProcess server(
      {"--metrics-listen", "127.0.0.1:" + std::to_string(metrics_port), "--sync", "none"});
  testing::RawClient c(server.port());
  constexpr int kReasons = 300;
  for (int i = 0; i < kReasons; ++i) {
    const std::string tx = "T" + std::to_string(i);
    REQUIRE(c.enqueue("q " + tx + " sent=1").rfind("CREATED", 0) == 0);
    const std::string reason = i == 0 ? "a\"b\\c" : "R" + std::to_string(i);
    REQUIRE(c.command("RESPOND " + tx + " 1 REJECTED reason=" + reason).rfind("OK", 0) == 0);
  }
  const std::string response = http_get(metrics_port, "/metrics");
  const std::string body = response.substr(response.find("\r\n\r\n") + 4);
  const std::set<std::string> metrics = parse_exposition(body);  // still valid
  CHECK(metrics.count("tarde_failures_total") == 1);
  CHECK(body.find("tarde_failures_total{queue=\"q\",reason=\"a\\\"b\\\\c\"} 1\n") !=
        std::string::npos);
  size_t lines = 0;
  for (size_t at = body.find("tarde_failures_total{"); at != std::string::npos;
       at = body.find("tarde_failures_total{", at + 1)) {
    lines += 1;
  }
  CHECK(lines == 100);  // 99 reasons as given, the rest under "other"
  CHECK(body.find("tarde_failures_total{queue=\"q\",reason=\"other\"} 201\n") != std::string::npos);
}

TEST_CASE("10,000 distinct long reasons leave /metrics under its stated bound") {
  // README, "Metrics": with one queue the page stays under 64 KiB however
  // many distinct reasons clients send.
  constexpr size_t kPageBytesMax = 64 * 1024;
  const uint16_t metrics_port = free_port();
  testing::ServerProcess server(
      {"--metrics-listen", "127.0.0.1:" + std::to_string(metrics_port), "--sync", "none"});
  testing::RawClient c(server.port());
  constexpr int kReasons = 10'000;
  for (int i = 0; i < kReasons; ++i) {
    const std::string tx = "T" + std::to_string(i);
    std::string reason = "R" + std::to_string(i) + "\"\\";
    reason.resize(200, 'x');  // the longest reason the protocol takes
    c.send("ENQUEUE q " + tx + " sent=1 1\r\nx\r\nRESPOND " + tx + " 1 REJECTED reason=" + reason +
           "\r\n");
    if (i % 100 != 99) continue;
    for (int reply = 0; reply < 200; ++reply) {  // pipelined by the hundred
      const std::string line = c.read_line();
      REQUIRE((line.rfind("CREATED", 0) == 0 || line.rfind("OK", 0) == 0));
    }
  }
  const std::string response = http_get(metrics_port, "/metrics");
  const std::string body = response.substr(response.find("\r\n\r\n") + 4);
  parse_exposition(body);
  CHECK(body.find("tarde_failures_total{queue=\"q\",reason=\"other\"} 9901\n") !=
        std::string::npos);
  CAPTURE(body.size());
  CHECK(body.size() < kPageBytesMax);
}

TEST_CASE("--log-format json writes one JSON object per line, a key per field") {
  testing::ServerProcess server({"--log-format", "json", "--log-level", "debug"});
  testing::RawClient c(server.port());
  // Tokens are printable ASCII without spaces (PROTOCOL.md, "Tokens"), so
  // quotes, backslashes, '=' and braces are what a client can send.
  const std::string tx = "\"q\\uoted\"={x}-id";
  const std::string reason = "a\"b\\c=d\"}{,\\n" + std::string(180, 'L');
  REQUIRE(c.enqueue("q " + tx).rfind("CREATED", 0) == 0);
  REQUIRE(c.command("RESPOND " + tx + " 1 REJECTED reason=" + reason).rfind("OK", 0) == 0);
  REQUIRE(c.command("PING") == "PONG");
  std::istringstream lines(server.log());
  std::string line;
  int transitions = 0;
  int alerts = 0;
  bool listening = false;
  while (std::getline(lines, line)) {
    CAPTURE(line);
    const auto parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    REQUIRE(parsed.is_object());
    CHECK(std::regex_match(parsed["time"].get<std::string>(),
                           std::regex(R"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z)")));
    REQUIRE(parsed.contains("event"));  // every line of the server is a record
    CHECK_FALSE((parsed.contains("msg") && parsed["msg"].get<std::string>().empty()));
    const std::string event = parsed["event"];
    if (event == "listening") {
      listening = true;
      CHECK(parsed["port"] == server.port());
      CHECK(parsed["host"] == "127.0.0.1");
    }
    if (event == "transition" && parsed["tx"] == tx) {
      transitions += 1;
      CHECK(parsed["level"] == "debug");
      CHECK(parsed["queue"] == "q");
      CHECK(parsed["attempt"].is_number());
      CHECK(parsed.contains("from"));
      CHECK(parsed.contains("state"));
      CHECK(parsed.contains("cause"));
    }
    if (event == "alert.failed") {
      alerts += 1;
      CHECK(parsed["level"] == "warning");
      CHECK(parsed["tx"] == tx);
      CHECK(parsed["reason"] == reason);
      CHECK(parsed["attempt"] == 1);
      CHECK(parsed["state"] == "FAILED");
    }
  }
  CHECK(listening);
  CHECK(transitions == 2);
  CHECK(alerts == 1);
}

TEST_CASE("the text log keeps a hostile token inside its field, one record per line") {
  testing::ServerProcess server({"--log-level", "debug"});
  testing::RawClient c(server.port());
  const std::string tx = "T\"x=1\\";
  REQUIRE(c.enqueue("q " + tx).rfind("CREATED", 0) == 0);
  REQUIRE(c.command("RESPOND " + tx + " 1 REJECTED reason=r\"\\=x").rfind("OK", 0) == 0);
  REQUIRE(c.command("PING") == "PONG");
  std::istringstream lines(server.log());
  std::string line;
  int alerts = 0;
  static const std::regex text_line(R"(^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+ [a-z]+ (.*)$)");
  while (std::getline(lines, line)) {
    CAPTURE(line);
    std::smatch m;
    REQUIRE(std::regex_match(line, m, text_line));
    const auto record = parse_log_line(m[1].str());
    REQUIRE(record.has_value());  // the record reads back whole
    if ((*record)["event"] == "alert.failed") {
      alerts += 1;
      CHECK(line.find(" tx=\"T\\\"x=1\\\\\" ") != std::string::npos);
      CHECK((*record)["tx"] == tx);
      CHECK((*record)["reason"] == "r\"\\=x");
    }
  }
  CHECK(alerts == 1);
}

TEST_CASE(
    "--profile-writes on: STATS and /metrics show where the commits' writes spent their time") {
  const uint16_t metrics_port = free_port();
  testing::ServerProcess server(
      {"--metrics-listen", "127.0.0.1:" + std::to_string(metrics_port), "--profile-writes", "on"});
  testing::RawClient c(server.port());
  REQUIRE(c.enqueue("q A").rfind("CREATED", 0) == 0);
  REQUIRE(c.enqueue("q B").rfind("CREATED", 0) == 0);
  const std::string body = http_get(metrics_port, "/metrics");
  const std::set<std::string> metrics = parse_exposition(testing::body_of(body));
  for (const char* name :
       {"tarde_write_profile_writes_total", "tarde_write_profile_keys_total",
        "tarde_write_profile_bytes_total", "tarde_write_profile_seconds_total"}) {
    CAPTURE(name);
    CHECK(metrics.count(name) == 1);
  }
  CHECK(body.find("tarde_write_profile_seconds_total{part=\"fsync\"} ") != std::string::npos);
  std::map<std::string, uint64_t> stats;
  for (const std::string& line : c.block("STATS")) {
    const size_t space = line.find(' ');
    if (line.rfind("write_profile.", 0) == 0) {
      stats[line.substr(0, space)] = std::stoull(line.substr(space + 1));
    }
  }
  CHECK(stats["write_profile.writes"] >= 2);  // the two ENQUEUEs' commits, at least
  CHECK(stats["write_profile.keys"] >= 2);
  CHECK(stats["write_profile.fsync_us"] > 0);
  CHECK(stats["write_profile.wall_us"] >= stats["write_profile.wal_us"]);
  for (const char* part : {"cpu", "wal_write", "memtable", "wait", "pre_post"}) {
    CAPTURE(part);
    CHECK(stats.count("write_profile." + std::string(part) + "_us") == 1);
  }
}

TEST_CASE("without --profile-writes there are no write_profile figures") {
  const uint16_t metrics_port = free_port();
  testing::ServerProcess server({"--metrics-listen", "127.0.0.1:" + std::to_string(metrics_port)});
  CHECK(http_get(metrics_port, "/metrics").find("write_profile") == std::string::npos);
}
