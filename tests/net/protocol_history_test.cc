// HISTORY over the real protocol against the real `tarde serve` binary: the
// whole life of a transaction with retries, lease expiries and TRANSIENT
// answers, every fire with its due instant and lateness, and history_max
// keeping the first event and the newest with the dropped marker. Times are
// wall-clock with generous upper bounds and no earliness allowed.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/support/raw_client.h"
#include "tests/support/server_process.h"

namespace tarde::testing {
namespace {

// Real processes and wall-clock waits: select with -ts=protocol, skip with -tse=protocol.
TEST_SUITE_BEGIN("protocol");

// How late a fire may come and still pass: generous, for loaded machines.
constexpr int64_t kLatenessMs = 2000;
// tarde serve's default --retry-lead: a retry's move may come this early.
constexpr int64_t kRetryLeadMs = 10;
constexpr int64_t kLeaseMs = 200;

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// One expected event: its row of the state machine and, for a fire, the
// window its due instant must lie in (exact for a retry: RESPOND announced
// it; for a lease, between the RESERVE's send and reply plus the lease).
struct Expected {
  std::string from, to, attempt, next_attempt, cause, reason;
  int64_t due_min = 0;
  int64_t due_max = 0;  // 0: not a fire
};

}  // namespace

TEST_CASE("proof over the protocol: four attempts, two TRANSIENTs each, three lease expiries") {
  ServerProcess server;
  RawClient d(server.port());
  REQUIRE(starts_with(d.command("CONFIG q lease=200ms base=50ms factor=1 jitter=0 "
                                "transient_base=50ms transient_factor=1"),
                      "CONFIG q "));
  REQUIRE(d.enqueue("q TX-P") == "CREATED TX-P SENDING 0 1 0");
  std::vector<Expected> expected = {{"-", "SENDING", "0", "1", "ENQUEUE", "-"}};
  auto reserve = [&](uint32_t attempt, uint32_t deliveries) {
    const int64_t sent_at = wall_ms();
    const Request r = d.request("RESERVE q wait=5s");
    REQUIRE(r.is_request);
    CHECK(r.tx_id == "TX-P");
    CHECK(r.attempt == attempt);
    CHECK(r.handouts == deliveries);
    return std::pair{sent_at, r.received_at_ms};
  };
  // Answers attempt k and expects the retry RESPOND announces to fire.
  auto answer = [&](uint32_t k, const std::string& outcome, const std::string& reason,
                    uint32_t next) {
    const std::string a = std::to_string(k);
    CHECK(d.command("SENT TX-P " + a) == "OK TX-P IN_FLIGHT " + a + " 0 0");
    expected.push_back({"SENDING", "IN_FLIGHT", a, "0", "SENT", "-"});
    const Summary s = parse_summary(d.command("RESPOND TX-P " + a + " " + outcome +
                                              (reason.empty() ? "" : " reason=" + reason)));
    CHECK(s.status == "OK");
    if (next == 0) {
      CHECK(s.state == "SUCCEEDED");
      expected.push_back({"IN_FLIGHT", "SUCCEEDED", a, "0", "RESPOND", "-"});
      return;
    }
    CHECK(s.state == "SCHEDULED");
    CHECK(s.next_attempt == next);
    const std::string n = std::to_string(next);
    expected.push_back({"IN_FLIGHT", "SCHEDULED", a, n, "RESPOND", reason});
    expected.push_back(
        {"SCHEDULED", "SENDING", a, n, "timer", "-", s.next_fire_at, s.next_fire_at});
  };
  for (uint32_t k = 1; k <= 4; ++k) {
    CAPTURE(k);
    const std::string before = std::to_string(k - 1);
    const std::string a = std::to_string(k);
    const auto [sent_at, received_at] = reserve(k, 1);
    if (k <= 3) {  // this hand-out's lease runs out; the request comes back
      expected.push_back({"SENDING", "SENDING", before, a, "lease", "LEASE_EXPIRED",
                          sent_at + kLeaseMs, received_at + kLeaseMs});
      reserve(k, 2);
    }
    for (int t = 0; t < 2; ++t) {
      answer(k, "TRANSIENT", "HTTP_503", k);
      reserve(k, 1);
    }
    answer(k, k < 4 ? "CANCELLED" : "SUCCESS", k < 4 ? "NOT_NOW" : "", k < 4 ? k + 1 : 0);
  }
  CHECK(d.command("RESERVE q") == "EMPTY");
  REQUIRE(expected.size() == 39);

  const std::vector<std::string> history = d.block("HISTORY TX-P");
  REQUIRE(history.size() == expected.size() + 1);
  CHECK(history[0] == "EVENTS 39");
  int64_t previous_at = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO(history[i + 1]);
    const auto e = parse_fields(history[i + 1]);
    const Expected& x = expected[i];
    CHECK(e.at("from") == x.from);
    CHECK(e.at("to") == x.to);
    CHECK(e.at("attempt") == x.attempt);
    CHECK(e.at("next_attempt") == x.next_attempt);
    CHECK(e.at("cause") == x.cause);
    CHECK(e.at("reason") == x.reason);
    CHECK(e.at("seq") == std::to_string(i));
    CHECK(e.count("dropped") == 0);
    const int64_t at = std::stoll(e.at("at"));
    CHECK(at >= previous_at);
    previous_at = at;
    if (x.due_max == 0) {
      CHECK(e.at("due") == "-");
      CHECK(e.at("late") == "-");
      continue;
    }
    const int64_t due = std::stoll(e.at("due"));
    const int64_t late = std::stoll(e.at("late"));
    CHECK(due >= x.due_min);
    CHECK(due <= x.due_max);
    CHECK(late == std::max<int64_t>(0, at - due));
    CHECK(late < kLatenessMs);
    // A retry moves at most the retry lead early; a lease never ends early.
    CHECK(at >= due - (x.cause == "timer" ? kRetryLeadMs : 0));
  }
}

TEST_CASE("HISTORY under a small history_max: the first event, the newest, and dropped=N") {
  ServerProcess server;
  RawClient c(server.port());
  REQUIRE(starts_with(c.command("CONFIG q history_max=3"), "CONFIG q "));
  REQUIRE(c.enqueue("q TX-B") == "CREATED TX-B SENDING 0 1 0");
  for (int i = 0; i < 4; ++i) {  // each RELEASE writes one event
    REQUIRE(c.request("RESERVE q").is_request);
    REQUIRE(c.command("RELEASE TX-B 1 reason=BUSY_" + std::to_string(i)) ==
            "OK TX-B SENDING 0 1 0");
  }
  const std::vector<std::string> history = c.block("HISTORY TX-B");
  REQUIRE(history.size() == 4);
  CHECK(history[0] == "EVENTS 3");
  const auto first = parse_fields(history[1]);
  CHECK(first.at("cause") == "ENQUEUE");
  CHECK(first.at("seq") == "0");
  CHECK(first.count("dropped") == 0);
  const auto after_gap = parse_fields(history[2]);
  CHECK(after_gap.at("seq") == "3");
  CHECK(after_gap.at("dropped") == "2");  // events 1 and 2 are no longer kept
  CHECK(after_gap.at("reason") == "BUSY_2");
  const auto newest = parse_fields(history[3]);
  CHECK(newest.at("seq") == "4");
  CHECK(newest.at("reason") == "BUSY_3");
  CHECK(newest.count("dropped") == 0);
  // limit keeps the newest of those; the marker stays on its event.
  const std::vector<std::string> limited = c.block("HISTORY TX-B limit=2");
  REQUIRE(limited.size() == 3);
  CHECK(parse_fields(limited[1]).at("dropped") == "2");
  CHECK(parse_fields(limited[2]).at("seq") == "4");
}

TEST_SUITE_END();

}  // namespace tarde::testing
