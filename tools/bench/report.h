#pragma once

#include <string>

namespace tarde::bench {
// Reads the RESULT lines of a results file (the stdout of the workloads) and
// prints one markdown table per workload and connection count: a row per
// metric, a column per system, each peer's value with its ratio to tarde.
// A line may end with a round number (scripts/bench --rounds): then each cell
// is the median over the rounds, and each ratio the median of the rounds'
// ratios.
// Returns the exit code.
int print_report(const std::string& path);
}  // namespace tarde::bench
