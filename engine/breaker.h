#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace tarde::engine {

// Breaker is a queue's circuit breaker: when the external service answers
// TRANSIENT to at least half of the last 30 s's answers (at least 20 of
// them), the queue stops handing out requests for 30 s, then lets one probe
// out at a time until a non-transient answer closes it. It protects a service
// that is down from the retries meant to help it. Pure; single-threaded.
class Breaker {
 public:
  enum class State { kClosed, kOpen, kHalfOpen };

  // Window, threshold and open time of PROTOCOL.md's RESERVE section.
  static constexpr int64_t kWindowMs = 30'000;
  static constexpr int64_t kOpenMs = 30'000;
  static constexpr uint32_t kMinAnswers = 20;

  // An answer came back for this queue.
  void record(int64_t now_ms, bool transient);
  // Whether a request may be handed out now; moves open → half-open on time.
  bool allows(int64_t now_ms);
  // A request was handed out: in half-open it is the probe.
  void on_hand_out();
  // The probe's delivery ended without an answer: another may go.
  void on_probe_lost() { probe_out_ = false; }
  State state(int64_t now_ms);
  // When an open breaker lets a probe out.
  int64_t opens_until_ms() const { return open_until_ms_; }
  uint64_t times_opened() const { return times_opened_; }

 private:
  static constexpr int64_t kBucketMs = 1'000;
  static constexpr size_t kBuckets = kWindowMs / kBucketMs;
  struct Bucket {
    int64_t second = -1;
    uint32_t answers = 0;
    uint32_t transients = 0;
  };

  void open(int64_t now_ms);
  void clear_window() { window_ = {}; }

  State state_ = State::kClosed;
  int64_t open_until_ms_ = 0;
  bool probe_out_ = false;
  uint64_t times_opened_ = 0;
  std::array<Bucket, kBuckets> window_{};
};

}  // namespace tarde::engine
