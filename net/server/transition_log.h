#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "engine/engine.h"
#include "base/histogram.h"

namespace tarde::net {

// TransitionLog turns the engine's transitions into what operators watch:
// a debug log line for every transition, an alert line (warn) for every
// FAILED transaction and every dead letter (the first of a queue as an
// error), and the counters behind the metrics page. io thread only.
class TransitionLog {
 public:
  void on_transition(const engine::TransitionNote& note);
  // The counters as Prometheus text (HELP/TYPE and samples).
  std::string render_metrics() const;

 private:
  std::map<std::pair<std::string, std::string>, uint64_t> answers_;  // (queue, outcome)
  std::map<std::string, uint64_t> failures_by_reason_;
  std::map<std::string, uint64_t> dead_letters_;  // by queue, since start
  uint64_t retries_scheduled_ = 0;
  // How late retries fired after their instant, in ms.
  Histogram<8> lateness_ms_{{1, 2, 5, 10, 50, 100, 1000, 10000}};
};

}  // namespace tarde::net
