#pragma once

#include <cstdint>
#include <string>
#include <vector>

// Latency samples of one operation and their percentiles. Values are kept
// whole (a run has at most a few million), so percentiles are exact.
namespace tarde::bench {

// The p-th quantile (0..1) of `values`, reordering them; 0 when empty.
int64_t percentile(std::vector<int64_t>& values, double p);
int64_t maximum(const std::vector<int64_t>& values);

// Prints "RESULT <workload> <label> <connections> <metric> <value> <unit>",
// one tab-separated line on stdout, which `tarde-bench report` renders.
struct ResultSink {
  std::string workload;
  std::string label;
  int connections = 0;
  void emit(const std::string& metric, double value, const std::string& unit) const;
};

// A job count as a workload's name shows it: 500, 20k, 1M, 10M.
std::string count_label(uint64_t count);

// Emits <name>_p50, _p99 (and _max when with_max) in milliseconds.
void emit_percentiles(const ResultSink& sink, const std::string& name,
                      std::vector<int64_t>& values_us, bool with_max);

}  // namespace tarde::bench
