#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace tarde::net::http {

// One second of what the dashboard charts.
struct RateSample {
  int64_t at_ms = 0;        // wall time at the end of the second
  uint64_t handed_out = 0;  // requests handed out by RESERVE
  // Answers accepted by RESPOND, indexed by engine::Answer.
  std::array<uint64_t, 4> answers{};
  uint64_t retries_fired = 0;  // scheduled retries that fired
  double lateness_p99_ms = 0;  // of the retries fired that second; 0 when none
  double lateness_max_ms = 0;  // the latest of them
};

// RateHistory keeps the per-second figures of the last 15 minutes in memory
// (a ring of kSamples samples; nothing is persisted, a restart starts it
// empty) and each queue's hand-out rate. It is fed every transition
// (on_transition) and closed once a second (tick), both on the io thread,
// which owns it; it reads no clock: tick() is given the time and the engine's
// hand-out counts, so tests drive it directly.
class RateHistory {
 public:
  // 15 minutes of one-second samples.
  static constexpr size_t kSamples = 900;
  // Lateness values kept per second to compute its p99: a burst of more
  // fires keeps every n-th, so memory stays bounded however many fire.
  static constexpr size_t kLatenessKept = 8192;
  // The hand-out rate of a queue is an exponentially weighted average with
  // this time constant: it follows a change within a few polls of the page
  // without jumping with every second's noise.
  static constexpr double kRateTimeConstantSeconds = 10.0;

  void on_transition(const engine::TransitionNote& note);
  // Closes the second ending at `now_ms`: `handed_out_by_queue` are the
  // engine's totals since its start (QueueFigures::handed_out); counts that
  // went down (the engine reloaded after a failed commit) count as zero.
  void tick(int64_t now_ms, const std::map<std::string, uint64_t>& handed_out_by_queue);

  // The samples newer than `after_ms`, oldest first.
  std::vector<RateSample> since(int64_t after_ms) const;
  // Hand-outs per second of a queue, smoothed; 0 for a queue never seen.
  double handout_rate(const std::string& queue) const;

 private:
  struct QueueRate {
    uint64_t last_total = 0;
    double per_second = 0;
  };
  std::deque<RateSample> samples_;
  RateSample current_;
  std::vector<double> lateness_;
  uint64_t lateness_seen_ = 0;
  std::map<std::string, QueueRate> queues_;
};

// The p-th percentile (0 < p <= 1) of `values` by the nearest-rank method;
// 0 when empty. Reorders `values`.
double percentile(std::vector<double>& values, double p);

}  // namespace tarde::net::http
