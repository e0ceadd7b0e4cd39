// Protocol tests of whole flows: pipelining, many connections, waiting
// RESERVEs, leases, a full retry cycle and a restart, over real sockets
// against the real `tarde serve` binary. Times are wall-clock with generous
// upper bounds and no earliness allowed.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/raw_client.h"
#include "tests/support/server_process.h"

namespace tarde::testing {
namespace {

// Real processes and wall-clock waits: select with -ts=protocol, skip with -tse=protocol.
TEST_SUITE_BEGIN("protocol");

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// How late a timer may hand out its request and still pass: generous, for
// loaded CI machines. Earliness is never allowed.
constexpr int64_t kLatenessMs = 2000;

std::map<std::string, std::string> stats_of(RawClient& c) {
  std::map<std::string, std::string> stats;
  const auto lines = c.block("STATS");
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> words = split_words(lines[i]);
    if (words.size() == 2) stats[words[0]] = words[1];
  }
  return stats;
}

TEST_CASE("1000 pipelined commands in one write are answered in order") {
  ServerProcess server;
  RawClient c(server.port());

  std::string bytes;
  std::vector<std::string> expected;  // a prefix of each reply, in order
  for (int i = 0; i < 1000; ++i) {
    const std::string tx = "p-" + std::to_string(i / 3);
    switch (i % 3) {
      case 0: {
        const std::string payload = "value " + std::to_string(i);
        bytes +=
            "ENQUEUE q " + tx + " " + std::to_string(payload.size()) + "\r\n" + payload + "\r\n";
        expected.push_back("CREATED " + tx + " SENDING 0 1 0");
        break;
      }
      case 1:
        bytes += "GET " + tx + "\r\n";
        expected.push_back("TX id=" + tx + " queue=q state=SENDING ");
        break;
      default:
        bytes += "PING\r\n";
        expected.push_back("PONG");
        break;
    }
  }
  c.send(bytes);
  int in_order = 0;
  for (const std::string& prefix : expected) {
    const std::string reply = c.read_line();
    if (starts_with(reply, prefix)) {
      ++in_order;
    } else {
      INFO("reply " << in_order << ": " << reply << " expected " << prefix);
      CHECK(false);
      break;
    }
  }
  CHECK(in_order == 1000);
  CHECK(c.command("PING") == "PONG");
  CHECK(c.buffered().empty());
  CHECK(stats_of(c)["transactions"] == "334");
}

// More replies than a session holds while they wait for their commits
// (Session::kPendingRepliesMax): it stops taking commands at the bound and
// takes up the rest of the same write as the commits let replies go, with
// no further input from the client to wake it.
TEST_CASE("3000 pipelined ENQUEUEs in one write, past the waiting-reply bound, are all answered") {
  ServerProcess server;
  RawClient c(server.port());
  constexpr int kCommands = 3000;
  std::string bytes;
  for (int i = 0; i < kCommands; ++i) {
    bytes += "ENQUEUE q b-" + std::to_string(i) + " 1\r\nx\r\n";
  }
  std::thread sender([&] { c.send(bytes); });
  int in_order = 0;
  for (int i = 0; i < kCommands; ++i) {
    const std::string reply = c.read_line();
    if (!starts_with(reply, "CREATED b-" + std::to_string(i) + " SENDING")) {
      INFO("reply " << i << ": " << reply);
      CHECK(false);
      break;
    }
    ++in_order;
  }
  sender.join();
  CHECK(in_order == kCommands);
  CHECK(c.command("PING") == "PONG");
}

// Replies are sent as soon as their commit is durable; a client that reset
// its connection meanwhile makes that send fail, which closes the session
// and nothing else.
TEST_CASE("clients that reset their connection while replies wait for commits cost nothing") {
  ServerProcess server;
  for (int round = 0; round < 40; ++round) {
    RawClient c(server.port());
    std::string bytes;
    for (int i = 0; i < 50; ++i) {
      bytes += "ENQUEUE q r-" + std::to_string(round) + "-" + std::to_string(i) + " 1\r\nx\r\n";
    }
    c.send(bytes);
    CHECK(starts_with(c.read_line(), "CREATED r-" + std::to_string(round) + "-0 SENDING"));
    c.send(bytes);  // answered DUPLICATE, after the commits still in flight
    const linger reset{1, 0};
    REQUIRE(setsockopt(c.fd(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset) == 0);
    c.close();
  }
  RawClient after(server.port());
  CHECK(after.command("PING") == "PONG");
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (stats_of(after)["connections"] != "1" && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const auto stats = stats_of(after);
  CHECK(stats.at("connections") == "1");
  CHECK(stats.at("transactions") == "2000");
}

TEST_CASE("2000 concurrent connections each get PING and ENQUEUE answered") {
  constexpr int kConnections = 2000;
  // Both this process and the server (which inherits the limit) need a
  // descriptor per connection and some to spare.
  rlimit limit{};
  REQUIRE(getrlimit(RLIMIT_NOFILE, &limit) == 0);
  const rlim_t wanted = 2 * kConnections + 512;
  if (limit.rlim_cur < wanted) {
    limit.rlim_cur = std::min<rlim_t>(wanted, limit.rlim_max);
    REQUIRE(setrlimit(RLIMIT_NOFILE, &limit) == 0);
  }
  REQUIRE(limit.rlim_cur >= wanted);

  ServerProcess server;
  std::vector<RawClient> clients;
  clients.reserve(kConnections);
  for (int i = 0; i < kConnections; ++i) clients.emplace_back(server.port());
  // Every connection sends before any reads: all are open and busy at once.
  for (int i = 0; i < kConnections; ++i) {
    clients[static_cast<size_t>(i)].send("PING\r\nENQUEUE q c-" + std::to_string(i) +
                                         " 1\r\nx\r\n");
  }
  int answered = 0;
  for (int i = 0; i < kConnections; ++i) {
    RawClient& c = clients[static_cast<size_t>(i)];
    const std::string pong = c.read_line();
    const std::string created = c.read_line();
    if (pong == "PONG" && created == "CREATED c-" + std::to_string(i) + " SENDING 0 1 0") {
      ++answered;
    } else {
      INFO("connection " << i << ": " << pong << " / " << created);
      CHECK(false);
    }
  }
  CHECK(answered == kConnections);
  RawClient observer(server.port());
  auto stats = stats_of(observer);
  CHECK(stats["connections"] == std::to_string(kConnections + 1));
  CHECK(stats["transactions"] == std::to_string(kConnections));
  CHECK(stats["ready"] == std::to_string(kConnections));
}

TEST_CASE("a waiting RESERVE is woken by an ENQUEUE on another connection") {
  ServerProcess server;
  RawClient waiter(server.port());
  RawClient producer(server.port());

  const int64_t asked_at = wall_ms();
  waiter.send("RESERVE q wait=5s\r\n");
  // Give the RESERVE time to park (there is no reply to wait on while it waits).
  CHECK_FALSE(waiter.is_closed_by_peer(std::chrono::milliseconds(100)));
  CHECK(producer.enqueue("q tx-1", "wake up") == "CREATED tx-1 SENDING 0 1 0");
  const int64_t enqueued_at = wall_ms();
  const Request got = waiter.read_request();
  CHECK(got.line == "REQUEST tx-1 1 tx-1#1 1 7");
  CHECK(got.payload == "wake up");
  CHECK(got.received_at_ms - enqueued_at < 1000);
  CHECK(got.received_at_ms - asked_at < 4000);  // well before the wait ends
  CHECK(waiter.command("PING") == "PONG");      // in step after the wait

  // Two waiters, one request: one gets it, the other EMPTY when its wait ends.
  RawClient second(server.port());
  waiter.send("RESERVE q wait=1s\r\n");
  second.send("RESERVE q wait=1s\r\n");
  CHECK_FALSE(second.is_closed_by_peer(std::chrono::milliseconds(100)));
  CHECK(producer.enqueue("q tx-2") == "CREATED tx-2 SENDING 0 1 0");
  const Request a = waiter.read_request();
  const Request b = second.read_request();
  CHECK(a.is_request != b.is_request);
  CHECK((a.is_request ? a : b).key == "tx-2#1");
  CHECK((a.is_request ? b : a).line == "EMPTY");

  // A waiter on another queue is not woken.
  waiter.send("RESERVE other wait=300ms\r\n");
  CHECK(producer.enqueue("q tx-3") == "CREATED tx-3 SENDING 0 1 0");
  CHECK(waiter.read_line() == "EMPTY");
}

TEST_CASE("an expired lease re-delivers the request with deliveries+1") {
  ServerProcess server;
  RawClient a(server.port());
  RawClient b(server.port());

  REQUIRE(starts_with(a.command("CONFIG q lease=200ms"), "CONFIG q "));
  CHECK(a.enqueue("q tx-1") == "CREATED tx-1 SENDING 0 1 0");
  const int64_t leased_from = wall_ms();
  CHECK(a.request("RESERVE q").line == "REQUEST tx-1 1 tx-1#1 1 7");
  CHECK(b.command("RESERVE q") == "EMPTY");  // leased
  const Request again = b.request("RESERVE q wait=5s");
  CHECK(again.line == "REQUEST tx-1 1 tx-1#1 2 7");
  CHECK(again.received_at_ms >= leased_from + 200);
  CHECK(again.received_at_ms < leased_from + 200 + kLatenessMs);
  // The first holder lost its lease.
  CHECK(a.command("RELEASE tx-1 1") == "STALE tx-1 SENDING 0 1 0");
  const Request third = a.request("RESERVE q wait=5s");
  CHECK(third.line == "REQUEST tx-1 1 tx-1#1 3 7");
  // GET's failed_deliveries counts failed deliveries of the current request: both
  // leases ran out; the third hand-out is under way.
  CHECK(a.command("GET tx-1").find(" failed_deliveries=2 ") != std::string::npos);
  CHECK(a.command("SENT tx-1 1") == "OK tx-1 IN_FLIGHT 1 0 0");
  CHECK(a.command("GET tx-1").find(" failed_deliveries=0 ") !=
        std::string::npos);  // no request now
  const auto history = a.block("HISTORY tx-1");
  REQUIRE(history.size() == 5);  // ENQUEUE, two lease expiries, SENT
  for (size_t i : {2, 3}) {
    const auto e = parse_fields(history[i]);
    CHECK(e.at("from") == "SENDING");
    CHECK(e.at("to") == "SENDING");
    CHECK(e.at("cause") == "lease");
    CHECK(e.at("reason") == "LEASE_EXPIRED");
  }
}

TEST_CASE("a disconnect re-delivers the leased request with deliveries+1") {
  ServerProcess server;
  RawClient b(server.port());
  CHECK(b.enqueue("q tx-1") == "CREATED tx-1 SENDING 0 1 0");
  {
    RawClient a(server.port());
    CHECK(a.request("RESERVE q").line == "REQUEST tx-1 1 tx-1#1 1 7");
    CHECK(b.command("RESERVE q") == "EMPTY");
  }  // a closes
  const int64_t closed_at = wall_ms();
  const Request again = b.request("RESERVE q wait=5s");
  CHECK(again.line == "REQUEST tx-1 1 tx-1#1 2 7");
  CHECK(again.received_at_ms - closed_at < 1000);  // the 30 s lease did not have to run out
  const auto history = b.block("HISTORY tx-1");
  REQUIRE(history.size() == 3);
  const auto e = parse_fields(history[2]);
  CHECK(e.at("from") == "SENDING");
  CHECK(e.at("to") == "SENDING");
  CHECK(e.at("cause") == "lease");  // a disconnect ends the lease
  CHECK(e.at("reason") == "DISCONNECTED");

  // A disconnect with the RESERVE still waiting takes nothing.
  {
    RawClient gone(server.port());
    gone.send("RESERVE q wait=5s\r\n");
    CHECK_FALSE(gone.is_closed_by_peer(std::chrono::milliseconds(50)));
  }
  CHECK(b.command("RELEASE tx-1 1") == "OK tx-1 SENDING 0 1 0");
  CHECK(b.request("RESERVE q wait=5s").line == "REQUEST tx-1 1 tx-1#1 3 7");
}

TEST_CASE("end to end: CANCELLED twice then SUCCESS, retries never before next_fire_at") {
  ServerProcess server;
  RawClient producer(server.port());
  RawClient dispatcher(server.port());

  CHECK(producer.enqueue("payments TX-100200 base=100ms jitter=0", "{\"amount\":12}") ==
        "CREATED TX-100200 SENDING 0 1 0");
  int64_t fire_at = 0;
  std::vector<int64_t> fire_ats;  // each retry's instant, as RESPOND announced it
  for (uint32_t attempt = 1; attempt <= 3; ++attempt) {
    CAPTURE(attempt);
    const Request r = dispatcher.request("RESERVE payments wait=5s");
    REQUIRE(r.is_request);
    CHECK(r.tx_id == "TX-100200");
    CHECK(r.attempt == attempt);
    CHECK(r.key == "TX-100200#" + std::to_string(attempt));
    CHECK(r.handouts == 1);
    CHECK(r.payload == "{\"amount\":12}");
    if (attempt > 1) {
      CHECK(r.received_at_ms >= fire_at);               // never early
      CHECK(r.received_at_ms < fire_at + kLatenessMs);  // not much late
    }
    const std::string a = std::to_string(attempt);
    CHECK(dispatcher.command("SENT TX-100200 " + a) == "OK TX-100200 IN_FLIGHT " + a + " 0 0");
    if (attempt < 3) {
      const int64_t before = wall_ms();
      const Summary s =
          parse_summary(producer.command("RESPOND TX-100200 " + a + " CANCELLED reason=not_now"));
      const int64_t after = wall_ms();
      CHECK(s.status == "OK");
      CHECK(s.state == "SCHEDULED");
      CHECK(s.attempt == attempt);
      CHECK(s.next_attempt == attempt + 1);
      const int64_t wait = attempt == 1 ? 100 : 200;  // base × factor^(k−1), factor 2
      CHECK(s.next_fire_at >= before + wait);
      CHECK(s.next_fire_at <= after + wait);
      fire_at = s.next_fire_at;
      fire_ats.push_back(fire_at);
      CHECK(producer.command("GET TX-100200")
                .find(" next_fire_at=" + std::to_string(fire_at) + " ") != std::string::npos);
    } else {
      CHECK(producer.command("RESPOND TX-100200 3 SUCCESS") == "OK TX-100200 SUCCEEDED 3 0 0");
    }
  }
  CHECK(dispatcher.command("RESERVE payments") == "EMPTY");

  const auto history = producer.block("HISTORY TX-100200");
  struct Step {
    const char* from;
    const char* to;
    const char* cause;
    const char* attempt;
    const char* next_attempt;
  };
  const std::vector<Step> steps = {
      {"-", "SENDING", "ENQUEUE", "0", "1"},
      {"SENDING", "IN_FLIGHT", "SENT", "1", "0"},
      {"IN_FLIGHT", "SCHEDULED", "RESPOND", "1", "2"},
      {"SCHEDULED", "SENDING", "timer", "1", "2"},
      {"SENDING", "IN_FLIGHT", "SENT", "2", "0"},
      {"IN_FLIGHT", "SCHEDULED", "RESPOND", "2", "3"},
      {"SCHEDULED", "SENDING", "timer", "2", "3"},
      {"SENDING", "IN_FLIGHT", "SENT", "3", "0"},
      {"IN_FLIGHT", "SUCCEEDED", "RESPOND", "3", "0"},
  };
  // HISTORY keeps the whole life (far below history_max), each event with
  // its number and no marker; the retries' fires carry their instants.
  REQUIRE(history.size() == steps.size() + 1);
  CHECK(history[0] == "EVENTS " + std::to_string(steps.size()));
  int64_t previous_at = 0;
  size_t fires = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    INFO(history[i + 1]);
    const auto e = parse_fields(history[i + 1]);
    const Step& step = steps[i];
    CHECK(e.at("from") == step.from);
    CHECK(e.at("to") == step.to);
    CHECK(e.at("cause") == step.cause);
    CHECK(e.at("attempt") == step.attempt);
    CHECK(e.at("next_attempt") == step.next_attempt);
    CHECK(e.at("seq") == std::to_string(i));
    CHECK(e.count("dropped") == 0);
    const int64_t at = std::stoll(e.at("at"));
    CHECK(at >= previous_at);
    previous_at = at;
    if (std::string(step.cause) != "timer") {
      CHECK(e.at("due") == "-");
      CHECK(e.at("late") == "-");
      continue;
    }
    REQUIRE(fires < fire_ats.size());
    const int64_t due = fire_ats[fires++];
    CHECK(std::stoll(e.at("due")) == due);
    // Moved at most --retry-lead (10 ms by default) ahead, and late = at − due, at least 0.
    CHECK(at >= due - 10);
    CHECK(std::stoll(e.at("late")) == std::max<int64_t>(0, at - due));
    CHECK(std::stoll(e.at("late")) < kLatenessMs);
  }
  CHECK(fires == 2);
  CHECK(parse_fields(history[6]).at("reason") == "not_now");  // the second CANCELLED
}

TEST_CASE("after SIGKILL and a restart, retries fire at their persisted instants") {
  ServerProcess server;
  int64_t overdue_at = 0;
  int64_t later_at = 0;
  {
    RawClient c(server.port());
    CHECK(c.enqueue("q tx-overdue sent=1 base=300ms jitter=0") ==
          "CREATED tx-overdue IN_FLIGHT 1 0 0");
    CHECK(c.enqueue("q tx-later sent=1 base=2500ms jitter=0") ==
          "CREATED tx-later IN_FLIGHT 1 0 0");
    overdue_at = parse_summary(c.command("RESPOND tx-overdue 1 CANCELLED")).next_fire_at;
    later_at = parse_summary(c.command("RESPOND tx-later 1 CANCELLED")).next_fire_at;
    CHECK(c.enqueue("q tx-acked", "acknowledged") == "CREATED tx-acked SENDING 0 1 0");
    CHECK(c.request("RESERVE q").key == "tx-acked#1");  // leased when killed
    server.kill(SIGKILL);
    CHECK(server.wait_exit() != 0);
    REQUIRE(wall_ms() < overdue_at);  // killed before the first retry fired
  }
  // Stay down past the first instant, so that it is overdue at restart.
  while (wall_ms() <= overdue_at + 50) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  server.restart();
  const int64_t restarted_at = wall_ms();
  RawClient c(server.port());

  // The acknowledged ENQUEUE survived; its lease did not (leases are not persisted).
  CHECK(c.command("GET tx-acked").find(" state=SENDING ") != std::string::npos);
  CHECK(c.command("GET tx-later").find(" state=SCHEDULED ") != std::string::npos);
  CHECK(c.command("GET tx-later").find(" next_fire_at=" + std::to_string(later_at) + " ") !=
        std::string::npos);

  std::map<std::string, Request> handed;
  for (int i = 0; i < 3; ++i) {
    const Request r = c.request("RESERVE q wait=10s");
    REQUIRE(r.is_request);
    handed[r.tx_id] = r;
  }
  REQUIRE(handed.size() == 3);
  const Request& acked = handed["tx-acked"];
  // The hand-out before the kill is not counted: deliveries are persisted only
  // when a delivery fails (lease expiry, disconnect, RELEASE), and a restart is
  // none of these.
  CHECK(acked.line == "REQUEST tx-acked 1 tx-acked#1 1 12");
  CHECK(acked.payload == "acknowledged");
  const Request& overdue = handed["tx-overdue"];
  CHECK(overdue.key == "tx-overdue#2");
  CHECK(overdue.received_at_ms >= overdue_at);
  CHECK(overdue.received_at_ms - restarted_at < 1000);  // at once after the restart
  const Request& later = handed["tx-later"];
  CHECK(later.key == "tx-later#2");
  CHECK(later.received_at_ms >= later_at);  // not before its persisted instant
  CHECK(later.received_at_ms < later_at + kLatenessMs);
}

TEST_SUITE_END();

}  // namespace
}  // namespace tarde::testing
