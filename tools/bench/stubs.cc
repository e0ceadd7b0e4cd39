#include "tools/bench/adapters.h"
#include "tools/bench/report.h"
#include "tools/bench/workloads.h"
namespace tarde::bench {
int run_w2_deferred(const Options&) { return 2; }
int run_w3_burst(const Options&) { return 2; }
int run_w4_load(const Options&) { return 2; }
int run_w4_restart(const Options&) { return 2; }
int run_w5_churn(const Options&) { return 2; }
int print_report(const std::string&) { return 2; }
}
