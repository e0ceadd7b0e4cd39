#include "net/core/transition_log.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace tarde::net {
using storage::TxState;

TransitionLog::TransitionLog(Figures& figures)
    : answers_(figures.counter({.name = "answers_total",
                                .kind = FigureKind::kCounter,
                                .help = "Answers accepted by RESPOND, by queue and outcome.",
                                .labels = {"queue", "outcome"}})),
      retries_scheduled_(
          figures.counter({.name = "retries_scheduled_total",
                           .kind = FigureKind::kCounter,
                           .help = "Transitions into SCHEDULED after a first attempt."})),
      failures_(figures.counter({.name = "failures_total",
                                 .kind = FigureKind::kCounter,
                                 .help = "Transactions that ended FAILED, by reason.",
                                 .labels = {"reason"},
                                 // Reasons are the clients' words: the first
                                 // 100 are shown, later ones count as other.
                                 .label_sets_max = 100})),
      dead_letters_(figures.counter({.name = "dead_lettered_total",
                                     .kind = FigureKind::kCounter,
                                     .help = "Requests dead-lettered since start, by queue.",
                                     .labels = {"queue"}})),
      lateness_ms_(figures.histogram({.name = "timer_lateness_ms",
                                      .kind = FigureKind::kHistogram,
                                      .help = "How late retries fired after their instant, in ms."},
                                     {1, 2, 5, 10, 50, 100, 1000, 10000})) {}

void TransitionLog::on_transition(const engine::TransitionNote& note) {
  const storage::TxRecord& after = *note.after;
  const TxState from = note.before ? note.before->state : TxState::kNone;
  spdlog::debug(
      "transition tx_id={} queue={} attempt={} next_attempt={} from={} to={} cause={}{}{}",
      after.tx_id, after.queue, after.attempt, after.next_attempt, storage::to_string(from),
      storage::to_string(after.state), note.cause,
      note.reason.empty() ? "" : " reason=", note.reason);
  if (note.answer) answers_.add({after.queue, engine::answer_name(*note.answer)});
  if (after.state == TxState::kScheduled && from != TxState::kNone) retries_scheduled_.add();
  if (after.state == TxState::kFailed && from != TxState::kFailed) {
    failures_.add({after.reason});
    spdlog::warn("alert: transaction {} of queue {} FAILED at attempt {} reason={}", after.tx_id,
                 after.queue, after.attempt, after.reason);
  }
  if (after.dead_lettered && !(note.before && note.before->dead_lettered)) {
    const bool first = dead_letters_.value({after.queue}) == 0;
    dead_letters_.add({after.queue});
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

}  // namespace tarde::net
