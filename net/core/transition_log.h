#pragma once

#include "base/figures.h"
#include "engine/engine.h"

namespace tarde::net {

// TransitionLog turns the engine's transitions into what operators watch:
// a debug log line for every transition, an alert line (warn) for every
// FAILED transaction and every dead letter (the first of a queue as an
// error), and the counters of answers, failures, dead letters and retry
// lateness, declared in the server's figure registry. io thread only; the
// registry must outlive it.
class TransitionLog {
 public:
  explicit TransitionLog(Figures& figures);
  void on_transition(const engine::TransitionNote& note);

 private:
  Counter& answers_;            // by queue and outcome
  Counter& retries_scheduled_;  // by queue
  Counter& failures_;           // by queue and reason
  Counter& dead_letters_;       // by queue, since start
  // How late retries fired after their instant, in seconds, by queue.
  HistogramFigure& lateness_seconds_;
};

}  // namespace tarde::net
