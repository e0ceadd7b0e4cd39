// tarde-dump: reads a tarde data directory (of a stopped server, or of a
// running one as a RocksDB secondary instance) and prints what is in it.
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/rocks_kv.h"
#include "storage/store.h"
#include "storage/store_open.h"
#include "tools/dump/dump.h"

namespace {

// Exit codes: 0 fine, 1 check found violations, 2 usage, 3 could not read.
constexpr int kExitViolations = 1;
constexpr int kExitUsage = 2;
constexpr int kExitUnreadable = 3;

const char* kUsage = R"(usage: tarde-dump <data-dir> <command> [options] [--json]

commands:
  summary                      counts by state and queue, ready and dead per queue,
                               retry index size with its earliest and latest instants,
                               each queue's ready floor (where a restart reads from)
  tx ID                        one transaction's record and full history
  list [--state S] [--queue Q] [--limit N]
                               transactions in id order
  due [--limit N]              the retry index in time order
  ready QUEUE [--limit N]      a queue's ready requests in hand-out order
  dead QUEUE [--limit N]       a queue's dead letters
  check                        every invariant; exit status 1 and one line per violation

It opens the directory as a RocksDB secondary instance, so it works on a
stopped server's data and on a running server's without disturbing it.
A damaged store is read up to the damage, after a line saying what is wrong
(exit status 3); a RocksDB that is not a tarde store is named as such, with
its column families. Nothing is ever written into the data directory.
)";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "tarde-dump: %s\n\n%s", message.c_str(), kUsage);
  return kExitUsage;
}

// Runs the request on an open store and prints its output; the exit code.
int print_dump(tarde::storage::Kv& kv, const tarde::tools::DumpRequest& request) {
  tarde::storage::Store store(kv);
  auto out = tarde::tools::run_dump(store, request);
  if (!out.is_ok()) {
    std::fprintf(stderr, "tarde-dump: %s\n", out.status().to_string().c_str());
    return out.status().code() == tarde::Status::Code::kInvalidArgument ? kExitUsage
                                                                        : kExitUnreadable;
  }
  std::fputs(out.value().text.c_str(), stdout);
  return out.value().problems ? kExitViolations : 0;
}

// A store RocksDB refuses to open as it is (a damaged WAL, missing files):
// says what is wrong, then shows what a read-only open that replays the WAL
// only up to its first damaged record can still read. Exit status 3 either
// way, since the output may be incomplete.
int dump_damaged(const std::string& dir, const tarde::Status& problem,
                 const tarde::tools::DumpRequest& request) {
  std::fprintf(stderr, "tarde-dump: %s is damaged: %s\n", dir.c_str(), problem.message().c_str());
  tarde::storage::RocksKv::Options options;
  options.create_if_missing = false;
  options.read_only = true;
  options.salvage = true;
  auto kv = tarde::storage::RocksKv::open(dir, options);
  if (!kv.is_ok()) {
    std::fprintf(stderr, "tarde-dump: nothing can be read from %s: %s\n", dir.c_str(),
                 kv.status().message().c_str());
    return kExitUnreadable;
  }
  std::fprintf(stderr,
               "tarde-dump: showing what can still be read: the WAL up to its first damaged "
               "record; later writes are not shown\n");
  static_cast<void>(print_dump(*kv.value(), request));
  return kExitUnreadable;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (args.size() < 2) return usage_error("needs a data directory and a command");
  tarde::tools::DumpRequest request;
  const std::string dir = args[0];
  request.command = args[1];
  for (size_t i = 2; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&]() -> std::string { return i + 1 < args.size() ? args[++i] : ""; };
    if (arg == "--json") {
      request.json = true;
    } else if (arg == "--state") {
      request.state = value();
    } else if (arg == "--queue") {
      request.queue = value();
    } else if (arg == "--limit") {
      const std::string n = value();
      char* end = nullptr;
      request.limit = std::strtoull(n.c_str(), &end, 10);
      if (n.empty() || *end != '\0') return usage_error("--limit expects a number");
    } else if (request.argument.empty() && arg.rfind("--", 0) != 0) {
      request.argument = arg;
    } else {
      return usage_error("unexpected argument '" + arg + "'");
    }
  }
  const bool needs_argument =
      request.command == "tx" || request.command == "ready" || request.command == "dead";
  if (needs_argument && request.argument.empty()) {
    return usage_error(request.command + " needs an argument");
  }
  if (!std::filesystem::exists(dir + "/CURRENT")) {
    std::fprintf(stderr, "tarde-dump: %s is not a tarde data directory (no CURRENT file)\n",
                 dir.c_str());
    return kExitUnreadable;
  }
  // A read-only look first, which writes nothing into the directory: a
  // foreign RocksDB is named as such, a damaged store is read up to the damage.
  auto families = tarde::storage::RocksKv::read_column_families(dir);
  if (families.is_ok() && !tarde::storage::has_tarde_column_families(families.value())) {
    std::fprintf(stderr,
                 "tarde-dump: %s is a RocksDB store but not a tarde store; its column families: "
                 "%s\n",
                 dir.c_str(), tarde::storage::column_family_names(families.value()).c_str());
    return kExitUnreadable;
  }
  if (!families.is_ok()) return dump_damaged(dir, families.status(), request);
  std::string secondary = (std::filesystem::temp_directory_path() / "tarde-dump-XXXXXX").string();
  if (mkdtemp(secondary.data()) == nullptr) return kExitUnreadable;
  tarde::storage::RocksKv::Options options;
  options.create_if_missing = false;
  options.secondary_path = secondary;
  auto kv = tarde::storage::RocksKv::open(dir, options);
  int code = 0;
  if (!kv.is_ok()) {
    std::fprintf(stderr, "tarde-dump: cannot open %s: %s\n", dir.c_str(),
                 kv.status().to_string().c_str());
    code = kExitUnreadable;
  } else {
    tarde::Status caught_up = kv.value()->try_catch_up();
    if (!caught_up.is_ok()) {
      std::fprintf(stderr, "tarde-dump: %s\n", caught_up.to_string().c_str());
    }
    code = print_dump(*kv.value(), request);
    kv.value().reset();
  }
  std::error_code ignored;
  std::filesystem::remove_all(secondary, ignored);
  return code;
}
