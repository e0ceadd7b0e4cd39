// Guarantees 3 (no retry handed out before the next_fire_at announced) and 4
// (stale, duplicate and late messages change nothing), plus the legality of
// every transition HISTORY shows.
#include <set>
#include <tuple>

#include "tools/crash/checks.h"
#include "tools/crash/server_control.h"

namespace tarde::crash::detail {
namespace {

// The reply announced the creation of attempt `next_attempt` as a retry
// scheduled at next_fire_at: no hand-out of that attempt can precede it.
bool creates_attempt(const Op& op) {
  if (op.outcome != OpOutcome::kReplied || op.summary.state != "SCHEDULED") return false;
  if (op.kind == OpKind::kEnqueue) return op.summary.status == client::ReplyKind::kCreated;
  return op.kind == OpKind::kRespond && op.summary.status == client::ReplyKind::kOk &&
         op.summary.next_attempt == op.attempt + 1;
}

// Whether what the clients had seen before `op` was sent proves that `op`
// (SENT or RESPOND of op.attempt) cannot apply when the server handles it.
bool known_stale(const Op& op, const TxLog& log) {
  const uint32_t n = op.attempt;
  bool in_flight_n = false;
  for (const Op& seen : log.ops) {
    if (seen.outcome != OpOutcome::kReplied || seen.recv_us >= op.send_us) continue;
    const client::Summary& s = seen.summary;
    if (s.status == client::ReplyKind::kNotFound) continue;
    if (is_terminal(s.state)) return true;
    if (s.attempt > n || s.next_attempt > n) return true;
    // Scheduled for n at T: nothing can make n applicable before T, and the
    // server handled `op` before its reply arrived.
    if (s.state == "SCHEDULED" && s.next_attempt == n && op.recv_us / 1000 < s.next_fire_at_ms) {
      return true;
    }
    if (s.state == "IN_FLIGHT" && s.attempt == n) in_flight_n = true;
  }
  if (op.kind != OpKind::kSent || !in_flight_n) return false;
  // SENT n while IN_FLIGHT n is stale unless a TRANSIENT answer for n could
  // have sent n out again first (response timeouts are off).
  for (const Op& other : log.ops) {
    if (other.kind == OpKind::kRespond && other.attempt == n && other.word == "TRANSIENT" &&
        other.send_us <= op.recv_us) {
      return false;
    }
  }
  return true;
}

// A STALE reply whose own summary shows a state in which the message applies.
bool wrongly_stale(const Op& op) {
  const client::Summary& s = op.summary;
  // A SENDING summary with a next_fire_at is a retry queued ahead of that
  // instant (--retry-lead): until then nothing applies to it.
  const bool sending = s.state == "SENDING" && s.next_attempt == op.attempt &&
                       s.next_fire_at_ms <= op.send_us / 1000;
  if (op.kind == OpKind::kSent) return sending;
  return (s.state == "IN_FLIGHT" && s.attempt == op.attempt) || sending;
}

// (from, cause, to) rows PROTOCOL.md's state machine allows.
bool allowed_row(const std::string& from, const std::string& cause, const std::string& to) {
  static const std::set<std::tuple<std::string, std::string, std::string>> rows = {
      {"-", "ENQUEUE", "SENDING"},           {"-", "ENQUEUE", "IN_FLIGHT"},
      {"-", "ENQUEUE", "SCHEDULED"},         {"SENDING", "SENT", "IN_FLIGHT"},
      {"IN_FLIGHT", "RESPOND", "SUCCEEDED"}, {"IN_FLIGHT", "RESPOND", "FAILED"},
      {"IN_FLIGHT", "RESPOND", "SCHEDULED"}, {"SENDING", "RESPOND", "SUCCEEDED"},
      {"SENDING", "RESPOND", "FAILED"},      {"SENDING", "RESPOND", "SCHEDULED"},
      {"SENDING", "RELEASE", "SENDING"},     {"SENDING", "lease", "SENDING"},
      {"SCHEDULED", "timer", "SENDING"},     {"IN_FLIGHT", "timer", "SCHEDULED"},
      {"IN_FLIGHT", "timer", "FAILED"},      {"SCHEDULED", "RESOLVE", "SUCCEEDED"},
      {"SCHEDULED", "RESOLVE", "FAILED"},    {"SENDING", "RESOLVE", "SUCCEEDED"},
      {"SENDING", "RESOLVE", "FAILED"},      {"SENDING", "REDRIVE", "SENDING"},
  };
  return rows.count({from.empty() ? "-" : from, cause, to}) != 0;
}

std::string describe_event(const client::TxEvent& e) {
  return "event at=" + std::to_string(e.at_ms) + " from=" + (e.from.empty() ? "-" : e.from) +
         " to=" + e.to + " attempt=" + std::to_string(e.attempt) +
         " next_attempt=" + std::to_string(e.next_attempt) + " cause=" + e.cause;
}

// The attempt a SENT or RESPOND event must carry, given the state before it.
bool attempt_follows(const client::TxEvent& before, const client::TxEvent& e) {
  if (e.cause == "SENT") return e.attempt == before.next_attempt;
  if (e.cause == "RESPOND") {
    return before.to == "IN_FLIGHT" ? e.attempt == before.attempt
                                    : e.attempt == before.next_attempt;
  }
  if (e.cause == "timer" && before.to == "SCHEDULED") return e.next_attempt == before.next_attempt;
  return e.attempt >= before.attempt;
}

}  // namespace

void check_fire_times(const std::string& id, const TxLog& log, const FinalTx& final,
                      CheckReport& report) {
  for (const Op& op : log.ops) {
    if (op.outcome != OpOutcome::kReplied || op.summary.state != "SCHEDULED") continue;
    const uint32_t attempt = op.summary.next_attempt;
    const int64_t fire_at_ms = op.summary.next_fire_at_ms;
    // The server's own record: a retry of this attempt fired after the reply
    // came back moved to SENDING no earlier than --retry-lead before the
    // instant the reply announced (its hand-out, checked below, not at all).
    for (const client::TxEvent& e : final.history) {
      if (e.cause != "timer" || e.from != "SCHEDULED" || e.next_attempt != attempt) continue;
      if (e.at_ms <= op.recv_us / 1000) continue;
      report.checks += 1;
      if (e.at_ms < fire_at_ms - kRetryLeadMs) {
        add_violation(report, "G3", id,
                      "HISTORY shows attempt " + std::to_string(attempt) + " fired at " +
                          std::to_string(e.at_ms) + ", " + std::to_string(fire_at_ms - e.at_ms) +
                          " ms before the next_fire_at announced by " + describe(op) +
                          " (--retry-lead " + std::to_string(kRetryLeadMs) + "ms)");
      }
    }
    const bool created = creates_attempt(op);
    for (const HandOut& h : log.hand_outs) {
      if (h.attempt != attempt) continue;
      // Without a creation, only hand-outs asked for after this reply came
      // back are known to follow it.
      if (!created && h.reserve_send_us <= op.recv_us) continue;
      report.checks += 1;
      const int64_t recv_ms = h.recv_us / 1000;
      if (recv_ms < fire_at_ms) {
        add_violation(report, "G3", id,
                      "attempt " + std::to_string(attempt) + " handed out at " +
                          std::to_string(recv_ms) + ", " + std::to_string(fire_at_ms - recv_ms) +
                          " ms before the next_fire_at announced by " + describe(op));
      }
    }
  }
}

void check_stale(const std::string& id, const TxLog& log, CheckReport& report) {
  for (const Op& op : log.ops) {
    if (op.kind != OpKind::kSent && op.kind != OpKind::kRespond) continue;
    if (op.outcome != OpOutcome::kReplied) continue;
    const client::ReplyKind status = op.summary.status;
    if (op.deliberate) {
      report.late_messages += 1;
      if (status == client::ReplyKind::kStale) report.late_refused_stale += 1;
    }
    report.checks += 1;
    if (status == client::ReplyKind::kOk && known_stale(op, log)) {
      add_violation(report, "G4", id,
                    "a message the clients knew to be stale was accepted: " + describe(op));
    }
    report.checks += 1;
    if (status == client::ReplyKind::kStale && wrongly_stale(op)) {
      add_violation(report, "G4", id,
                    "answered STALE although its own summary shows it applies: " + describe(op));
    }
  }
}

void check_history_rows(const std::string& id, const FinalTx& final, CheckReport& report) {
  const std::vector<client::TxEvent>& history = final.history;
  for (size_t i = 0; i < history.size(); ++i) {
    const client::TxEvent& e = history[i];
    report.checks += 1;
    if (!allowed_row(e.from, e.cause, e.to)) {
      add_violation(report, "G4", id,
                    "HISTORY shows a transition the state machine forbids: " + describe_event(e));
      continue;
    }
    // The first event, and one after events the server no longer keeps
    // (its `dropped` marker), have no shown predecessor to follow.
    if (i == 0 || e.dropped_before != 0) continue;
    const client::TxEvent& before = history[i - 1];
    if (e.from != before.to || !attempt_follows(before, e) || e.at_ms < before.at_ms) {
      add_violation(report, "G4", id,
                    "HISTORY " + describe_event(e) + " does not follow " + describe_event(before));
    }
  }
  if (final.found && !history.empty()) {
    report.checks += 1;
    if (history.back().to != final.info.state) {
      add_violation(report, "G1", id,
                    "GET shows " + final.info.state + " but HISTORY ends in " + history.back().to);
    }
  }
}

}  // namespace tarde::crash::detail
