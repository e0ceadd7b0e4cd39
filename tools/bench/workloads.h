#pragma once

#include "tools/bench/run.h"

// The workloads of docs/benchmarks.md. Each opens its connections, drives
// them, checks the ledger and the server's pending count, prints RESULT
// lines, and returns the process exit code (0 ok, 1 a failed run or check).
namespace tarde::bench {

int run_w1_cycle(const Options& options);
int run_w2_deferred(const Options& options);
int run_w3_burst(const Options& options);
int run_w4_load(const Options& options);
int run_w4_restart(const Options& options);
int run_w5_churn(const Options& options);
// Drives tarde's store directly (no server, no connections): see w4_index.cc.
int run_w4_index(const Options& options);

}  // namespace tarde::bench
