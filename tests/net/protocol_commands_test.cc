// Protocol tests, one command at a time: every command of PROTOCOL.md with
// the exact shape of its replies, over real sockets against the real
// `tarde serve` binary, each test case on its own server and temp data dir.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <map>
#include <set>
#include <string>
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

// A summary reply and the wall-clock window in which the server produced it,
// so that `next_fire_at` can be checked against now + wait exactly.
struct Timed {
  Summary summary;
  std::string line;
  int64_t sent_at = 0;
  int64_t replied_at = 0;
};

Timed timed(RawClient& client, std::string_view line) {
  Timed t;
  t.sent_at = wall_ms();
  t.line = client.command(line);
  t.replied_at = wall_ms();
  t.summary = parse_summary(t.line);
  return t;
}

Timed timed_enqueue(RawClient& client, std::string_view args) {
  Timed t;
  t.sent_at = wall_ms();
  t.line = client.enqueue(args);
  t.replied_at = wall_ms();
  t.summary = parse_summary(t.line);
  return t;
}

// next_fire_at is exactly now + wait_ms, where now lies in the reply's window.
void check_fire_in(const Timed& t, int64_t wait_ms) {
  INFO(t.line);
  CHECK(t.summary.next_fire_at >= t.sent_at + wait_ms);
  CHECK(t.summary.next_fire_at <= t.replied_at + wait_ms);
}

std::string field(RawClient& client, const std::string& tx_id, const std::string& name) {
  const std::string line = client.command("GET " + tx_id);
  const auto fields = parse_fields(line);
  const auto it = fields.find(name);
  if (it == fields.end()) return "<no " + name + " in '" + line + "'>";
  return it->second;
}

TEST_CASE("ENQUEUE replies CREATED, then EXISTS for the same tx_id, and honours sent= and delay=") {
  ServerProcess server;
  RawClient c(server.port());

  CHECK(c.enqueue("q tx-1", "first") == "CREATED tx-1 SENDING 0 1 0");
  // The tx_id is the idempotency key: nothing changes, not even the payload.
  CHECK(c.enqueue("q tx-1", "second payload") == "EXISTS tx-1 SENDING 0 1 0");
  CHECK(c.enqueue("other tx-1 sent=1", "x") == "EXISTS tx-1 SENDING 0 1 0");
  CHECK(field(c, "tx-1", "payload_bytes") == "5");
  CHECK(field(c, "tx-1", "queue") == "q");

  CHECK(c.enqueue("q tx-2 sent=1") == "CREATED tx-2 IN_FLIGHT 1 0 0");
  CHECK(c.enqueue("q tx-2b sent=0") == "CREATED tx-2b SENDING 0 1 0");

  const Timed delayed = timed_enqueue(c, "q tx-3 delay=300ms");
  CHECK(delayed.summary.status == "CREATED");
  CHECK(delayed.summary.state == "SCHEDULED");
  CHECK(delayed.summary.attempt == 0);
  CHECK(delayed.summary.next_attempt == 1);
  check_fire_in(delayed, 300);  // no jitter on delay, whatever the queue's jitter
  // A delayed request is not ready before its instant.
  const Request first = c.request("RESERVE q");
  CHECK(first.line == "REQUEST tx-1 1 tx-1#1 1 5");
  CHECK(first.payload == "first");
  CHECK(c.request("RESERVE q").key == "tx-2b#1");
  CHECK(c.command("RESERVE q") == "EMPTY");
  const Request fired = c.request("RESERVE q wait=5s");
  REQUIRE(fired.is_request);
  CHECK(fired.key == "tx-3#1");
  CHECK(fired.received_at_ms >= delayed.summary.next_fire_at);

  const std::string both = c.enqueue("q tx-4 delay=1s sent=1");
  CHECK(starts_with(both, "ERR BAD_ARGUMENT "));
  CHECK(c.command("GET tx-4") == "NOT_FOUND tx-4");

  // An empty payload is a payload of 0 bytes.
  c.send("ENQUEUE q tx-5 0\r\n\r\n");
  CHECK(c.read_line() == "CREATED tx-5 SENDING 0 1 0");
  CHECK(field(c, "tx-5", "payload_bytes") == "0");

  // Tokens may be separated by runs of spaces, options come in any order.
  c.send("ENQUEUE   q   tx-6   jitter=0 sent=1   max_attempts=2  3\r\nabc\r\n");
  CHECK(c.read_line() == "CREATED tx-6 IN_FLIGHT 1 0 0");
  CHECK(field(c, "tx-6", "max_attempts") == "2");
  CHECK(c.command("PING") == "PONG");
}

TEST_CASE("ENQUEUE options set the transaction's retry policy; omitted ones come from CONFIG") {
  ServerProcess server;
  RawClient c(server.port());

  // factor and cap: waits base, base*factor, capped.
  CHECK(c.enqueue("q tx-a sent=1 base=100ms factor=3 cap=1h jitter=0") ==
        "CREATED tx-a IN_FLIGHT 1 0 0");
  CHECK(c.enqueue("q tx-b sent=1 base=100ms factor=3 cap=250ms jitter=0") ==
        "CREATED tx-b IN_FLIGHT 1 0 0");
  check_fire_in(timed(c, "RESPOND tx-a 1 CANCELLED"), 100);
  check_fire_in(timed(c, "RESPOND tx-b 1 CANCELLED"), 100);
  std::set<std::string> keys;
  for (int i = 0; i < 2; ++i) {
    const Request r = c.request("RESERVE q wait=5s");
    REQUIRE(r.is_request);
    keys.insert(r.key);
  }
  CHECK(keys == std::set<std::string>{"tx-a#2", "tx-b#2"});
  check_fire_in(timed(c, "RESPOND tx-a 2 CANCELLED"), 300);
  check_fire_in(timed(c, "RESPOND tx-b 2 CANCELLED"), 250);

  // max_attempts counts the original request.
  CHECK(c.enqueue("q tx-c sent=1 max_attempts=1") == "CREATED tx-c IN_FLIGHT 1 0 0");
  CHECK(field(c, "tx-c", "max_attempts") == "1");
  CHECK(c.command("RESPOND tx-c 1 CANCELLED") == "OK tx-c FAILED 1 0 0");
  CHECK(field(c, "tx-c", "reason") == "EXHAUSTED");

  // deadline: a retry that would fire after created_at + deadline fails instead.
  CHECK(c.enqueue("q tx-d sent=1 base=1s jitter=0 deadline=500ms") ==
        "CREATED tx-d IN_FLIGHT 1 0 0");
  CHECK(c.command("RESPOND tx-d 1 CANCELLED") == "OK tx-d FAILED 1 0 0");
  CHECK(field(c, "tx-d", "reason") == "DEADLINE");
  CHECK(c.enqueue("q tx-e deadline=1h") == "CREATED tx-e SENDING 0 1 0");
  {
    const auto tx = parse_fields(c.command("GET tx-e"));
    CHECK(std::stoll(tx.at("deadline_at")) == std::stoll(tx.at("created_at")) + 3'600'000);
  }
  CHECK(field(c, "tx-a", "deadline_at") == "0");

  // jitter: u uniform in [-jitter, +jitter]; strict_cap=1 caps again after it.
  // 24 draws each: without strict_cap some wait lands above the cap (failing
  // that has probability 2^-24), with it none does.
  int above_cap = 0;
  std::set<int64_t> waits;
  for (int i = 0; i < 24; ++i) {
    const std::string loose = "loose-" + std::to_string(i);
    const std::string strict = "strict-" + std::to_string(i);
    REQUIRE(starts_with(c.enqueue("j " + loose + " sent=1 base=1s cap=1s jitter=0.5"), "CREATED"));
    REQUIRE(starts_with(c.enqueue("j " + strict + " sent=1 base=1s cap=1s jitter=0.5 strict_cap=1"),
                        "CREATED"));
    const Timed l = timed(c, "RESPOND " + loose + " 1 CANCELLED");
    const Timed s = timed(c, "RESPOND " + strict + " 1 CANCELLED");
    CHECK(l.summary.next_fire_at >= l.sent_at + 500);
    CHECK(l.summary.next_fire_at <= l.replied_at + 1500);
    CHECK(s.summary.next_fire_at >= s.sent_at + 500);
    CHECK(s.summary.next_fire_at <= s.replied_at + 1000);
    if (l.summary.next_fire_at > l.replied_at + 1000) ++above_cap;
    waits.insert(l.summary.next_fire_at - l.sent_at);
  }
  CHECK(above_cap > 0);
  CHECK(waits.size() > 1);

  // Omitted options take the queue's configuration at creation time.
  REQUIRE(starts_with(c.command("CONFIG cfg max_attempts=7"), "CONFIG cfg max_attempts=7 "));
  CHECK(c.enqueue("cfg tx-f") == "CREATED tx-f SENDING 0 1 0");
  CHECK(c.enqueue("cfg tx-g max_attempts=2") == "CREATED tx-g SENDING 0 1 0");
  REQUIRE(starts_with(c.command("CONFIG cfg max_attempts=3"), "CONFIG cfg max_attempts=3 "));
  CHECK(field(c, "tx-f", "max_attempts") == "7");
  CHECK(field(c, "tx-g", "max_attempts") == "2");

  // Each option's value is checked.
  for (const char* bad : {"max_attempts=0", "max_attempts=1001", "base=1x", "factor=-1",
                          "factor=0.5", "cap=1.5s", "jitter=2", "strict_cap=2", "deadline=soon",
                          "sent=yes", "delay=-1", "lease=1s", "bogus=1"}) {
    INFO(bad);
    CHECK(starts_with(c.enqueue(std::string("q tx-bad ") + bad), "ERR BAD_ARGUMENT "));
  }
  CHECK(c.command("GET tx-bad") == "NOT_FOUND tx-bad");
}

TEST_CASE("RESERVE hands out REQUEST with the idempotency key in FIFO order, or EMPTY") {
  ServerProcess server;
  RawClient c(server.port());

  CHECK(c.command("RESERVE q") == "EMPTY");
  const std::string binary("a\r\nb\0c\r\n\xff", 9);
  CHECK(c.enqueue("q TX-100200", binary) == "CREATED TX-100200 SENDING 0 1 0");
  CHECK(c.enqueue("q TX-2") == "CREATED TX-2 SENDING 0 1 0");

  const Request first = c.request("RESERVE q");
  REQUIRE(first.is_request);
  CHECK(first.line == "REQUEST TX-100200 1 TX-100200#1 1 9");
  CHECK(first.payload == binary);
  const Request second = c.request("RESERVE q");
  CHECK(second.line == "REQUEST TX-2 1 TX-2#1 1 7");
  CHECK(second.payload == "payload");
  CHECK(c.command("RESERVE q") == "EMPTY");
  CHECK(c.command("RESERVE other") == "EMPTY");

  // wait= answers EMPTY once it has passed with nothing ready.
  const int64_t before = wall_ms();
  CHECK(c.command("RESERVE q wait=300ms") == "EMPTY");
  CHECK(wall_ms() - before >= 250);
  CHECK(wall_ms() - before < 5000);
  CHECK(c.command("RESERVE q wait=0") == "EMPTY");

  const auto stats = c.block("STATS");
  CHECK(std::find(stats.begin(), stats.end(), "leased 2") != stats.end());
  CHECK(std::find(stats.begin(), stats.end(), "ready 0") != stats.end());
}

TEST_CASE("SENT replies OK, STALE for a duplicate or another attempt, NOT_FOUND when unknown") {
  ServerProcess server;
  RawClient c(server.port());

  CHECK(c.enqueue("q tx-1") == "CREATED tx-1 SENDING 0 1 0");
  REQUIRE(c.request("RESERVE q").key == "tx-1#1");
  CHECK(c.command("SENT tx-1 2") == "STALE tx-1 SENDING 0 1 0");
  CHECK(c.command("SENT tx-1 1") == "OK tx-1 IN_FLIGHT 1 0 0");
  CHECK(c.command("SENT tx-1 1") == "STALE tx-1 IN_FLIGHT 1 0 0");
  CHECK(c.command("SENT nope 1") == "NOT_FOUND nope");
  // The lease ended with SENT.
  CHECK(c.command("RELEASE tx-1 1") == "STALE tx-1 IN_FLIGHT 1 0 0");

  CHECK(c.enqueue("q tx-2 sent=1") == "CREATED tx-2 IN_FLIGHT 1 0 0");
  CHECK(c.command("SENT tx-2 1") == "STALE tx-2 IN_FLIGHT 1 0 0");
}

TEST_CASE("RELEASE replies OK with delay, STALE when not leased, NOT_FOUND when unknown") {
  ServerProcess server;
  RawClient c(server.port());
  RawClient other(server.port());

  CHECK(c.enqueue("q tx-1") == "CREATED tx-1 SENDING 0 1 0");
  CHECK(c.command("RELEASE tx-1 1") == "STALE tx-1 SENDING 0 1 0");  // not reserved yet
  CHECK(c.command("RELEASE nope 1") == "NOT_FOUND nope");

  const Request first = c.request("RESERVE q");
  CHECK(first.line == "REQUEST tx-1 1 tx-1#1 1 7");
  // Only the connection holding the lease, for that attempt, may release it.
  CHECK(other.command("RELEASE tx-1 1") == "STALE tx-1 SENDING 0 1 0");
  CHECK(c.command("RELEASE tx-1 2") == "STALE tx-1 SENDING 0 1 0");

  const int64_t released_at = wall_ms();
  CHECK(c.command("RELEASE tx-1 1 delay=300ms reason=busy") == "OK tx-1 SENDING 0 1 0");
  CHECK(c.command("RELEASE tx-1 1") == "STALE tx-1 SENDING 0 1 0");  // no longer leased
  CHECK(c.command("RESERVE q") == "EMPTY");
  const Request again = other.request("RESERVE q wait=5s");
  CHECK(again.line == "REQUEST tx-1 1 tx-1#1 2 7");
  CHECK(again.received_at_ms >= released_at + 300);
  // GET's failed_deliveries counts the failed deliveries of the current request: the
  // hand-out under way is counted once it fails.
  CHECK(field(other, "tx-1", "failed_deliveries") == "1");

  const auto history = other.block("HISTORY tx-1");
  REQUIRE(history.size() == 3);
  const auto released = parse_fields(history[2]);
  CHECK(released.at("from") == "SENDING");
  CHECK(released.at("to") == "SENDING");
  CHECK(released.at("cause") == "RELEASE");
  CHECK(released.at("reason") == "busy");

  // Without delay the request is ready at once.
  CHECK(other.command("RELEASE tx-1 1") == "OK tx-1 SENDING 0 1 0");
  CHECK(c.request("RESERVE q").line == "REQUEST tx-1 1 tx-1#1 3 7");
}

TEST_CASE("RELEASE at max_deliveries buries; DEADLETTERS lists it, REDRIVE and RESOLVE end it") {
  ServerProcess server;
  RawClient c(server.port());

  REQUIRE(starts_with(c.command("CONFIG q max_deliveries=2"), "CONFIG q "));
  const int64_t start = wall_ms();
  for (const std::string tx : {"tx-1", "tx-2"}) {
    CHECK(c.enqueue("q " + tx) == "CREATED " + tx + " SENDING 0 1 0");
    CHECK(c.request("RESERVE q").handouts == 1);
    CHECK(c.command("RELEASE " + tx + " 1 reason=e1") == "OK " + tx + " SENDING 0 1 0");
    const Request second = c.request("RESERVE q");
    CHECK(second.tx_id == tx);
    CHECK(second.handouts == 2);
    CHECK(c.command("RELEASE " + tx + " 1 reason=conn_refused") ==
          "BURIED " + tx + " SENDING 0 1 0");
  }
  CHECK(c.command("RESERVE q") == "EMPTY");

  const auto letters = c.block("DEADLETTERS q");
  REQUIRE(letters.size() == 3);
  CHECK(letters[0] == "LETTERS 2");
  std::set<std::string> buried;
  for (size_t i = 1; i < letters.size(); ++i) {
    INFO(letters[i]);
    CHECK(starts_with(letters[i], "LETTER tx="));
    const auto f = parse_fields(letters[i]);
    const std::vector<std::string> words = split_words(letters[i]);
    REQUIRE(words.size() == 8);
    CHECK(starts_with(words[1], "tx="));
    CHECK(starts_with(words[2], "attempt="));
    CHECK(starts_with(words[3], "key="));
    CHECK(starts_with(words[4], "failed_deliveries="));
    CHECK(starts_with(words[5], "buried_at="));
    CHECK(starts_with(words[6], "last_error="));
    CHECK(starts_with(words[7], "payload_bytes="));
    buried.insert(f.at("tx"));
    CHECK(f.at("attempt") == "1");
    CHECK(f.at("key") == f.at("tx") + "#1");
    CHECK(f.at("failed_deliveries") == "2");
    CHECK(std::stoll(f.at("buried_at")) >= start);
    CHECK(std::stoll(f.at("buried_at")) <= wall_ms());
    CHECK(f.at("last_error") == "conn_refused");
  }
  CHECK(buried == std::set<std::string>{"tx-1", "tx-2"});
  CHECK(c.block("DEADLETTERS q limit=1").size() == 2);
  CHECK(c.block("DEADLETTERS other") == std::vector<std::string>{"LETTERS 0"});
  CHECK(starts_with(c.command("DEADLETTERS q limit=0"), "ERR BAD_ARGUMENT "));
  const auto stats = c.block("STATS");
  CHECK(std::find(stats.begin(), stats.end(), "dead_letters 2") != stats.end());

  // A buried request's transaction stays SENDING; RESOLVE may end it.
  CHECK(c.command("RESOLVE tx-2 FAILED reason=gave_up") == "OK tx-2 FAILED 0 0 0");
  CHECK(field(c, "tx-2", "reason") == "gave_up");
  CHECK(c.command("REDRIVE q tx-2") == "NOT_FOUND tx-2");

  CHECK(c.command("REDRIVE q nope") == "NOT_FOUND nope");
  CHECK(c.command("REDRIVE other tx-1") == "NOT_FOUND tx-1");
  CHECK(c.command("REDRIVE q tx-1") == "OK tx-1 SENDING 0 1 0");
  CHECK(c.command("REDRIVE q tx-1") == "NOT_FOUND tx-1");
  CHECK(c.block("DEADLETTERS q") == std::vector<std::string>{"LETTERS 0"});
  // REDRIVE sets deliveries back to 0: this hand-out is the first again.
  CHECK(c.request("RESERVE q").line == "REQUEST tx-1 1 tx-1#1 1 7");
}

TEST_CASE("RESPOND accepts each answer once; late and duplicate answers are STALE") {
  ServerProcess server;
  RawClient c(server.port());

  CHECK(c.enqueue("q tx-s sent=1") == "CREATED tx-s IN_FLIGHT 1 0 0");
  CHECK(c.command("RESPOND tx-s 1 SUCCESS") == "OK tx-s SUCCEEDED 1 0 0");
  CHECK(c.command("RESPOND tx-s 1 SUCCESS") == "STALE tx-s SUCCEEDED 1 0 0");
  CHECK(c.command("RESPOND tx-s 1 REJECTED") == "STALE tx-s SUCCEEDED 1 0 0");

  CHECK(c.enqueue("q tx-r sent=1") == "CREATED tx-r IN_FLIGHT 1 0 0");
  CHECK(c.command("RESPOND tx-r 1 REJECTED reason=invalid_iban") == "OK tx-r FAILED 1 0 0");
  CHECK(field(c, "tx-r", "reason") == "invalid_iban");

  CHECK(c.enqueue("q tx-c sent=1 base=10s jitter=0") == "CREATED tx-c IN_FLIGHT 1 0 0");
  const Timed cancelled = timed(c, "RESPOND tx-c 1 CANCELLED reason=not_now");
  CHECK(cancelled.summary.status == "OK");
  CHECK(cancelled.summary.state == "SCHEDULED");
  CHECK(cancelled.summary.attempt == 1);
  CHECK(cancelled.summary.next_attempt == 2);
  check_fire_in(cancelled, 10'000);
  const std::string scheduled =
      "STALE tx-c SCHEDULED 1 2 " + std::to_string(cancelled.summary.next_fire_at);
  CHECK(c.command("RESPOND tx-c 1 CANCELLED") == scheduled);  // duplicate
  CHECK(c.command("RESPOND tx-c 1 SUCCESS") == scheduled);    // late
  CHECK(c.command("RESPOND tx-c 2 SUCCESS") == scheduled);    // not sent yet
  CHECK(field(c, "tx-c", "next_fire_at") == std::to_string(cancelled.summary.next_fire_at));

  // TRANSIENT re-sends the same attempt after the transient backoff.
  CHECK(c.enqueue("q tx-t sent=1 jitter=0") == "CREATED tx-t IN_FLIGHT 1 0 0");
  const Timed transient = timed(c, "RESPOND tx-t 1 TRANSIENT reason=503");
  CHECK(transient.summary.state == "SCHEDULED");
  CHECK(transient.summary.attempt == 1);
  CHECK(transient.summary.next_attempt == 1);
  check_fire_in(transient, 1000);  // transient_base=1s
  CHECK(field(c, "tx-t", "transients") == "1");

  // retry_after replaces the computed wait, without jitter, bounded by cap.
  CHECK(c.enqueue("q tx-ra sent=1 base=2h jitter=0.5") == "CREATED tx-ra IN_FLIGHT 1 0 0");
  check_fire_in(timed(c, "RESPOND tx-ra 1 CANCELLED retry_after=5s"), 5000);
  CHECK(c.enqueue("q tx-rc sent=1 cap=2s") == "CREATED tx-rc IN_FLIGHT 1 0 0");
  check_fire_in(timed(c, "RESPOND tx-rc 1 CANCELLED retry_after=1h"), 2000);
  REQUIRE(starts_with(c.command("CONFIG tq transient_cap=3s"), "CONFIG tq "));
  CHECK(c.enqueue("tq tx-rt sent=1") == "CREATED tx-rt IN_FLIGHT 1 0 0");
  check_fire_in(timed(c, "RESPOND tx-rt 1 TRANSIENT retry_after=1h"), 3000);
  CHECK(c.enqueue("tq tx-rt2 sent=1 jitter=0.5") == "CREATED tx-rt2 IN_FLIGHT 1 0 0");
  check_fire_in(timed(c, "RESPOND tx-rt2 1 TRANSIENT retry_after=1500ms"), 1500);

  // An answer before SENT implies SENT.
  CHECK(c.enqueue("q tx-p") == "CREATED tx-p SENDING 0 1 0");
  CHECK(c.command("RESPOND tx-p 1 SUCCESS") == "OK tx-p SUCCEEDED 1 0 0");
  CHECK(c.enqueue("q tx-w sent=1") == "CREATED tx-w IN_FLIGHT 1 0 0");
  CHECK(c.command("RESPOND tx-w 2 SUCCESS") == "STALE tx-w IN_FLIGHT 1 0 0");

  CHECK(c.command("RESPOND nope 1 SUCCESS") == "NOT_FOUND nope");
  CHECK(starts_with(c.command("RESPOND tx-w 1 MAYBE"), "ERR BAD_ARGUMENT "));
  CHECK(starts_with(c.command("RESPOND tx-w 1 success"), "ERR BAD_ARGUMENT "));
  CHECK(starts_with(c.command("RESPOND tx-w 1 SUCCESS retry_after=soon"), "ERR BAD_ARGUMENT "));
  CHECK(field(c, "tx-w", "state") == "IN_FLIGHT");
}

TEST_CASE("RESPOND TRANSIENT re-sends the same key, at most max_transient times in a row") {
  ServerProcess server;
  RawClient c(server.port());

  REQUIRE(
      starts_with(c.command("CONFIG q max_transient=1 transient_base=50ms jitter=0"), "CONFIG q "));
  CHECK(c.enqueue("q tx-1 sent=1") == "CREATED tx-1 IN_FLIGHT 1 0 0");
  const Timed first = timed(c, "RESPOND tx-1 1 TRANSIENT");
  CHECK(first.summary.state == "SCHEDULED");
  CHECK(first.summary.next_attempt == 1);
  const Request resend = c.request("RESERVE q wait=5s");
  CHECK(resend.line == "REQUEST tx-1 1 tx-1#1 1 7");  // a new request: deliveries from 0
  CHECK(resend.received_at_ms >= first.summary.next_fire_at);
  CHECK(c.command("RESPOND tx-1 1 TRANSIENT") == "OK tx-1 FAILED 1 0 0");
  CHECK(field(c, "tx-1", "reason") == "TRANSIENT_EXHAUSTED");
}

TEST_CASE(
    "RESOLVE replies OK from SCHEDULED, CONFLICT with a request on its way, STALE when done") {
  ServerProcess server;
  RawClient c(server.port());

  CHECK(c.enqueue("q tx-s sent=1 base=1h") == "CREATED tx-s IN_FLIGHT 1 0 0");
  REQUIRE(parse_summary(c.command("RESPOND tx-s 1 CANCELLED")).state == "SCHEDULED");
  CHECK(c.command("RESOLVE tx-s SUCCEEDED") == "OK tx-s SUCCEEDED 1 0 0");
  CHECK(field(c, "tx-s", "next_fire_at") == "0");
  CHECK(c.command("RESOLVE tx-s SUCCEEDED") == "STALE tx-s SUCCEEDED 1 0 0");
  CHECK(c.command("RESOLVE tx-s FAILED") == "STALE tx-s SUCCEEDED 1 0 0");

  CHECK(c.enqueue("q tx-f sent=1 base=1h") == "CREATED tx-f IN_FLIGHT 1 0 0");
  REQUIRE(parse_summary(c.command("RESPOND tx-f 1 CANCELLED")).state == "SCHEDULED");
  CHECK(c.command("RESOLVE tx-f FAILED reason=paid_by_phone") == "OK tx-f FAILED 1 0 0");
  CHECK(field(c, "tx-f", "reason") == "paid_by_phone");

  CHECK(c.enqueue("q tx-i sent=1") == "CREATED tx-i IN_FLIGHT 1 0 0");
  CHECK(c.command("RESOLVE tx-i FAILED") == "CONFLICT tx-i IN_FLIGHT 1 0 0");
  CHECK(c.enqueue("q tx-l") == "CREATED tx-l SENDING 0 1 0");
  CHECK(c.command("RESOLVE tx-l SUCCEEDED") == "CONFLICT tx-l SENDING 0 1 0");
  REQUIRE(c.request("RESERVE q").key == "tx-l#1");
  CHECK(c.command("RESOLVE tx-l SUCCEEDED") == "CONFLICT tx-l SENDING 0 1 0");

  CHECK(c.command("RESOLVE nope SUCCEEDED") == "NOT_FOUND nope");
  CHECK(starts_with(c.command("RESOLVE tx-i DONE"), "ERR BAD_ARGUMENT "));
  CHECK(starts_with(c.command("RESOLVE tx-i SUCCESS"), "ERR BAD_ARGUMENT "));
}

TEST_CASE("GET replies one TX line with every field in order, or NOT_FOUND") {
  ServerProcess server;
  RawClient c(server.port());

  CHECK(c.command("GET nope") == "NOT_FOUND nope");
  const int64_t before = wall_ms();
  CHECK(c.enqueue("orders tx-1 max_attempts=5 deadline=1h", "twelve bytes") ==
        "CREATED tx-1 SENDING 0 1 0");
  const int64_t after = wall_ms();
  const std::string line = c.command("GET tx-1");
  const std::vector<std::string> words = split_words(line);
  const std::vector<std::string> names = {"id",
                                          "queue",
                                          "state",
                                          "attempt",
                                          "next_attempt",
                                          "max_attempts",
                                          "next_fire_at",
                                          "deadline_at",
                                          "created_at",
                                          "updated_at",
                                          "failed_deliveries",
                                          "transients",
                                          "reason",
                                          "payload_bytes"};
  REQUIRE(words.size() == names.size() + 1);
  CHECK(words[0] == "TX");
  for (size_t i = 0; i < names.size(); ++i) {
    CHECK(words[i + 1].substr(0, words[i + 1].find('=')) == names[i]);
  }
  const auto f = parse_fields(line);
  CHECK(f.at("id") == "tx-1");
  CHECK(f.at("queue") == "orders");
  CHECK(f.at("state") == "SENDING");
  CHECK(f.at("attempt") == "0");
  CHECK(f.at("next_attempt") == "1");
  CHECK(f.at("max_attempts") == "5");
  CHECK(f.at("next_fire_at") == "0");
  const int64_t created = std::stoll(f.at("created_at"));
  CHECK(created >= before);
  CHECK(created <= after);
  CHECK(std::stoll(f.at("deadline_at")) == created + 3'600'000);
  CHECK(std::stoll(f.at("updated_at")) >= created);
  CHECK(f.at("failed_deliveries") == "0");
  CHECK(f.at("transients") == "0");
  CHECK(f.at("reason") == "-");
  CHECK(f.at("payload_bytes") == "12");
}

TEST_CASE("HISTORY replies EVENTS n then n EVENT lines oldest first; limit= keeps the newest") {
  ServerProcess server;
  RawClient c(server.port());

  CHECK(c.block("HISTORY nope") == std::vector<std::string>{"NOT_FOUND nope"});
  CHECK(c.enqueue("q tx-1") == "CREATED tx-1 SENDING 0 1 0");
  CHECK(c.command("SENT tx-1 1") == "OK tx-1 IN_FLIGHT 1 0 0");
  CHECK(c.command("RESPOND tx-1 1 REJECTED reason=bad_card") == "OK tx-1 FAILED 1 0 0");

  const auto all = c.block("HISTORY tx-1");
  REQUIRE(all.size() == 4);
  CHECK(all[0] == "EVENTS 3");
  // The fields in PROTOCOL.md's order; `dropped` only after a gap (none here).
  const std::vector<std::string> names = {"at",    "from",   "to",  "attempt", "next_attempt",
                                          "cause", "reason", "due", "late",    "seq"};
  for (size_t i = 1; i < all.size(); ++i) {
    const std::vector<std::string> words = split_words(all[i]);
    REQUIRE(words.size() == names.size() + 1);
    CHECK(words[0] == "EVENT");
    for (size_t k = 0; k < names.size(); ++k) {
      CHECK(words[k + 1].substr(0, words[k + 1].find('=')) == names[k]);
    }
  }
  const auto e1 = parse_fields(all[1]);
  const auto e2 = parse_fields(all[2]);
  const auto e3 = parse_fields(all[3]);
  CHECK(e1.at("from") == "-");  // a new transaction comes from no state
  CHECK(e1.at("to") == "SENDING");
  CHECK(e1.at("cause") == "ENQUEUE");
  CHECK(e1.at("next_attempt") == "1");
  CHECK(e1.at("reason") == "-");
  CHECK(e2.at("from") == "SENDING");
  CHECK(e2.at("to") == "IN_FLIGHT");
  CHECK(e2.at("cause") == "SENT");
  CHECK(e2.at("attempt") == "1");
  CHECK(e3.at("from") == "IN_FLIGHT");
  CHECK(e3.at("to") == "FAILED");
  CHECK(e3.at("cause") == "RESPOND");
  CHECK(e3.at("reason") == "bad_card");
  for (const auto* e : {&e1, &e2, &e3}) {  // no timer fired
    CHECK(e->at("due") == "-");
    CHECK(e->at("late") == "-");
  }
  CHECK(e1.at("seq") == "0");
  CHECK(e3.at("seq") == "2");
  CHECK(std::stoll(e1.at("at")) <= std::stoll(e2.at("at")));
  CHECK(std::stoll(e2.at("at")) <= std::stoll(e3.at("at")));

  CHECK(c.block("HISTORY tx-1 limit=2") == std::vector<std::string>{"EVENTS 2", all[2], all[3]});
  CHECK(c.block("HISTORY tx-1 limit=100") == all);
  CHECK(starts_with(c.command("HISTORY tx-1 limit=0"), "ERR BAD_ARGUMENT "));
  CHECK(starts_with(c.command("HISTORY tx-1 limit=x"), "ERR BAD_ARGUMENT "));
}

TEST_CASE("CONFIG gets and sets every setting, persists them across a restart") {
  ServerProcess server;
  {
    RawClient c(server.port());
    // The defaults of PROTOCOL.md. Durations are printed with the largest exact
    // unit (24h as 1d, 120s as 2m); zero as "0ms".
    CHECK(c.command("CONFIG q") ==
          "CONFIG q max_attempts=4 base=2h factor=2 cap=1d jitter=0.1 strict_cap=0 "
          "transient_base=1s transient_factor=1.6 transient_cap=2m max_transient=10 lease=30s "
          "max_deliveries=5 rate=0 response_timeout=0ms breaker=1 retention=7d "
          "history_max=1000 stuck_after=1h paused=0");
    const std::string set =
        "CONFIG q max_attempts=6 base=90m factor=1.5 cap=2d jitter=0.25 strict_cap=1 "
        "transient_base=500ms transient_factor=3 transient_cap=1m max_transient=4 lease=5s "
        "max_deliveries=3 rate=12.5 response_timeout=45s breaker=0 retention=1d history_max=20 "
        "stuck_after=90s";
    CHECK(c.command(set) == set + " paused=0");
    // Settings may come in any order and only the named ones change.
    CHECK(c.command("CONFIG q lease=6000ms max_deliveries=9") ==
          "CONFIG q max_attempts=6 base=90m factor=1.5 cap=2d jitter=0.25 strict_cap=1 "
          "transient_base=500ms transient_factor=3 transient_cap=1m max_transient=4 lease=6s "
          "max_deliveries=9 rate=12.5 response_timeout=45s breaker=0 retention=1d "
          "history_max=20 stuck_after=90s paused=0");
    // A bad setting changes nothing.
    CHECK(starts_with(c.command("CONFIG q max_deliveries=4 bogus=1"), "ERR BAD_ARGUMENT "));
    CHECK(starts_with(c.command("CONFIG q max_deliveries=4 lease=0"), "ERR BAD_ARGUMENT "));
    CHECK(starts_with(c.command("CONFIG q max_deliveries=0"), "ERR BAD_ARGUMENT "));
    CHECK(starts_with(c.command("CONFIG q jitter=1.5"), "ERR BAD_ARGUMENT "));
    CHECK(starts_with(c.command("CONFIG q breaker=2"), "ERR BAD_ARGUMENT "));
    CHECK(starts_with(c.command("CONFIG q history_max=1"), "ERR BAD_ARGUMENT "));
    CHECK(starts_with(c.command("CONFIG q history_max=1000001"), "ERR BAD_ARGUMENT "));
    CHECK(starts_with(c.command("CONFIG q stuck_after=soon"), "ERR BAD_ARGUMENT "));
    // paused is shown but only PAUSE and RESUME change it.
    CHECK(starts_with(c.command("CONFIG q paused=1"), "ERR BAD_ARGUMENT "));
    CHECK(starts_with(c.command("CONFIG bad/queue"), "ERR BAD_ARGUMENT "));
    CHECK(starts_with(c.command("CONFIG"), "ERR BAD_COMMAND "));
    CHECK(c.command("CONFIG other") ==
          "CONFIG other max_attempts=4 base=2h factor=2 cap=1d jitter=0.1 strict_cap=0 "
          "transient_base=1s transient_factor=1.6 transient_cap=2m max_transient=10 lease=30s "
          "max_deliveries=5 rate=0 response_timeout=0ms breaker=1 retention=7d "
          "history_max=1000 stuck_after=1h paused=0");
  }
  server.kill(SIGKILL);
  server.wait_exit();
  server.restart();
  RawClient c(server.port());
  CHECK(c.command("CONFIG q") ==
        "CONFIG q max_attempts=6 base=90m factor=1.5 cap=2d jitter=0.25 strict_cap=1 "
        "transient_base=500ms transient_factor=3 transient_cap=1m max_transient=4 lease=6s "
        "max_deliveries=9 rate=12.5 response_timeout=45s breaker=0 retention=1d "
        "history_max=20 stuck_after=90s paused=0");
}

namespace {

// STATS commits_waited after `rounds` of: `waiting` sends two ENQUEUEs in
// one write (a group of two, so groups carry company on average), `other`
// sends a command and stays free, and `waiting` enqueues once more, which
// a server with --commit-wait on holds a little for `other`.
uint64_t commits_waited_after(ServerProcess& server, int rounds) {
  RawClient waiting(server.port());
  RawClient other(server.port());
  int next = 0;
  auto enqueue_bytes = [&next] {
    const std::string payload = "p";
    return "ENQUEUE q wait-" + std::to_string(next++) + " " + std::to_string(payload.size()) +
           "\r\n" + payload + "\r\n";
  };
  for (int i = 0; i < rounds; ++i) {
    waiting.send(enqueue_bytes() + enqueue_bytes());
    CHECK(waiting.read_line().rfind("CREATED", 0) == 0);
    CHECK(waiting.read_line().rfind("CREATED", 0) == 0);
    CHECK(other.command("PING") == "PONG");
    waiting.send(enqueue_bytes());
    CHECK(waiting.read_line().rfind("CREATED", 0) == 0);
  }
  for (const std::string& line : other.block("STATS")) {
    if (line.rfind("commits_waited ", 0) == 0) return std::stoull(line.substr(15));
  }
  FAIL("STATS has no commits_waited");
  return 0;
}

}  // namespace

TEST_CASE("--commit-wait: on, a commit waits for a free client's command; off, never") {
  {
    ServerProcess server;
    // One round suffices unless the machine stalls past the 10 to 20 ms in
    // which the free client counts as active; twenty make that moot.
    CHECK(commits_waited_after(server, 20) >= 1);
  }
  {
    ServerProcess server({"--commit-wait", "off"});
    CHECK(commits_waited_after(server, 20) == 0);
  }
}

TEST_CASE("STATS replies STATS n then every required name with its figure") {
  ServerProcess server;
  RawClient c(server.port());
  RawClient second(server.port());
  CHECK(second.command("PING") == "PONG");

  CHECK(c.enqueue("q tx-sending") == "CREATED tx-sending SENDING 0 1 0");
  CHECK(c.enqueue("q tx-leased") == "CREATED tx-leased SENDING 0 1 0");
  CHECK(c.enqueue("q tx-in-flight sent=1") == "CREATED tx-in-flight IN_FLIGHT 1 0 0");
  CHECK(parse_summary(c.enqueue("q tx-scheduled delay=1h")).state == "SCHEDULED");
  CHECK(c.enqueue("q tx-ok sent=1") == "CREATED tx-ok IN_FLIGHT 1 0 0");
  CHECK(c.command("RESPOND tx-ok 1 SUCCESS") == "OK tx-ok SUCCEEDED 1 0 0");
  CHECK(c.enqueue("q tx-failed sent=1") == "CREATED tx-failed IN_FLIGHT 1 0 0");
  CHECK(c.command("RESPOND tx-failed 1 REJECTED") == "OK tx-failed FAILED 1 0 0");
  REQUIRE(c.request("RESERVE q").key == "tx-sending#1");

  const auto lines = c.block("STATS");
  REQUIRE(!lines.empty());
  CHECK(lines[0] == "STATS " + std::to_string(lines.size() - 1));
  std::map<std::string, std::string> stats;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> words = split_words(lines[i]);
    REQUIRE(words.size() == 2);
    CHECK(words[1].find_first_not_of("0123456789") == std::string::npos);
    stats[words[0]] = words[1];
  }
  for (const char* name : {"uptime_ms", "connections", "commands", "commits", "commits_inline",
                           "commits_waited", "transactions", "sending", "in_flight", "scheduled",
                           "succeeded", "failed", "ready", "leased", "dead_letters"}) {
    INFO(name);
    CHECK(stats.count(name) == 1);
  }
  CHECK(stats["connections"] == "2");
  CHECK(std::stoull(stats["commands"]) >= 11);
  CHECK(std::stoull(stats["commits"]) >= 1);
  CHECK(std::stoull(stats["commits_inline"]) <= std::stoull(stats["commits"]));
  CHECK(std::stoull(stats["commits_waited"]) <= std::stoull(stats["commits"]));
  CHECK(stats["transactions"] == "6");
  CHECK(stats["sending"] == "2");
  CHECK(stats["in_flight"] == "1");
  CHECK(stats["scheduled"] == "1");
  CHECK(stats["succeeded"] == "1");
  CHECK(stats["failed"] == "1");
  CHECK(stats["ready"] == "1");
  CHECK(stats["leased"] == "1");
  CHECK(stats["dead_letters"] == "0");
  CHECK(starts_with(c.command("STATS x"), "ERR BAD_COMMAND "));
}

TEST_CASE("PING replies PONG, QUIT replies BYE and closes, AUTH without a token file is OK") {
  ServerProcess server;
  RawClient c(server.port());
  CHECK(c.command("PING") == "PONG");
  CHECK(c.command("AUTH anything") == "OK");
  CHECK(c.command("GET x") == "NOT_FOUND x");
  CHECK(c.command("QUIT") == "BYE");
  CHECK(c.is_closed_by_peer());

  // Commands pipelined after QUIT are not answered.
  RawClient p(server.port());
  p.send("PING\r\nQUIT\r\nPING\r\n");
  CHECK(p.read_line() == "PONG");
  CHECK(p.read_line() == "BYE");
  CHECK(p.is_closed_by_peer());

  // BYE waits for the commit of a mutating command before it: order holds.
  RawClient m(server.port());
  m.send("ENQUEUE q tx-q 1\r\nx\r\nQUIT\r\n");
  CHECK(m.read_line() == "CREATED tx-q SENDING 0 1 0");
  CHECK(m.read_line() == "BYE");
  CHECK(m.is_closed_by_peer());
  RawClient n(server.port());
  CHECK(n.command("GET tx-q").find(" state=SENDING ") != std::string::npos);
}

TEST_CASE("AUTH with --auth-token-file: every command but PING, AUTH and QUIT needs the token") {
  TempDir secrets;
  const std::string token_file = secrets.sub("token");
  {
    std::ofstream out(token_file);
    out << "s3cret-token\n";
  }
  REQUIRE(chmod(token_file.c_str(), 0600) == 0);
  ServerProcess server({"--auth-token-file", token_file});
  RawClient c(server.port());

  CHECK(c.command("PING") == "PONG");
  for (const char* line :
       {"RESERVE q", "SENT tx 1", "RELEASE tx 1", "RESPOND tx 1 SUCCESS", "RESOLVE tx FAILED",
        "GET tx", "HISTORY tx", "DEADLETTERS q", "REDRIVE q tx", "CONFIG q", "STATS", "BACKUP"}) {
    INFO(line);
    CHECK(starts_with(c.command(line), "ERR UNAUTHORIZED "));
  }
  // The payload of a refused ENQUEUE is read and discarded: still in step.
  CHECK(starts_with(c.enqueue("q tx", "PING\r\n"), "ERR UNAUTHORIZED "));
  CHECK(c.command("PING") == "PONG");
  CHECK(c.command("AUTH wrong") == "ERR UNAUTHORIZED wrong token");
  CHECK(c.command("AUTH s3cret-token-and-more") == "ERR UNAUTHORIZED wrong token");
  CHECK(starts_with(c.command("GET tx"), "ERR UNAUTHORIZED "));
  CHECK(c.command("AUTH s3cret-token") == "OK");
  CHECK(c.command("GET tx") == "NOT_FOUND tx");
  CHECK(c.enqueue("q tx") == "CREATED tx SENDING 0 1 0");
  CHECK(starts_with(c.command("CONFIG q"), "CONFIG q "));

  // Authentication belongs to one connection.
  RawClient other(server.port());
  CHECK(starts_with(other.command("GET tx"), "ERR UNAUTHORIZED "));
  CHECK(other.command("QUIT") == "BYE");
  CHECK(other.is_closed_by_peer());
}

TEST_SUITE_END();

}  // namespace
}  // namespace tarde::testing

TEST_CASE("a token file that others can read is refused at start, with a line saying why") {
  tarde::testing::TempDir secrets;
  const std::string token_file = secrets.sub("token");
  {
    std::ofstream out(token_file);
    out << "s3cret-token\n";
  }
  REQUIRE(chmod(token_file.c_str(), 0644) == 0);
  bool refused = false;
  try {
    tarde::testing::ServerProcess server({"--auth-token-file", token_file});
  } catch (const std::runtime_error& e) {
    refused = true;
    CHECK(std::string(e.what()).find("readable by others; chmod 600 it") != std::string::npos);
  }
  CHECK(refused);
}
