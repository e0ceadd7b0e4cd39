// tarde-bench: one load generator for tarde and the systems people would use
// instead (beanstalkd, Redis, PostgreSQL). See docs/benchmarks.md.
//
//   tarde-bench w1|w2|w3|w4-load|w4-restart|w5 --system S --port P [options]
//   tarde-bench w4-index --count N --data-dir DIR   (tarde's store alone, no server)
//   tarde-bench cycle --port P ...        (W1 against tarde, the old usage)
//   tarde-bench report RESULTS-FILE       (markdown tables with ratios to tarde)
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "base/cli_flags.h"
#include "net/wire/tokens.h"
#include "tools/bench/report.h"
#include "tools/bench/workloads.h"

namespace {

using tarde::bench::Options;

constexpr int kExitUsage = 2;

constexpr const char* kDescription = R"(usage: tarde-bench WORKLOAD --system S --port P [options]
       tarde-bench w4-index --count N --data-dir NEW-DIR   (retry index after N fires)
       tarde-bench cycle --port P [options]                (w1 against tarde)
       tarde-bench report RESULTS-FILE                     (markdown tables of RESULT lines)

workloads: w1 (full cycle), w2 (deferred retry), w3 (burst), w4-load and w4-restart
           (scale and crash restart), w5 (churn); see docs/benchmarks.md
)";

// tarde-bench's flags, storing into *o.
void define_flags(CLI::App& app, Options* o) {
  using tarde::add_number_flag;
  using tarde::add_parsed_flag;
  using tarde::add_text_flag;
  const Options defaults;
  auto decimal = [](const char* name) {
    return [name](const std::string& value) { return tarde::net::parse_decimal(value, name); };
  };
  app.name("tarde-bench");
  app.description(kDescription);
  app.get_help_ptr()->group("options");
  app.option_defaults()->group("options");
  add_parsed_flag(
      app, "--system", "the system measured: tarde, beanstalkd, redis or postgres",
      &o->target.system,
      [](const std::string& value) {
        return tarde::parse_choice("--system", value, {"tarde", "beanstalkd", "redis", "postgres"});
      })
      ->type_name("S")
      ->default_str("tarde");
  add_text_flag(app, "--label",
                "the system's name in the results, such as redis-always (default: S)", &o->label)
      ->type_name("NAME");
  add_text_flag(app, "--host", "the server's host", &o->target.host)
      ->type_name("H")
      ->default_str(defaults.target.host);
  add_number_flag(app, "--port", "the server's port (needed but for w4-index)", &o->target.port, 1,
                  65535)
      ->type_name("P");
  add_text_flag(app, "--queue", "queue, tube, key prefix or table tag", &o->target.queue)
      ->type_name("Q")
      ->default_str(defaults.target.queue);
  add_number_flag(app, "--payload", "payload size", &o->target.payload_bytes, 0, 64 << 20)
      ->type_name("BYTES")
      ->default_str(std::to_string(defaults.target.payload_bytes));
  add_number_flag(app, "--poll-ms",
                  "postgres: poll interval of an empty reserve; redis: longest sleep of the "
                  "due-job mover",
                  &o->target.poll_interval_ms, 0, 60'000)
      ->type_name("MS")
      ->default_str(std::to_string(defaults.target.poll_interval_ms));
  add_number_flag(app, "--claim-batch", "postgres: jobs claimed per poll", &o->target.claim_batch,
                  1, 100'000)
      ->default_str(std::to_string(defaults.target.claim_batch));
  add_number_flag(app, "--connections", "client connections", &o->connections, 1, 100'000)
      ->default_str(std::to_string(defaults.connections));
  add_parsed_flag(app, "--seconds", "measured duration", &o->seconds, decimal("--seconds"))
      ->type_name("S")
      ->default_str(tarde::net::format_decimal(defaults.seconds));
  add_number_flag(app, "--server-pid",
                  "the server's pid, for CPU and memory figures (default: not measured)",
                  &o->server_pid, 0, std::numeric_limits<int>::max())
      ->type_name("PID");
  add_text_flag(app, "--data-dir",
                "the server's data directory, for disk figures (default: not measured); "
                "w4-index: a new directory",
                &o->data_dir)
      ->type_name("DIR");
  add_parsed_flag(app, "--rate", "w2: offered retries per second; 0 = closed loop (overload)",
                  &o->rate, decimal("--rate"))
      ->type_name("R")
      ->default_str(tarde::net::format_decimal(defaults.rate));
  add_number_flag(app, "--count", "w3 burst size, w4 backlog, w5 transaction set", &o->count, 1,
                  1'000'000'000)
      ->default_str(std::to_string(defaults.count));
  add_number_flag(app, "--delay-ms", "w2, w5: wait before the retry", &o->delay_ms, 0,
                  tarde::net::kDurationMsMax)
      ->type_name("MS")
      ->default_str(std::to_string(defaults.delay_ms));
  add_parsed_flag(app, "--sample-s", "w5: disk size sampled this often", &o->sample_seconds,
                  decimal("--sample-s"))
      ->type_name("S")
      ->default_str(tarde::net::format_decimal(defaults.sample_seconds));
  add_number_flag(app, "--since-ns", "w4-restart: when the server process was started (epoch ns)",
                  &o->since_ns, 0, std::numeric_limits<int64_t>::max())
      ->type_name("NS")
      ->default_str(std::to_string(defaults.since_ns));
}

std::string usage_text() {
  Options unused;  // the flags need somewhere to store; help stores nothing
  return tarde::help_text([&unused](CLI::App& app) { define_flags(app, &unused); });
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "tarde-bench: %s\n\n%s", message.c_str(), usage_text().c_str());
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  Options options;
  options.target.system = "tarde";
  std::vector<std::string> words;
  auto outcome =
      tarde::parse_flags([&options](CLI::App& app) { define_flags(app, &options); }, args, &words);
  if (!outcome.is_ok()) return usage_error(outcome.status().message());
  if (outcome.value() == tarde::FlagsOutcome::kHelp) {
    std::fputs(usage_text().c_str(), stdout);
    return 0;
  }
  if (words.empty()) return usage_error("needs a workload");
  if (words[0] == "report") {
    if (words.size() != 2) return usage_error("report takes one results file");
    return tarde::bench::print_report(words[1]);
  }
  if (words.size() > 1) return usage_error("unexpected argument '" + words[1] + "'");
  options.workload = words[0] == "cycle" ? "w1" : words[0];
  options.target.run_tag = std::to_string(tarde::bench::wall_now_us() / 1000);
  using Runner = int (*)(const Options&);
  const std::map<std::string, Runner> runners = {
      {"w1", tarde::bench::run_w1_cycle},           {"w2", tarde::bench::run_w2_deferred},
      {"w3", tarde::bench::run_w3_burst},           {"w4-load", tarde::bench::run_w4_load},
      {"w4-restart", tarde::bench::run_w4_restart}, {"w5", tarde::bench::run_w5_churn},
      {"w4-index", tarde::bench::run_w4_index}};
  const auto runner = runners.find(options.workload);
  if (runner == runners.end()) return usage_error("unknown workload '" + words[0] + "'");
  if (options.target.port == 0 && options.workload != "w4-index") {
    return usage_error("--port is needed for " + words[0]);
  }
  return runner->second(options);
}
