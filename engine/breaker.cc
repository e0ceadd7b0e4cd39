#include "engine/breaker.h"

namespace tarde::engine {

void Breaker::record(int64_t now_ms, bool transient) {
  if (state_ == State::kOpen) return;  // answers to requests sent before it opened
  if (state_ == State::kHalfOpen) {
    probe_out_ = false;
    if (transient) {
      open(now_ms);
    } else {
      state_ = State::kClosed;
      clear_window();
    }
    return;
  }
  const int64_t second = now_ms / kBucketMs;
  Bucket& bucket = window_[static_cast<size_t>(second) % kBuckets];
  if (bucket.second != second) bucket = Bucket{second, 0, 0};
  bucket.answers += 1;
  bucket.transients += transient ? 1 : 0;
  uint32_t answers = 0;
  uint32_t transients = 0;
  for (const Bucket& b : window_) {
    if (b.second < 0 || second - b.second >= static_cast<int64_t>(kBuckets)) continue;
    answers += b.answers;
    transients += b.transients;
  }
  if (answers >= kMinAnswers && 2 * transients >= answers) open(now_ms);
}

bool Breaker::allows(int64_t now_ms) {
  switch (state(now_ms)) {
    case State::kClosed:
      return true;
    case State::kOpen:
      return false;
    case State::kHalfOpen:
      return !probe_out_;
  }
  return true;
}

void Breaker::on_hand_out() {
  if (state_ == State::kHalfOpen) probe_out_ = true;
}

Breaker::State Breaker::state(int64_t now_ms) {
  if (state_ == State::kOpen && now_ms >= open_until_ms_) {
    state_ = State::kHalfOpen;
    probe_out_ = false;
  }
  return state_;
}

void Breaker::open(int64_t now_ms) {
  state_ = State::kOpen;
  open_until_ms_ = now_ms + kOpenMs;
  probe_out_ = false;
  times_opened_ += 1;
  clear_window();
}

}  // namespace tarde::engine
