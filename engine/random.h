#pragma once

#include <cstdint>
#include <random>

namespace tarde::engine {

// Random is the engine's only source of chance (the jitter of waits), injected
// so that tests can pin the draws. The jittered instant is drawn once and
// persisted, so a replay never draws again.
class Random {
 public:
  virtual ~Random() = default;
  // A number uniform in [0, 1).
  virtual double next_unit() = 0;
};

// SeededRandom draws from a 64-bit Mersenne Twister. Single-threaded.
class SeededRandom final : public Random {
 public:
  explicit SeededRandom(uint64_t seed) : generator_(seed) {}
  double next_unit() override { return distribution_(generator_); }

 private:
  std::mt19937_64 generator_;
  std::uniform_real_distribution<double> distribution_{0.0, 1.0};
};

// FixedRandom returns the same draw every time: tests use 0, 0.5 and the
// largest value below 1 to pin the low, middle and high end of the jitter.
class FixedRandom final : public Random {
 public:
  explicit FixedRandom(double unit) : unit_(unit) {}
  double next_unit() override { return unit_; }
  void set(double unit) { unit_ = unit; }

 private:
  double unit_;
};

}  // namespace tarde::engine
