#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace tarde {

// Histogram counts observations into fixed buckets and renders them in the
// Prometheus text format (cumulative `_bucket{le=...}`, `_sum`, `_count`).
// Fixed buckets keep it allocation-free on the hot path. io thread only.
template <size_t N>
class Histogram {
 public:
  explicit Histogram(std::array<double, N> upper_bounds) : bounds_(upper_bounds) {}

  void observe(double value) {
    for (size_t i = 0; i < N; ++i) {
      if (value <= bounds_[i]) counts_[i] += 1;
    }
    count_ += 1;
    sum_ += value;
  }

  // HELP, TYPE and samples of metric `name`.
  std::string render(const std::string& name, const std::string& help) const {
    std::string out = "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
    for (size_t i = 0; i < N; ++i) {
      out += name + "_bucket{le=\"" + format(bounds_[i]) + "\"} " + std::to_string(counts_[i]) +
             "\n";
    }
    out += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
    out += name + "_sum " + format(sum_) + "\n";
    out += name + "_count " + std::to_string(count_) + "\n";
    return out;
  }

 private:
  static std::string format(double value) {
    std::string text = std::to_string(value);
    text.erase(text.find_last_not_of('0') + 1);
    if (!text.empty() && text.back() == '.') text.pop_back();
    return text;
  }

  std::array<double, N> bounds_;
  std::array<uint64_t, N> counts_{};
  uint64_t count_ = 0;
  double sum_ = 0;
};

}  // namespace tarde
