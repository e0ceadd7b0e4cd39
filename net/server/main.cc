// `tarde`: the server executable.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "base/log_record.h"
#include "net/server/command_line.h"
#include "net/server/json_log_formatter.h"
#include "net/server/server.h"

// jemalloc's start-up settings (read by jemalloc itself; the sanitized build,
// which has no jemalloc, ignores the symbol). The server has two busy threads
// and RocksDB's background ones on a small machine: two arenas rather than
// four per CPU halve jemalloc's own metadata, and pages freed by a flushed
// memtable or a finished compaction go back to the system after a second
// rather than ten. Together about 9 MB less RSS with a million jobs pending
// (docs/benchmarks.md, W4).
extern "C" const char* malloc_conf;
const char* malloc_conf = "narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0";

namespace {

// Exit codes: distinct so that scripts can tell a usage error from a store
// that refused to open, and one refused store from another. The list is in
// usage_text() and README.md; never renumber.
constexpr int kExitUsage = 2;
constexpr int kExitStartFailed = 3;
constexpr int kExitLocked = 4;
constexpr int kExitNewerFormat = 5;
constexpr int kExitForeign = 6;
constexpr int kExitDamaged = 7;
constexpr int kExitUnreadable = 8;

int start_failure_exit_code(tarde::storage::OpenProblem problem) {
  using tarde::storage::OpenProblem;
  switch (problem) {
    case OpenProblem::kLocked:
      return kExitLocked;
    case OpenProblem::kNewerFormat:
      return kExitNewerFormat;
    case OpenProblem::kForeign:
      return kExitForeign;
    case OpenProblem::kDamaged:
      return kExitDamaged;
    case OpenProblem::kUnreadable:
      return kExitUnreadable;
    case OpenProblem::kNone:
      break;
  }
  return kExitStartFailed;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(tarde::net::usage_text().c_str(), stderr);
    return kExitUsage;
  }
  auto line = tarde::net::parse_command_line(args);
  if (!line.is_ok()) {
    std::fprintf(stderr, "tarde: %s\n", line.status().message().c_str());
    return kExitUsage;
  }
  using Action = tarde::net::CommandLine::Action;
  if (line.value().action == Action::kHelp) {
    std::fputs(tarde::net::usage_text().c_str(), stdout);
    return 0;
  }
  if (line.value().action == Action::kVersion) {
    std::fputs(tarde::net::version_text().c_str(), stdout);
    return 0;
  }
  const tarde::net::ServerOptions& options = line.value().options;
  spdlog::set_default_logger(spdlog::stderr_color_mt("tarde"));  // stdout stays free
  spdlog::set_level(spdlog::level::from_str(options.log_level));
  if (options.log_json) {
    spdlog::set_formatter(std::make_unique<tarde::net::JsonLogFormatter>());
  } else {
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  }
  // A file-size limit (ulimit -f) must fail a write with EFBIG, which the
  // store reports and recovers from, instead of killing the server.
  std::signal(SIGXFSZ, SIG_IGN);
#ifdef TARDE_PLANTED_BUG_LOST_ACK
  // tarde-planted-lost-ack (tests/CMakeLists.txt): the package test looks
  // for this text to prove that the released server is not this build.
  spdlog::warn("PLANTED BUG build (tests only): replies do not wait for their commit");
#endif
  tarde::net::Server server(options);
  tarde::Status status = server.open();
  if (!status.is_ok()) {
    const bool refused = server.open_problem() != tarde::storage::OpenProblem::kNone;
    spdlog::error(
        tarde::LogRecord("start.failed")
            .text("msg", "cannot start: " + (refused ? status.message() : status.to_string()))
            .line());
    return start_failure_exit_code(server.open_problem());
  }
  // Under systemd (Type=notify) READY=1 goes out once the store is recovered
  // and the listeners are open, so units ordered after tarde find it
  // serving; without NOTIFY_SOCKET sd_notify does nothing.
  server.set_notifier([](const std::string& state) { sd_notify(0, state.c_str()); });
  server.run();
  return 0;
}
