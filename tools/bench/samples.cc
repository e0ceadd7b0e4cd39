#include "tools/bench/samples.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>

namespace tarde::bench {

int64_t percentile(std::vector<int64_t>& values, double p) {
  if (values.empty()) return 0;
  const size_t index =
      std::min(values.size() - 1, static_cast<size_t>(p * static_cast<double>(values.size())));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(index),
                   values.end());
  return values[index];
}

int64_t maximum(const std::vector<int64_t>& values) {
  return values.empty() ? 0 : *std::max_element(values.begin(), values.end());
}

std::string count_label(uint64_t count) {
  if (count >= 1'000'000 && count % 1'000'000 == 0) return std::to_string(count / 1'000'000) + "M";
  if (count >= 1000 && count % 1000 == 0) return std::to_string(count / 1000) + "k";
  return std::to_string(count);
}

void ResultSink::emit(const std::string& metric, double value, const std::string& unit) const {
  std::printf("RESULT\t%s\t%s\t%d\t%s\t%.6g\t%s\n", workload.c_str(), label.c_str(), connections,
              metric.c_str(), value, unit.c_str());
  std::fflush(stdout);
}

void emit_percentiles(const ResultSink& sink, const std::string& name,
                      std::vector<int64_t>& values_us, bool with_max) {
  sink.emit(name + "_p50", percentile(values_us, 0.50) / 1000.0, "ms");
  sink.emit(name + "_p99", percentile(values_us, 0.99) / 1000.0, "ms");
  if (with_max) sink.emit(name + "_max", maximum(values_us) / 1000.0, "ms");
}

}  // namespace tarde::bench
