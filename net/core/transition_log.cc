#include "net/core/transition_log.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/log_record.h"

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
                           .help = "Transitions into SCHEDULED after a first attempt, by queue.",
                           .labels = {"queue"}})),
      failures_(figures.counter({.name = "failures_total",
                                 .kind = FigureKind::kCounter,
                                 .help = "Transactions that ended FAILED, by queue and reason.",
                                 .labels = {"queue", "reason"},
                                 // Reasons are the clients' words: the first
                                 // 100 label sets are shown, later reasons
                                 // count as other in their queue.
                                 .label_sets_max = 100,
                                 .kept_labels = {"queue"}})),
      dead_letters_(figures.counter({.name = "dead_lettered_total",
                                     .kind = FigureKind::kCounter,
                                     .help = "Requests dead-lettered since start, by queue.",
                                     .labels = {"queue"}})),
      lateness_seconds_(figures.histogram(
          {.name = "timer_lateness_seconds",
           .kind = FigureKind::kHistogram,
           .help = "How late retries fired after their instant, in seconds, by queue.",
           .labels = {"queue"}},
          {0.001, 0.002, 0.005, 0.01, 0.05, 0.1, 1, 10})) {}

void TransitionLog::on_transition(const engine::TransitionNote& note) {
  const storage::TxRecord& after = *note.after;
  const TxState from = note.before ? note.before->state : TxState::kNone;
  if (spdlog::should_log(spdlog::level::debug)) {  // a record per transition costs allocations
    LogRecord record("transition");
    record.text("tx", after.tx_id)
        .text("queue", after.queue)
        .number("attempt", after.attempt)
        .number("next_attempt", after.next_attempt)
        .text("from", storage::to_string(from))
        .text("state", storage::to_string(after.state))
        .text("cause", note.cause);
    if (!note.reason.empty()) record.text("reason", note.reason);
    spdlog::debug(record.line());
  }
  if (note.answer) answers_.add({after.queue, engine::answer_name(*note.answer)});
  if (after.state == TxState::kScheduled && from != TxState::kNone)
    retries_scheduled_.add({after.queue});
  if (after.state == TxState::kFailed && from != TxState::kFailed) {
    failures_.add({after.queue, after.reason});
    spdlog::warn(LogRecord("alert.failed")
                     .text("tx", after.tx_id)
                     .text("queue", after.queue)
                     .text("state", storage::to_string(after.state))
                     .number("attempt", after.attempt)
                     .text("reason", after.reason)
                     .line());
  }
  if (after.dead_lettered && !(note.before && note.before->dead_lettered)) {
    const bool first = dead_letters_.value({after.queue}) == 0;
    dead_letters_.add({after.queue});
    const std::string record = LogRecord(first ? "alert.first_dead_letter" : "alert.dead_letter")
                                   .text("tx", after.tx_id)
                                   .text("queue", after.queue)
                                   .number("attempt", after.next_attempt)
                                   .number("deliveries", after.deliveries)
                                   .text("reason", note.reason)
                                   .line();
    if (first) {
      spdlog::error(record);
    } else {
      spdlog::warn(record);
    }
  }
  if (note.cause == "timer" && note.before && note.before->state == TxState::kScheduled) {
    // A retry moved ahead of its instant (--retry-lead) is not late.
    const int64_t late_ms =
        std::max<int64_t>(0, after.updated_at_ms - note.before->next_fire_at_ms);
    lateness_seconds_.observe({after.queue}, static_cast<double>(late_ms) / 1000.0);
  }
}

}  // namespace tarde::net
