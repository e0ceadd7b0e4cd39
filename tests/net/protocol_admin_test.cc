// Protocol tests of queue administration (PROTOCOL.md "PAUSE and RESUME",
// "TOUCH", several queues in "RESERVE", "DEADLETTERS, REDRIVE, REDRIVE_ALL
// and RESOLVE_ALL", GET payload=1), every reply and every error, over real
// sockets against the real `tarde serve`.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tests/support/raw_client.h"
#include "tests/support/server_process.h"

namespace tarde::testing {
namespace {

TEST_SUITE_BEGIN("protocol");

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool is_error(const std::string& line, std::string_view code) {
  return starts_with(line, "ERR " + std::string(code) + " ");
}

std::string stat(RawClient& client, const std::string& name) {
  for (const std::string& line : client.block("STATS")) {
    if (starts_with(line, name + " ")) return line.substr(name.size() + 1);
  }
  return "<none>";
}

std::string field(RawClient& client, const std::string& tx_id, const std::string& name) {
  const auto fields = parse_fields(client.command("GET " + tx_id));
  const auto it = fields.find(name);
  return it == fields.end() ? "<none>" : it->second;
}

// Buries `tx_id` in `queue` (max_deliveries=1 there): one hand-out released
// with `reason`.
void bury(RawClient& client, const std::string& queue, const std::string& tx_id,
          const std::string& reason) {
  REQUIRE(client.enqueue(queue + " " + tx_id, "body-" + tx_id) ==
          "CREATED " + tx_id + " SENDING 0 1 0");
  const Request got = client.request("RESERVE " + queue);
  REQUIRE(got.tx_id == tx_id);
  REQUIRE(client.command("RELEASE " + tx_id + " 1 reason=" + reason) ==
          "BURIED " + tx_id + " SENDING 0 1 0");
}

TEST_CASE("PAUSE stops hand-outs, idempotently and durably; RESUME wakes a waiting RESERVE") {
  ServerProcess server;
  RawClient c(server.port());

  CHECK(c.enqueue("q tx-1") == "CREATED tx-1 SENDING 0 1 0");
  CHECK(c.command("PAUSE q") == "PAUSED q");
  CHECK(c.command("PAUSE q") == "PAUSED q");  // idempotent
  CHECK(c.command("RESERVE q") == "EMPTY");
  CHECK(stat(c, "paused.q") == "1");
  CHECK(stat(c, "ready") == "1");
  CHECK(c.command("CONFIG q").find(" paused=1") != std::string::npos);
  // CONFIG keeps the flag when it changes other settings, and refuses to set it.
  CHECK(c.command("CONFIG q lease=40s").find(" paused=1") != std::string::npos);
  CHECK(is_error(c.command("CONFIG q paused=0"), "BAD_ARGUMENT"));
  // ENQUEUE still works, and a retry still fires into the ready list.
  CHECK(starts_with(c.enqueue("q tx-2 delay=50ms"), "CREATED tx-2 SCHEDULED 0 1 "));
  CHECK(c.command("RESERVE q wait=300ms") == "EMPTY");
  CHECK(field(c, "tx-2", "state") == "SENDING");
  CHECK(stat(c, "ready") == "2");

  // The pause survives a restart.
  server.restart();
  RawClient after(server.port());
  CHECK(after.command("RESERVE q") == "EMPTY");
  CHECK(stat(after, "paused.q") == "1");

  // A RESERVE parked on a paused queue stays parked and RESUME serves it.
  RawClient parked(server.port());
  parked.send("RESERVE q wait=10s\r\n");
  CHECK(after.command("PING") == "PONG");
  CHECK(after.command("RESUME q") == "RESUMED q");
  const Request got = parked.read_request();
  REQUIRE(got.is_request);
  CHECK(got.tx_id == "tx-1");
  CHECK(after.command("RESUME q") == "RESUMED q");  // idempotent
  CHECK(stat(after, "paused.q") == "0");
  CHECK(after.command("CONFIG q").find(" paused=0") != std::string::npos);
  CHECK(after.request("RESERVE q").tx_id == "tx-2");
}

TEST_CASE("PAUSE and RESUME errors") {
  ServerProcess server;
  RawClient c(server.port());
  CHECK(is_error(c.command("PAUSE"), "BAD_COMMAND"));
  CHECK(is_error(c.command("RESUME"), "BAD_COMMAND"));
  CHECK(is_error(c.command("PAUSE q extra"), "BAD_COMMAND"));
  CHECK(is_error(c.command("PAUSE q/1"), "BAD_ARGUMENT"));
  CHECK(is_error(c.command("RESUME q wait=1s"), "BAD_ARGUMENT"));
  CHECK(c.command("RESUME fresh") == "RESUMED fresh");  // never paused: still RESUMED
}

TEST_CASE("TOUCH extends the lease held by this connection; anyone else gets STALE") {
  ServerProcess server;
  RawClient c(server.port());
  RawClient other(server.port());
  REQUIRE(starts_with(c.command("CONFIG q lease=1s"), "CONFIG q "));
  CHECK(c.enqueue("q tx-1") == "CREATED tx-1 SENDING 0 1 0");
  CHECK(c.command("TOUCH tx-1 1") == "STALE tx-1 SENDING 0 1 0");  // not leased yet
  REQUIRE(c.request("RESERVE q").tx_id == "tx-1");
  CHECK(c.command("TOUCH tx-1 1") == "OK tx-1 SENDING 0 1 0");
  CHECK(other.command("TOUCH tx-1 1") == "STALE tx-1 SENDING 0 1 0");  // another connection
  CHECK(c.command("TOUCH tx-1 2") == "STALE tx-1 SENDING 0 1 0");      // another attempt
  CHECK(c.command("TOUCH nope 1") == "NOT_FOUND nope");
  CHECK(stat(c, "stale.TOUCH") == "3");

  // Touched every 600 ms, a 1 s lease outlives 2 s.
  for (int i = 0; i < 4; ++i) {
    CHECK(other.command("RESERVE q wait=600ms") == "EMPTY");
    CHECK(c.command("TOUCH tx-1 1") == "OK tx-1 SENDING 0 1 0");
  }
  CHECK(field(c, "tx-1", "failed_deliveries") == "0");
  // Untouched, it runs out and the request goes to the next dispatcher.
  const Request again = other.request("RESERVE q wait=5s");
  CHECK(again.tx_id == "tx-1");
  CHECK(again.handouts == 2);
  CHECK(c.command("TOUCH tx-1 1") == "STALE tx-1 SENDING 0 1 0");
  CHECK(other.command("SENT tx-1 1") == "OK tx-1 IN_FLIGHT 1 0 0");
  CHECK(other.command("TOUCH tx-1 1") == "STALE tx-1 IN_FLIGHT 1 0 0");  // the lease ended

  CHECK(is_error(c.command("TOUCH tx-1"), "BAD_COMMAND"));
  CHECK(is_error(c.command("TOUCH tx-1 1 2"), "BAD_COMMAND"));
  CHECK(is_error(c.command("TOUCH tx-1 0"), "BAD_ARGUMENT"));
  CHECK(is_error(c.command("TOUCH tx-1 x"), "BAD_ARGUMENT"));
  CHECK(is_error(c.command("TOUCH tx-1 1 delay=1s"), "BAD_ARGUMENT"));
}

TEST_CASE("RESERVE on several queues rotates its starting queue and skips paused ones") {
  ServerProcess server;
  RawClient c(server.port());
  for (const std::string tx : {"a1", "a2", "a3", "a4"}) c.enqueue("qa " + tx);
  for (const std::string tx : {"b1", "b2"}) c.enqueue("qb " + tx);
  // A busy qa cannot starve qb: the calls alternate while both have work.
  std::vector<std::string> order;
  for (int i = 0; i < 6; ++i) order.push_back(c.request("RESERVE qa,qb").tx_id);
  CHECK(order == std::vector<std::string>{"a1", "b1", "a2", "b2", "a3", "a4"});
  CHECK(c.command("RESERVE qa,qb") == "EMPTY");

  // Each connection has its own turn.
  c.enqueue("qa a5");
  c.enqueue("qb b3");
  RawClient fresh(server.port());
  CHECK(fresh.request("RESERVE qb,qa").tx_id == "b3");

  // A paused queue in the list is skipped.
  c.enqueue("qb b4");
  CHECK(c.command("PAUSE qa") == "PAUSED qa");
  CHECK(c.request("RESERVE qa,qb").tx_id == "b4");
  CHECK(c.command("RESERVE qa,qb") == "EMPTY");
  CHECK(c.command("RESUME qa") == "RESUMED qa");
  CHECK(c.request("RESERVE qa,qb").tx_id == "a5");
}

TEST_CASE("a waiting RESERVE on several queues takes from the first that gets work") {
  ServerProcess server;
  RawClient producer(server.port());
  RawClient waiter(server.port());
  waiter.send("RESERVE qa,qb,qc wait=10s\r\n");
  CHECK(producer.command("PING") == "PONG");
  CHECK(producer.enqueue("qc c1") == "CREATED c1 SENDING 0 1 0");
  const Request got = waiter.read_request();
  CHECK(got.line == "REQUEST c1 1 c1#1 1 7");
  // Answered once: a later request on another of its queues stays ready.
  CHECK(producer.enqueue("qa a1") == "CREATED a1 SENDING 0 1 0");
  CHECK(waiter.command("PING") == "PONG");
  CHECK(producer.request("RESERVE qa").tx_id == "a1");
  CHECK(waiter.command("RESERVE qa,qb wait=100ms") == "EMPTY");
}

TEST_CASE("RESERVE queue list errors") {
  ServerProcess server;
  RawClient c(server.port());
  CHECK(is_error(c.command("RESERVE qa,,qb"), "BAD_ARGUMENT"));
  CHECK(is_error(c.command("RESERVE qa,"), "BAD_ARGUMENT"));
  CHECK(is_error(c.command("RESERVE ,qa"), "BAD_ARGUMENT"));
  CHECK(is_error(c.command("RESERVE qa,q/b"), "BAD_ARGUMENT"));
  const std::string twice = c.command("RESERVE qa,qb,qa");
  CHECK(is_error(twice, "BAD_ARGUMENT"));
  CHECK(twice.find("named twice") != std::string::npos);
  std::string sixteen = "q0";
  for (int i = 1; i < 16; ++i) sixteen += ",q" + std::to_string(i);
  CHECK(c.command("RESERVE " + sixteen) == "EMPTY");
  const std::string seventeen = c.command("RESERVE " + sixteen + ",q16");
  CHECK(is_error(seventeen, "BAD_ARGUMENT"));
  CHECK(seventeen.find("at most 16") != std::string::npos);
  CHECK(is_error(c.command("RESERVE qa qb"), "BAD_COMMAND"));
  CHECK(c.command("PING") == "PONG");
}

TEST_CASE("REDRIVE_ALL redrives the matching dead letters up to its limit") {
  ServerProcess server;
  RawClient c(server.port());
  REQUIRE(starts_with(c.command("CONFIG q max_deliveries=1"), "CONFIG q "));
  bury(c, "q", "A-1", "timeout");
  bury(c, "q", "A-2", "refused");
  bury(c, "q", "A-3", "timeout");
  bury(c, "q", "B-1", "timeout");
  REQUIRE(starts_with(c.command("CONFIG other max_deliveries=1"), "CONFIG other "));
  bury(c, "other", "A-9", "timeout");

  CHECK(c.command("REDRIVE_ALL q prefix=C") == "REDRIVEN 0");
  CHECK(c.command("REDRIVE_ALL q prefix=A last_error=timeout limit=1") == "REDRIVEN 1");
  CHECK(c.request("RESERVE q").tx_id == "A-1");
  CHECK(c.command("REDRIVE_ALL q prefix=A last_error=timeout") == "REDRIVEN 1");
  CHECK(c.command("REDRIVE_ALL q last_error=refused") == "REDRIVEN 1");
  CHECK(c.command("REDRIVE_ALL q") == "REDRIVEN 1");                              // B-1
  CHECK(c.command("REDRIVE_ALL q") == "REDRIVEN 0");
  CHECK(c.block("DEADLETTERS q") == std::vector<std::string>{"LETTERS 0"});
  CHECK(c.block("DEADLETTERS other").size() == 2);  // other queues are left alone
  const auto history = c.block("HISTORY A-3");
  CHECK(parse_fields(history.back()).at("cause") == "REDRIVE_ALL");
  CHECK(field(c, "A-3", "failed_deliveries") == "0");
  // The single form is unchanged: a tx_id named like a keyword is a tx_id.
  CHECK(c.command("REDRIVE q all") == "NOT_FOUND all");

  // The changes are durable once answered.
  CHECK(c.command("REDRIVE_ALL other") == "REDRIVEN 1");
  server.restart();  // SIGKILL first
  RawClient after(server.port());
  CHECK(after.block("DEADLETTERS other") == std::vector<std::string>{"LETTERS 0"});
  CHECK(after.request("RESERVE other").tx_id == "A-9");
}

TEST_CASE("RESOLVE_ALL ends the matching dead letters' transactions") {
  ServerProcess server;
  RawClient c(server.port());
  REQUIRE(starts_with(c.command("CONFIG q max_deliveries=1"), "CONFIG q "));
  bury(c, "q", "A-1", "timeout");
  bury(c, "q", "A-2", "timeout");
  bury(c, "q", "B-1", "refused");
  CHECK(c.enqueue("q A-3") == "CREATED A-3 SENDING 0 1 0");  // live: never resolved in bulk

  CHECK(c.command("RESOLVE_ALL q FAILED prefix=A reason=GAVE_UP limit=1") == "RESOLVED 1");
  CHECK(field(c, "A-1", "state") == "FAILED");
  CHECK(field(c, "A-1", "reason") == "GAVE_UP");
  CHECK(c.command("RESOLVE_ALL q SUCCEEDED prefix=A") == "RESOLVED 1");
  CHECK(field(c, "A-2", "state") == "SUCCEEDED");
  CHECK(field(c, "A-3", "state") == "SENDING");
  CHECK(c.command("RESOLVE_ALL q FAILED last_error=timeout") == "RESOLVED 0");
  CHECK(c.command("RESOLVE_ALL q FAILED last_error=refused") == "RESOLVED 1");
  CHECK(field(c, "B-1", "reason") == "RESOLVED");
  const auto history = c.block("HISTORY B-1");
  CHECK(parse_fields(history.back()).at("cause") == "RESOLVE_ALL");
  CHECK(c.block("DEADLETTERS q") == std::vector<std::string>{"LETTERS 0"});
  CHECK(c.request("RESERVE q").tx_id == "A-3");
}

TEST_CASE("REDRIVE_ALL and RESOLVE_ALL errors") {
  ServerProcess server;
  RawClient c(server.port());
  CHECK(is_error(c.command("REDRIVE_ALL"), "BAD_COMMAND"));
  CHECK(is_error(c.command("REDRIVE_ALL q extra"), "BAD_COMMAND"));
  CHECK(is_error(c.command("REDRIVE_ALL q/1"), "BAD_ARGUMENT"));
  CHECK(is_error(c.command("REDRIVE_ALL q limit=0"), "BAD_ARGUMENT"));
  CHECK(is_error(c.command("REDRIVE_ALL q limit=10001"), "BAD_ARGUMENT"));
  CHECK(c.command("REDRIVE_ALL q limit=10000") == "REDRIVEN 0");
  CHECK(is_error(c.command("REDRIVE_ALL q limit=x"), "BAD_ARGUMENT"));
  CHECK(is_error(c.command("REDRIVE_ALL q reason=x"), "BAD_ARGUMENT"));  // not a filter
  CHECK(is_error(c.command("REDRIVE_ALL q prefix="), "BAD_ARGUMENT"));
  CHECK(is_error(c.command("REDRIVE_ALL q prefix=a prefix=b"), "BAD_ARGUMENT"));
  CHECK(is_error(c.command("REDRIVE_ALL q last_error=" + std::string(201, 'x')), "BAD_ARGUMENT"));
  CHECK(is_error(c.command("REDRIVE_ALL q prefix=" + std::string(201, 'x')), "BAD_ARGUMENT"));
  CHECK(is_error(c.command("RESOLVE_ALL q"), "BAD_COMMAND"));
  CHECK(is_error(c.command("RESOLVE_ALL q MAYBE"), "BAD_ARGUMENT"));
  CHECK(is_error(c.command("RESOLVE_ALL q FAILED SUCCEEDED"), "BAD_COMMAND"));
  CHECK(is_error(c.command("RESOLVE_ALL q FAILED limit=0"), "BAD_ARGUMENT"));
  CHECK(is_error(c.command("RESOLVE_ALL q FAILED wait=1s"), "BAD_ARGUMENT"));
  CHECK(c.command("RESOLVE_ALL q FAILED") == "RESOLVED 0");
}

TEST_CASE("GET and DEADLETTERS with payload=1 carry the payloads, framed like REQUEST") {
  ServerProcess server;
  RawClient c(server.port());
  const std::string binary("a\r\nb\0c", 6);
  c.send("ENQUEUE q tx-1 6\r\n" + binary + "\r\n");
  CHECK(c.read_line() == "CREATED tx-1 SENDING 0 1 0");

  const std::string plain = c.command("GET tx-1");
  CHECK(c.command("GET tx-1 payload=0") == plain);
  c.send("GET tx-1 payload=1\r\n");
  CHECK(c.read_line() == plain);
  CHECK(c.read_exact(6) == binary);
  CHECK(c.read_line().empty());
  CHECK(c.command("GET nope payload=1") == "NOT_FOUND nope");
  CHECK(is_error(c.command("GET tx-1 payload=2"), "BAD_ARGUMENT"));
  CHECK(is_error(c.command("GET tx-1 payload="), "BAD_ARGUMENT"));
  CHECK(is_error(c.command("GET tx-1 body=1"), "BAD_ARGUMENT"));

  REQUIRE(starts_with(c.command("CONFIG q max_deliveries=1"), "CONFIG q "));
  REQUIRE(c.request("RESERVE q").tx_id == "tx-1");
  REQUIRE(c.command("RELEASE tx-1 1") == "BURIED tx-1 SENDING 0 1 0");
  bury(c, "q", "tx-2", "timeout");
  c.send("DEADLETTERS q payload=1\r\n");
  CHECK(c.read_line() == "LETTERS 2");
  const std::string first = c.read_line();
  CHECK(parse_fields(first).at("payload_bytes") == "6");
  CHECK(c.read_exact(6) == binary);
  CHECK(c.read_line().empty());
  const std::string second = c.read_line();
  CHECK(parse_fields(second).at("tx") == "tx-2");
  CHECK(parse_fields(second).at("failed_deliveries") == "1");
  CHECK(c.read_exact(11) == "body-tx-2\r\n");
  c.send("DEADLETTERS q payload=1 limit=1\r\n");
  CHECK(c.read_line() == "LETTERS 1");
  CHECK(c.read_line() == first);
  CHECK(c.read_exact(8) == binary + "\r\n");
  CHECK(is_error(c.command("DEADLETTERS q payload=yes"), "BAD_ARGUMENT"));
  CHECK(c.command("PING") == "PONG");
}

TEST_CASE("DEADLETTERS payload=1 stops before 8 MiB of payloads, always giving one letter") {
  ServerProcess server({"--max-payload", "4194304"});
  RawClient c(server.port(), std::chrono::seconds(30));
  REQUIRE(starts_with(c.command("CONFIG q max_deliveries=1"), "CONFIG q "));
  const std::string big(3 << 20, 'x');
  for (const std::string tx : {"t1", "t2", "t3", "t4"}) {
    REQUIRE(c.enqueue("q " + tx, big) == "CREATED " + tx + " SENDING 0 1 0");
    REQUIRE(c.request("RESERVE q").tx_id == tx);
    REQUIRE(c.command("RELEASE " + tx + " 1") == "BURIED " + tx + " SENDING 0 1 0");
  }
  c.send("DEADLETTERS q payload=1\r\n");
  CHECK(c.read_line() == "LETTERS 2");  // 6 MiB; a third would pass 8 MiB
  for (int i = 0; i < 2; ++i) {
    c.read_line();
    CHECK(c.read_exact(big.size() + 2) == big + "\r\n");
  }
  CHECK(c.command("PING") == "PONG");
  CHECK(c.block("DEADLETTERS q").size() == 5);  // without payloads: every letter
}

TEST_SUITE_END();

}  // namespace
}  // namespace tarde::testing
