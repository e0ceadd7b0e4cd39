#pragma once

#include <cstdint>

namespace tarde {

// Clock is the engine's only source of time, injected so that every rule that
// depends on time is tested on a fake clock without sleeping. Wall time is
// what gets persisted (UTC milliseconds since the epoch); steady time measures
// intervals and never jumps. Implementations must be cheap to call.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t now_wall_ms() const = 0;
  virtual int64_t now_steady_ms() const = 0;
};

// ManualClock is a Clock that moves only when told to: the fake clock of
// tests and the deterministic harnesses. Single-threaded.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t wall_ms = 1'700'000'000'000) : wall_ms_(wall_ms) {}
  int64_t now_wall_ms() const override {
    const int64_t now = wall_ms_;
    wall_ms_ += step_per_reading_ms_;
    steady_ms_ += step_per_reading_ms_;
    return now;
  }
  int64_t now_steady_ms() const override { return steady_ms_; }
  void advance_ms(int64_t ms) {
    wall_ms_ += ms;
    steady_ms_ += ms;
  }
  void set_wall_ms(int64_t wall_ms) { wall_ms_ = wall_ms; }
  // Moves the clock this much after every reading of wall time, so that a
  // test sees each reading a piece of code makes (0: never).
  void set_step_per_reading_ms(int64_t ms) { step_per_reading_ms_ = ms; }

 private:
  mutable int64_t wall_ms_;
  mutable int64_t steady_ms_ = 0;
  int64_t step_per_reading_ms_ = 0;
};

}  // namespace tarde
