// tarde-bench: one load generator for tarde and the systems people would use
// instead (beanstalkd, Redis, PostgreSQL). See docs/benchmarks.md.
//
//   tarde-bench w1|w2|w3|w4-load|w4-restart|w5 --system S --port P [options]
//   tarde-bench w4-index --count N --data-dir DIR   (tarde's store alone, no server)
//   tarde-bench cycle --port P ...        (W1 against tarde, the old usage)
//   tarde-bench report RESULTS-FILE       (markdown tables with ratios to tarde)
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "tools/bench/report.h"
#include "tools/bench/workloads.h"

namespace {

using tarde::bench::Options;

int usage() {
  std::fputs(
      "usage: tarde-bench WORKLOAD --system tarde|beanstalkd|redis|postgres --port P [options]\n"
      "       tarde-bench w4-index --count N --data-dir NEW-DIR  (retry index after N fires)\n"
      "       tarde-bench cycle --port P [options]     (w1 against tarde)\n"
      "       tarde-bench report RESULTS-FILE\n"
      "workloads: w1 (full cycle), w2 (deferred retry), w3 (burst), w4-load and w4-restart\n"
      "           (scale and crash restart), w5 (churn)\n"
      "options: --host H --label NAME --connections N --seconds S --payload BYTES\n"
      "         --server-pid PID --data-dir DIR --rate R --count N --delay-ms MS\n"
      "         --sample-s S --since-ns NS --poll-ms MS --claim-batch N --queue Q\n",
      stderr);
  return 2;
}

bool parse_flags(const std::vector<std::string>& args, Options* o) {
  for (size_t i = 1; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) return false;
    const std::string& flag = args[i];
    const std::string& value = args[i + 1];
    const double number = std::strtod(value.c_str(), nullptr);
    if (flag == "--system")
      o->target.system = value;
    else if (flag == "--label")
      o->label = value;
    else if (flag == "--host")
      o->target.host = value;
    else if (flag == "--port")
      o->target.port = static_cast<uint16_t>(number);
    else if (flag == "--queue")
      o->target.queue = value;
    else if (flag == "--payload")
      o->target.payload_bytes = static_cast<size_t>(number);
    else if (flag == "--poll-ms")
      o->target.poll_interval_ms = static_cast<int>(number);
    else if (flag == "--claim-batch")
      o->target.claim_batch = std::max(1, static_cast<int>(number));
    else if (flag == "--connections")
      o->connections = std::max(1, static_cast<int>(number));
    else if (flag == "--seconds")
      o->seconds = number;
    else if (flag == "--server-pid")
      o->server_pid = static_cast<int>(number);
    else if (flag == "--data-dir")
      o->data_dir = value;
    else if (flag == "--rate")
      o->rate = number;
    else if (flag == "--count")
      o->count = std::strtoull(value.c_str(), nullptr, 10);
    else if (flag == "--delay-ms")
      o->delay_ms = static_cast<int64_t>(number);
    else if (flag == "--sample-s")
      o->sample_seconds = number;
    else if (flag == "--since-ns")
      o->since_ns = std::strtoll(value.c_str(), nullptr, 10);
    else
      return false;
  }
  return o->target.port != 0 || o->workload == "w4-index";
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage();
  if (args[0] == "report") {
    return args.size() == 2 ? tarde::bench::print_report(args[1]) : usage();
  }
  Options options;
  options.workload = args[0] == "cycle" ? "w1" : args[0];
  options.target.system = "tarde";
  if (!parse_flags(args, &options)) return usage();
  options.target.run_tag = std::to_string(tarde::bench::wall_now_us() / 1000);
  using Runner = int (*)(const Options&);
  const std::map<std::string, Runner> runners = {
      {"w1", tarde::bench::run_w1_cycle},           {"w2", tarde::bench::run_w2_deferred},
      {"w3", tarde::bench::run_w3_burst},           {"w4-load", tarde::bench::run_w4_load},
      {"w4-restart", tarde::bench::run_w4_restart}, {"w5", tarde::bench::run_w5_churn},
      {"w4-index", tarde::bench::run_w4_index}};
  const auto runner = runners.find(options.workload);
  if (runner == runners.end()) return usage();
  return runner->second(options);
}
