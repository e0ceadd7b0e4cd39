#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tarde::engine {

// TokenBucket paces a queue's hand-outs to its `rate` (requests per second),
// so that a burst of due retries never reaches the external service faster
// than it can take. It holds at most kBurstMs worth of tokens (at least one)
// and starts with a single token: after a quiet hour, a million due retries
// still leave at `rate`, not with a second's worth at once. A rate of 0 means
// unlimited. Pure; single-threaded.
class TokenBucket {
 public:
  // The most a queue may hand out above its rate after being idle: 50 ms
  // worth, well within the protocol's bound of one second's worth.
  static constexpr double kBurstMs = 50;

  void configure(double rate, int64_t now_ms) {
    rate_ = rate;
    if (rate_ <= 0) return;
    interval_ms_ = 1000.0 / rate_;
    tolerance_ms_ = (std::max(rate_ * kBurstMs / 1000.0, 1.0) - 1.0) * interval_ms_;
    // A single token to start with: the first request may leave now, the
    // next one interval later.
    theoretical_ms_ = static_cast<double>(now_ms) + tolerance_ms_;
  }

  // Takes one token when one is there.
  bool try_take(int64_t now_ms) {
    if (rate_ <= 0) return true;
    const double now = static_cast<double>(now_ms);
    if (now + kSlackMs < theoretical_ms_ - tolerance_ms_) return false;
    theoretical_ms_ = std::max(theoretical_ms_, now) + interval_ms_;
    return true;
  }

  // When the next token will be there (now_ms when it already is).
  int64_t next_token_ms(int64_t now_ms) const {
    if (rate_ <= 0) return now_ms;
    const double at = theoretical_ms_ - tolerance_ms_ - kSlackMs;
    return std::max(now_ms, static_cast<int64_t>(std::ceil(at)));
  }

 private:
  // Absorbs floating-point rounding in the sum of intervals.
  static constexpr double kSlackMs = 1e-6;

  // The generic cell rate algorithm: a token is there when now reaches the
  // theoretical arrival time minus the burst tolerance. Unlike a refilled
  // float counter it loses no fraction of a token however it is polled.
  double rate_ = 0;
  double interval_ms_ = 0;
  double tolerance_ms_ = 0;
  double theoretical_ms_ = 0;
};

}  // namespace tarde::engine
