#pragma once

#include <algorithm>
#include <cstdint>

namespace tarde::engine {

// TokenBucket paces a queue's hand-outs to its `rate` (requests per second),
// so that a burst of due retries never reaches the external service faster
// than it can take. It holds at most one second's worth of tokens (at least
// one) and starts with a single token, so a freshly configured queue does not
// release a burst. A rate of 0 means unlimited. Pure; single-threaded.
class TokenBucket {
 public:
  void configure(double rate, int64_t now_ms) {
    rate_ = rate;
    tokens_ = 1.0;
    refilled_at_ms_ = now_ms;
  }

  // Takes one token when one is there.
  bool try_take(int64_t now_ms) {
    if (rate_ <= 0) return true;
    refill(now_ms);
    if (tokens_ < 1.0) return false;
    tokens_ -= 1.0;
    return true;
  }

  // When the next token will be there (now_ms when it already is).
  int64_t next_token_ms(int64_t now_ms) {
    if (rate_ <= 0) return now_ms;
    refill(now_ms);
    if (tokens_ >= 1.0) return now_ms;
    const double missing_ms = (1.0 - tokens_) * 1000.0 / rate_;
    return now_ms + std::max<int64_t>(1, static_cast<int64_t>(missing_ms + 0.999));
  }

 private:
  void refill(int64_t now_ms) {
    if (now_ms <= refilled_at_ms_) return;
    const double capacity = std::max(rate_, 1.0);
    tokens_ = std::min(capacity, tokens_ + (now_ms - refilled_at_ms_) * rate_ / 1000.0);
    refilled_at_ms_ = now_ms;
  }

  double rate_ = 0;
  double tokens_ = 1.0;
  int64_t refilled_at_ms_ = 0;
};

}  // namespace tarde::engine
