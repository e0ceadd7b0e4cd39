// Guarantees 1 (a reply seen is an effect kept), 2 (attempts 1, 2, ...
// without gaps, never above max_attempts) and 5 (nothing stuck).
#include "tools/crash/checks.h"

#include <set>

namespace tarde::crash {
namespace detail {
namespace {

// The server keeps a transaction's first event and its newest history_max
// − 1 (PROTOCOL.md, HISTORY), and marks where it dropped events: the event
// after them carries `dropped=N`. The harness reads that from the protocol,
// as any client would. An operation sent no later than the last event that
// carries a marker may have left its event among the dropped ones: it
// cannot be looked for.
bool may_be_trimmed(const Op& op, const std::vector<client::TxEvent>& history) {
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    if (it->dropped_before != 0) return op.send_us / 1000 <= it->at_ms;
  }
  return false;
}

// Replies that report a transition the server made for this request.
bool acknowledged_transition(const Op& op) {
  if (op.outcome != OpOutcome::kReplied) return false;
  if (op.kind == OpKind::kGet) return false;
  const client::ReplyKind s = op.summary.status;
  return s == client::ReplyKind::kCreated || s == client::ReplyKind::kOk ||
         s == client::ReplyKind::kBuried;
}

// Finds an unused history event that is this acknowledged transition.
bool match_event(const Op& op, const std::vector<client::TxEvent>& history,
                 std::vector<bool>& used) {
  for (size_t i = 0; i < history.size(); ++i) {
    const client::TxEvent& e = history[i];
    if (used[i] || e.cause != op_name(op.kind) || e.to != op.summary.state) continue;
    if (e.attempt != op.summary.attempt || e.next_attempt != op.summary.next_attempt) continue;
    // The event's time is the server's clock at the commit, between the
    // client's send and its receipt of the reply (1 ms of rounding each side).
    if (e.at_ms < op.send_us / 1000 - 1 || e.at_ms > op.recv_us / 1000 + 1) continue;
    used[i] = true;
    return true;
  }
  return false;
}

// Whether a reply the clients had received before `before_us` shows that
// attempt `attempt` was answered for good: the transaction was terminal, or a
// later attempt had gone out or been scheduled. (IN_FLIGHT `attempt` is not
// enough: a TRANSIENT answer schedules the same attempt again.)
const Op* answered_before(uint32_t attempt, int64_t before_us, const TxLog& log) {
  for (const Op& seen : log.ops) {
    if (seen.outcome != OpOutcome::kReplied || seen.recv_us >= before_us) continue;
    const client::Summary& s = seen.summary;
    if (s.status == client::ReplyKind::kNotFound) continue;
    if (is_terminal(s.state) || s.attempt > attempt || s.next_attempt > attempt) return &seen;
  }
  return nullptr;
}

}  // namespace

std::string describe(const Op& op) {
  std::string text = std::string(op_name(op.kind)) + " " + op.tx_id;
  if (op.attempt != 0) text += " " + std::to_string(op.attempt);
  if (!op.word.empty()) text += " " + op.word;
  if (op.deliberate) text += " (deliberately late/duplicate)";
  text +=
      " sent at " + std::to_string(op.send_us / 1000) + " by client " + std::to_string(op.client);
  switch (op.outcome) {
    case OpOutcome::kPending:
      return text + ", pending";
    case OpOutcome::kError:
      return text + ", got ERR " + op.error;
    case OpOutcome::kReplied:
      break;
  }
  const client::Summary& s = op.summary;
  return text + ", got " + client::reply_kind_name(s.status) + " " + s.state + " " +
         std::to_string(s.attempt) + " " + std::to_string(s.next_attempt) + " " +
         std::to_string(s.next_fire_at_ms) + " at " + std::to_string(op.recv_us / 1000);
}

void check_kept(const std::string& id, const TxLog& log, const FinalTx& final,
                CheckReport& report) {
  const TxPlan& plan = *log.plan;
  std::vector<bool> used(final.history.size(), false);
  for (const Op& op : log.ops) {
    if (op.outcome != OpOutcome::kReplied || op.summary.status == client::ReplyKind::kNotFound) {
      if (op.outcome == OpOutcome::kReplied && op.kind != OpKind::kGet) {
        report.checks += 1;
        add_violation(report, "G1", id,
                      "the transaction was not found although created: " + describe(op));
      }
      continue;
    }
    report.checks += 1;
    if (!final.found) {
      add_violation(report, "G1", id,
                    "acknowledged, but GET answers NOT_FOUND at the end: " + describe(op));
      return;
    }
    if (is_terminal(op.summary.state)) {
      report.checks += 1;
      if (final.info.state != op.summary.state) {
        add_violation(
            report, "G1", id,
            "acknowledged terminal state lost, now " + final.info.state + ": " + describe(op));
      }
    }
    if (acknowledged_transition(op) && !may_be_trimmed(op, final.history)) {
      report.checks += 1;
      if (!match_event(op, final.history, used)) {
        add_violation(report, "G1", id,
                      "HISTORY lacks the acknowledged transition of " + describe(op));
      }
    }
    if (op.kind == OpKind::kEnqueue && op.summary.status == client::ReplyKind::kCreated) {
      report.checks += 1;
      if (final.info.queue != plan.queue || final.info.max_attempts != plan.max_attempts ||
          final.info.payload_bytes != plan.payload.size()) {
        add_violation(report, "G1", id,
                      "created with queue " + plan.queue + ", max_attempts " +
                          std::to_string(plan.max_attempts) + ", " +
                          std::to_string(plan.payload.size()) + " payload bytes; GET shows " +
                          final.info.queue + ", " + std::to_string(final.info.max_attempts) + ", " +
                          std::to_string(final.info.payload_bytes));
      }
    }
    // An acknowledged retry is eventually handed out, or resolved before.
    // (An answer may also reach it while it is SENDING, before any hand-out:
    // then HISTORY shows that the timer fired it.)
    if (acknowledged_transition(op) && op.summary.state == "SCHEDULED") {
      report.checks += 1;
      const int64_t sent_ms = op.send_us / 1000;
      bool honoured = false;
      for (const HandOut& h : log.hand_outs) {
        honoured = honoured || (h.attempt == op.summary.next_attempt &&
                                h.recv_us / 1000 >= op.summary.next_fire_at_ms);
      }
      for (const client::TxEvent& e : final.history) {
        const bool resolved = e.from == "SCHEDULED" && e.cause == "RESOLVE";
        const bool fired = e.from == "SCHEDULED" && e.cause == "timer" &&
                           e.next_attempt == op.summary.next_attempt;
        honoured = honoured || ((resolved || fired) && e.at_ms >= sent_ms - 1);
      }
      if (!honoured && !may_be_trimmed(op, final.history)) {
        add_violation(report, "G1", id,
                      "the acknowledged retry was never handed out nor resolved: " + describe(op));
      }
    }
  }
  for (const HandOut& h : log.hand_outs) {
    report.checks += 1;
    if (h.payload != plan.payload || h.key != id + "#" + std::to_string(h.attempt)) {
      add_violation(report, "G1", id,
                    "attempt " + std::to_string(h.attempt) + " was handed out with key " + h.key +
                        " and a payload of " + std::to_string(h.payload.size()) +
                        " bytes that is not the enqueued one");
    }
  }
}

void check_attempts(const std::string& id, const TxLog& log, const FinalTx& final,
                    CheckReport& report) {
  std::set<uint32_t> out;
  for (const HandOut& h : log.hand_outs) {
    out.insert(h.attempt);
    // At-least-once allows an attempt to go out again only while it waits on
    // its answer; a RESERVE written after the clients saw it answered must
    // not get it. (Added with tests/tools/crash_checks_test.cc: before, no
    // check looked at a duplicate hand-out at all.)
    report.checks += 1;
    if (const Op* answered = answered_before(h.attempt, h.reserve_send_us, log)) {
      add_violation(report, "G2", id,
                    "attempt " + std::to_string(h.attempt) + " was handed out again at " +
                        std::to_string(h.recv_us / 1000) + " to a RESERVE sent after " +
                        describe(*answered));
    }
  }
  if (log.plan->sent && final.found) out.insert(1);
  const uint32_t max_attempts = final.found ? final.info.max_attempts : log.plan->max_attempts;
  for (const uint32_t attempt : out) {
    report.checks += 1;
    if (attempt == 0 || attempt > max_attempts) {
      add_violation(report, "G2", id,
                    "attempt " + std::to_string(attempt) + " was handed out; max_attempts is " +
                        std::to_string(max_attempts));
    }
    if (attempt > 1 && out.count(attempt - 1) == 0) {
      add_violation(report, "G2", id,
                    "attempt " + std::to_string(attempt) + " was handed out but attempt " +
                        std::to_string(attempt - 1) + " never went out");
    }
  }
}

void check_settled(const std::string& id, const TxLog& log, const FinalTx& final,
                   CheckReport& report) {
  (void)log;
  if (!final.found) return;  // never created: its ENQUEUE was pending (G1 checks the rest)
  report.checks += 1;
  const std::string& state = final.info.state;
  if (is_terminal(state)) return;
  if (state == "SENDING" && final.dead_lettered) return;
  add_violation(report, "G5", id,
                "stuck after the drain: " + state + " attempt " +
                    std::to_string(final.info.attempt) + " next_attempt " +
                    std::to_string(final.info.next_attempt) + " next_fire_at " +
                    std::to_string(final.info.next_fire_at_ms) +
                    (state == "SENDING" ? " (its request is not dead-lettered)" : ""));
}

}  // namespace detail

CheckReport check_guarantees(const std::map<std::string, TxLog>& logs,
                             const std::map<std::string, FinalTx>& finals) {
  CheckReport report;
  for (const auto& [id, log] : logs) {
    if (!log.plan) continue;
    auto it = finals.find(id);
    if (it == finals.end() || !it->second.read) {
      report.violations.push_back(Violation{"G1", id, "could not read the transaction at the end"});
      continue;
    }
    const FinalTx& final = it->second;
    detail::check_kept(id, log, final, report);
    detail::check_attempts(id, log, final, report);
    detail::check_fire_times(id, log, final, report);
    detail::check_stale(id, log, report);
    detail::check_history_rows(id, final, report);
    detail::check_settled(id, log, final, report);
  }
  return report;
}

}  // namespace tarde::crash
