// The crash harness's checkers (tools/crash/checks.h) fed histories written
// by hand: a clean lifecycle must pass, and the same lifecycle with one
// planted violation must be reported under the guarantee it breaks. Without
// these a checker that never fires would let every campaign pass.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "tools/crash/checks.h"
#include "tools/crash/recorder.h"

namespace tarde::crash {
namespace {

using client::ReplyKind;

const std::string kId = "TX-7";
// Server instants (epoch ms); client times are these in microseconds.
constexpr int64_t kT0 = 1'700'000'000'000;
constexpr int64_t kFireAt = kT0 + 500;  // when the retry of attempt 2 is due

int64_t us(int64_t ms_after_t0) { return (kT0 + ms_after_t0) * 1000; }

client::Summary summary(ReplyKind status, const std::string& state, uint32_t attempt,
                        uint32_t next_attempt, int64_t next_fire_at_ms = 0) {
  return client::Summary{status, kId, state, attempt, next_attempt, next_fire_at_ms};
}

// A request the client sent at `sent` ms after kT0 and whose reply came back
// 2 ms later.
Op replied(OpKind kind, uint32_t attempt, const std::string& word, int64_t sent,
           const client::Summary& s) {
  Op op;
  op.kind = kind;
  op.tx_id = kId;
  op.attempt = attempt;
  op.word = word;
  op.client = 1;
  op.send_us = us(sent);
  op.recv_us = us(sent + 2);
  op.outcome = OpOutcome::kReplied;
  op.summary = s;
  return op;
}

HandOut hand_out(uint32_t attempt, int64_t reserve_sent, int64_t received) {
  HandOut h;
  h.tx_id = kId;
  h.attempt = attempt;
  h.deliveries = 0;
  h.key = kId + "#" + std::to_string(attempt);
  h.payload = "pay";
  h.client = 2;
  h.reserve_send_us = us(reserve_sent);
  h.recv_us = us(received);
  return h;
}

client::TxEvent event(int64_t at, const std::string& from, const std::string& to, uint32_t attempt,
                      uint32_t next_attempt, const std::string& cause) {
  client::TxEvent e;
  e.at_ms = kT0 + at;
  e.from = from;
  e.to = to;
  e.attempt = attempt;
  e.next_attempt = next_attempt;
  e.cause = cause;
  return e;
}

// One transaction's records: what the clients saw and what the server shows.
struct History {
  std::map<std::string, TxLog> logs;
  std::map<std::string, FinalTx> finals;
  TxLog& log() { return logs[kId]; }
  FinalTx& final() { return finals[kId]; }
  CheckReport check() const { return check_guarantees(logs, finals); }
};

// A normal lifecycle with max_attempts=3: ENQUEUE, attempt 1 handed out,
// SENT, answered CANCELLED (retry of attempt 2 at kFireAt), the timer fires,
// attempt 2 handed out, SENT, answered SUCCESS. Every event HISTORY shows is
// one the clients were told of, at a time between their send and receipt.
History clean_history() {
  History h;
  TxLog& log = h.log();
  log.plan = TxPlan{"q", 3, false, 0, "pay"};
  log.ops = {
      replied(OpKind::kEnqueue, 0, "", 0, summary(ReplyKind::kCreated, "SENDING", 0, 1)),
      replied(OpKind::kSent, 1, "", 20, summary(ReplyKind::kOk, "IN_FLIGHT", 1, 0)),
      replied(OpKind::kRespond, 1, "CANCELLED", 30,
              summary(ReplyKind::kOk, "SCHEDULED", 1, 2, kFireAt)),
      replied(OpKind::kSent, 2, "", 510, summary(ReplyKind::kOk, "IN_FLIGHT", 2, 0)),
      replied(OpKind::kRespond, 2, "SUCCESS", 520, summary(ReplyKind::kOk, "SUCCEEDED", 2, 0)),
  };
  log.hand_outs = {hand_out(1, 10, 11), hand_out(2, 505, 506)};

  FinalTx& final = h.final();
  final.read = true;
  final.found = true;
  final.info.tx_id = kId;
  final.info.queue = "q";
  final.info.state = "SUCCEEDED";
  final.info.attempt = 2;
  final.info.max_attempts = 3;
  final.info.payload_bytes = 3;
  final.history = {
      event(1, "", "SENDING", 0, 1, "ENQUEUE"),
      event(21, "SENDING", "IN_FLIGHT", 1, 0, "SENT"),
      event(31, "IN_FLIGHT", "SCHEDULED", 1, 2, "RESPOND"),
      event(500, "SCHEDULED", "SENDING", 1, 2, "timer"),
      event(511, "SENDING", "IN_FLIGHT", 2, 0, "SENT"),
      event(521, "IN_FLIGHT", "SUCCEEDED", 2, 0, "RESPOND"),
  };
  return h;
}

std::string listed(const CheckReport& report) {
  std::string text;
  for (const Violation& v : report.violations) {
    text += v.guarantee + " " + v.tx_id + ": " + v.text + "\n";
  }
  return text;
}

// Whether `report` holds a violation of `guarantee` about kId.
bool reported(const CheckReport& report, const std::string& guarantee) {
  for (const Violation& v : report.violations) {
    if (v.guarantee == guarantee && v.tx_id == kId) return true;
  }
  return false;
}

TEST_CASE("crash checks: the clean lifecycle breaks no guarantee") {
  const CheckReport report = clean_history().check();
  INFO(listed(report));
  CHECK(report.violations.empty());
  CHECK(report.checks > 10);
}

TEST_CASE("crash checks: lost acknowledgement, the created transaction is gone") {
  History h = clean_history();
  h.final().found = false;
  h.final().info = client::TxInfo{};
  h.final().history.clear();
  const CheckReport report = h.check();
  INFO(listed(report));
  CHECK(reported(report, "G1"));
  CHECK(report.violations.size() == 1);
}

TEST_CASE("crash checks: lost acknowledgement, the acknowledged SUCCEEDED is now FAILED") {
  History h = clean_history();
  h.final().info.state = "FAILED";
  h.final().history.back().to = "FAILED";
  const CheckReport report = h.check();
  INFO(listed(report));
  CHECK(reported(report, "G1"));
  for (const Violation& v : report.violations) CHECK(v.guarantee == "G1");
}

TEST_CASE("crash checks: lost acknowledgement, HISTORY lacks an acknowledged transition") {
  History h = clean_history();
  // The SUCCESS the client was told of left no event: HISTORY shows the
  // transaction settled by the dispatcher's answer a second later instead.
  h.final().history.back().at_ms = kT0 + 1521;
  const CheckReport report = h.check();
  INFO(listed(report));
  CHECK(reported(report, "G1"));
  CHECK(report.violations.size() == 1);
}

TEST_CASE("crash checks: an acknowledged transition among the events HISTORY dropped is no loss") {
  // history_max dropped the first SENT and RESPOND: the event after them
  // carries the marker, so neither their absence nor the broken chain is a
  // violation.
  History h = clean_history();
  auto& history = h.final().history;
  history.erase(history.begin() + 1, history.begin() + 3);
  history[1].dropped_before = 2;
  const CheckReport report = h.check();
  INFO(listed(report));
  CHECK(report.violations.empty());
  // Without the marker the same history loses two acknowledged transitions.
  history[1].dropped_before = 0;
  const CheckReport unmarked = h.check();
  INFO(listed(unmarked));
  CHECK(reported(unmarked, "G1"));
  CHECK(reported(unmarked, "G4"));
}

TEST_CASE("crash checks: duplicate hand-out of an attempt already answered") {
  History h = clean_history();
  // Attempt 1 handed out again to a RESERVE written after its answer had
  // been acknowledged (SCHEDULED for attempt 2).
  h.log().hand_outs.push_back(hand_out(1, 40, 41));
  const CheckReport report = h.check();
  INFO(listed(report));
  CHECK(reported(report, "G2"));
  CHECK(report.violations.size() == 1);
}

TEST_CASE("crash checks: duplicate hand-out after the transaction succeeded") {
  History h = clean_history();
  h.log().hand_outs.push_back(hand_out(2, 600, 601));
  const CheckReport report = h.check();
  INFO(listed(report));
  CHECK(reported(report, "G2"));
  CHECK(report.violations.size() == 1);
}

TEST_CASE("crash checks: a redelivery before the answer is at-least-once, not a violation") {
  History h = clean_history();
  // The first holder's lease failed; attempt 1 went out again, same key.
  h.log().hand_outs.push_back(hand_out(1, 15, 16));
  const CheckReport report = h.check();
  INFO(listed(report));
  CHECK(report.violations.empty());
}

TEST_CASE("crash checks: attempt 1 handed out again after a TRANSIENT answer is no violation") {
  History h = clean_history();
  // TRANSIENT does not spend the attempt: attempt 1 is scheduled again and
  // goes out a second time with the same key.
  TxLog& log = h.log();
  log.ops[2] = replied(OpKind::kRespond, 1, "TRANSIENT", 30,
                       summary(ReplyKind::kOk, "SCHEDULED", 1, 1, kFireAt));
  log.ops[3] = replied(OpKind::kSent, 1, "", 510, summary(ReplyKind::kOk, "IN_FLIGHT", 1, 0));
  log.ops[4] =
      replied(OpKind::kRespond, 1, "SUCCESS", 520, summary(ReplyKind::kOk, "SUCCEEDED", 1, 0));
  log.hand_outs[1] = hand_out(1, 505, 506);
  FinalTx& final = h.final();
  final.info.attempt = 1;
  final.history[2].next_attempt = 1;
  final.history[3].next_attempt = 1;
  final.history[4].attempt = 1;
  final.history[5].attempt = 1;
  const CheckReport report = h.check();
  INFO(listed(report));
  CHECK(report.violations.empty());
  CHECK(report.checks > 10);
}

TEST_CASE("crash checks: early fire, a retry handed out before its next_fire_at") {
  History h = clean_history();
  h.log().hand_outs[1] = hand_out(2, 494, 495);
  const CheckReport report = h.check();
  INFO(listed(report));
  CHECK(reported(report, "G3"));
  CHECK(report.violations.size() == 1);
}

TEST_CASE("crash checks: early fire, HISTORY shows the timer fired beyond the lead") {
  History h = clean_history();
  h.final().history[3].at_ms = kFireAt - 50;
  const CheckReport report = h.check();
  INFO(listed(report));
  CHECK(reported(report, "G3"));
  CHECK(report.violations.size() == 1);
}

TEST_CASE("crash checks: state going back, a terminal state followed by a non-terminal one") {
  History h = clean_history();
  h.final().history.push_back(event(600, "SUCCEEDED", "SENDING", 2, 3, "REDRIVE"));
  h.final().info.state = "SENDING";
  const CheckReport report = h.check();
  INFO(listed(report));
  CHECK(reported(report, "G4"));
}

TEST_CASE("crash checks: state going back, HISTORY rows whose chain breaks") {
  History h = clean_history();
  // After SCHEDULED, a row that starts from IN_FLIGHT again.
  h.final().history[3].from = "IN_FLIGHT";
  h.final().history[3].cause = "timer";
  h.final().history[3].to = "SCHEDULED";
  const CheckReport report = h.check();
  INFO(listed(report));
  CHECK(reported(report, "G4"));
}

TEST_CASE("crash checks: state going back, an attempt number that goes back") {
  History h = clean_history();
  h.final().history[4].attempt = 1;  // SENT of attempt 2 recorded as attempt 1
  const CheckReport report = h.check();
  INFO(listed(report));
  CHECK(reported(report, "G4"));
}

TEST_CASE("crash checks: an attempt beyond max_attempts") {
  History h = clean_history();
  // Created with max_attempts=1, yet CANCELLED scheduled a second attempt.
  h.log().plan->max_attempts = 1;
  h.final().info.max_attempts = 1;
  const CheckReport report = h.check();
  INFO(listed(report));
  CHECK(reported(report, "G2"));
  CHECK(report.violations.size() == 1);
}

TEST_CASE("crash checks: a late answer refused STALE is counted and changes nothing") {
  History h = clean_history();
  Op late = replied(OpKind::kRespond, 1, "CANCELLED", 40,
                    summary(ReplyKind::kStale, "SCHEDULED", 1, 2, kFireAt));
  late.deliberate = true;
  h.log().ops.push_back(late);
  const CheckReport report = h.check();
  INFO(listed(report));
  CHECK(report.violations.empty());
  CHECK(report.late_messages == 1);
  CHECK(report.late_refused_stale == 1);
}

TEST_CASE("crash checks: a late answer that changed something") {
  History h = clean_history();
  // A duplicate SUCCESS for attempt 2 after the client saw SUCCEEDED, answered
  // OK as if it applied: the server moved the transaction again.
  Op late =
      replied(OpKind::kRespond, 2, "SUCCESS", 540, summary(ReplyKind::kOk, "SUCCEEDED", 2, 0));
  late.deliberate = true;
  h.log().ops.push_back(late);
  const CheckReport report = h.check();
  INFO(listed(report));
  CHECK(reported(report, "G4"));
  CHECK(report.late_messages == 1);
  CHECK(report.late_refused_stale == 0);
}

TEST_CASE("crash checks: a transaction that could not be read at the end") {
  History h = clean_history();
  h.final().read = false;
  const CheckReport report = h.check();
  INFO(listed(report));
  CHECK(reported(report, "G1"));
  CHECK(report.violations.size() == 1);
}

TEST_CASE("crash checks: a transaction stuck after the drain") {
  History h = clean_history();
  // The last answer never came: IN_FLIGHT forever.
  h.log().ops.pop_back();
  h.final().history.pop_back();
  h.final().info.state = "IN_FLIGHT";
  const CheckReport report = h.check();
  INFO(listed(report));
  CHECK(reported(report, "G5"));
  CHECK(report.violations.size() == 1);
}

}  // namespace
}  // namespace tarde::crash
