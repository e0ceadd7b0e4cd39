#include "net/server/transition_log.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace tarde::net {
namespace {

using storage::TxState;

// The answer a RESPOND transition carried, read from where it led.
std::string answer_of(const engine::TransitionNote& note) {
  const storage::TxRecord& after = *note.after;
  if (after.state == TxState::kSucceeded) return "SUCCESS";
  if (after.state == TxState::kScheduled) {
    return after.next_attempt == after.attempt ? "TRANSIENT" : "CANCELLED";
  }
  if (note.reason == engine::kReasonExhausted || note.reason == engine::kReasonDeadline) {
    return "CANCELLED";
  }
  if (note.reason == engine::kReasonTransientExhausted) return "TRANSIENT";
  return "REJECTED";
}

}  // namespace

void TransitionLog::on_transition(const engine::TransitionNote& note) {
  const storage::TxRecord& after = *note.after;
  const TxState from = note.before ? note.before->state : TxState::kNone;
  spdlog::debug(
      "transition tx_id={} queue={} attempt={} next_attempt={} from={} to={} cause={}{}{}",
      after.tx_id, after.queue, after.attempt, after.next_attempt, storage::to_string(from),
      storage::to_string(after.state), note.cause,
      note.reason.empty() ? "" : " reason=", note.reason);
  if (note.cause == "RESPOND") answers_[{after.queue, answer_of(note)}] += 1;
  if (after.state == TxState::kScheduled && from != TxState::kNone) retries_scheduled_ += 1;
  if (after.state == TxState::kFailed && from != TxState::kFailed) {
    failures_by_reason_[after.reason] += 1;
    spdlog::warn("alert: transaction {} of queue {} FAILED at attempt {} reason={}", after.tx_id,
                 after.queue, after.attempt, after.reason);
  }
  if (after.dead_lettered && !(note.before && note.before->dead_lettered)) {
    const bool first = dead_letters_[after.queue]++ == 0;
    if (first) {
      spdlog::error("alert: first dead letter of queue {}: {}#{} after {} deliveries ({})",
                    after.queue, after.tx_id, after.next_attempt, after.deliveries, note.reason);
    } else {
      spdlog::warn("alert: dead letter in queue {}: {}#{} after {} deliveries ({})", after.queue,
                   after.tx_id, after.next_attempt, after.deliveries, note.reason);
    }
  }
  if (note.cause == "timer" && note.before && note.before->state == TxState::kScheduled) {
    // A retry moved ahead of its instant (--retry-lead) is not late.
    lateness_ms_.observe(static_cast<double>(
        std::max<int64_t>(0, after.updated_at_ms - note.before->next_fire_at_ms)));
  }
}

std::string TransitionLog::render_metrics() const {
  std::string out;
  out += "# HELP tarde_answers_total Answers accepted by RESPOND, by queue and outcome.\n";
  out += "# TYPE tarde_answers_total counter\n";
  for (const auto& [key, n] : answers_) {
    out += "tarde_answers_total{queue=\"" + key.first + "\",outcome=\"" + key.second + "\"} " +
           std::to_string(n) + "\n";
  }
  out += "# TYPE tarde_retries_scheduled_total counter\n";
  out += "tarde_retries_scheduled_total " + std::to_string(retries_scheduled_) + "\n";
  out += "# HELP tarde_failures_total Transactions that ended FAILED, by reason.\n";
  out += "# TYPE tarde_failures_total counter\n";
  for (const auto& [reason, n] : failures_by_reason_) {
    out += "tarde_failures_total{reason=\"" + reason + "\"} " + std::to_string(n) + "\n";
  }
  out += "# TYPE tarde_dead_lettered_total counter\n";
  for (const auto& [queue, n] : dead_letters_) {
    out += "tarde_dead_lettered_total{queue=\"" + queue + "\"} " + std::to_string(n) + "\n";
  }
  out += lateness_ms_.render("tarde_timer_lateness_ms",
                             "How late retries fired after their instant, in ms.");
  return out;
}

}  // namespace tarde::net
