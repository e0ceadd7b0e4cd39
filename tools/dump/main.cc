// tarde-dump: reads a tarde data directory (of a stopped server, or of a
// running one as a RocksDB secondary instance) and prints what is in it.
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/backups.h"
#include "storage/rocks_kv.h"
#include "storage/store.h"
#include "storage/store_open.h"
#include "tools/dump/backups.h"
#include "tools/dump/command_line.h"
#include "tools/dump/dump.h"

namespace {

// Exit codes: 0 fine, 1 check found violations (backups: a damaged backup),
// 2 usage, 3 could not read, 4 restore refused a target that is not empty.
// Never renumber: scripts rely on them.
constexpr int kExitViolations = 1;
constexpr int kExitUsage = 2;
constexpr int kExitUnreadable = 3;
constexpr int kExitTargetNotEmpty = 4;

int usage_error(const std::string& message) {
  std::fprintf(stderr, "tarde-dump: %s\n\n%s", message.c_str(), tarde::tools::usage_text().c_str());
  return kExitUsage;
}

// A running server replaces and deletes files while tarde-dump opens and
// reads them: a table file compacted away, a WAL dropped once it was
// flushed. An open then fails on a missing file, or a secondary misses a
// WAL's writes in some column families and a check reports violations that
// are not there (under load, 8 of 60 checks did; catching up again did not
// mend the view, a new secondary did). So on a store whose lock another
// process holds, an open that fails and a dump that fails or finds problems
// are tried again, each time on a new secondary, up to this many times in
// all; damage that is really there fails every time.
constexpr int kLiveAttempts = 5;

// Prints a dump's output or error; the exit code.
int print_output(const tarde::Result<tarde::tools::DumpOutput>& out) {
  if (!out.is_ok()) {
    std::fprintf(stderr, "tarde-dump: %s\n", out.status().to_string().c_str());
    return out.status().code() == tarde::Status::Code::kInvalidArgument ? kExitUsage
                                                                        : kExitUnreadable;
  }
  std::fputs(out.value().text.c_str(), stdout);
  return out.value().problems ? kExitViolations : 0;
}

// Runs the request on an open store and prints its output; the exit code.
// A dump reads each record once or twice: nothing is remembered decoded.
int print_dump(tarde::storage::Kv& kv, const tarde::tools::DumpRequest& request) {
  tarde::storage::Store store(kv, tarde::storage::Store::ReadCache::kNone);
  return print_output(tarde::tools::run_dump(store, request));
}

// Whether a dump's result may come from files changing under it: a storage
// error, or problems found (kLiveAttempts says why).
bool worth_another_look(const tarde::Result<tarde::tools::DumpOutput>& out) {
  if (!out.is_ok()) return out.status().code() != tarde::Status::Code::kInvalidArgument;
  return out.value().problems;
}

// Opens dir as a secondary in the new directory `secondary`, catches up with
// the primary and runs the request, up to `attempts` times while an attempt
// fails to open or worth_another_look(), each time on a new secondary; prints
// the last result. The exit code.
int dump_secondary(const std::string& dir, const std::string& secondary,
                   const tarde::tools::DumpRequest& request, int attempts) {
  tarde::storage::RocksKv::Options options;
  options.create_if_missing = false;
  options.secondary_path = secondary;
  for (int attempt = 1;; ++attempt) {
    const bool last = attempt >= attempts;
    auto kv = tarde::storage::RocksKv::open(dir, options);
    if (!kv.is_ok()) {
      if (!last) continue;
      std::fprintf(stderr, "tarde-dump: cannot open %s: %s\n", dir.c_str(),
                   kv.status().to_string().c_str());
      return kExitUnreadable;
    }
    tarde::Status caught_up = kv.value()->try_catch_up();
    tarde::storage::Store store(*kv.value(), tarde::storage::Store::ReadCache::kNone);
    auto out = tarde::tools::run_dump(store, request);
    if (last || !worth_another_look(out)) {
      if (!caught_up.is_ok()) {
        std::fprintf(stderr, "tarde-dump: %s\n", caught_up.to_string().c_str());
      }
      return print_output(out);
    }
    std::fprintf(stderr,
                 "tarde-dump: a running server changed the store while it was read; reading it "
                 "again (%d of %d)\n",
                 attempt + 1, attempts);
  }
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

// `backups DIR` and `restore DIR ID TARGET`; the exit code.
int run_backup_command(const std::string& backup_dir, const tarde::tools::DumpRequest& request) {
  if (request.command == "backups") {
    auto out = tarde::tools::list_backups_output(backup_dir, request.json);
    if (!out.is_ok()) {
      std::fprintf(stderr, "tarde-dump: %s\n", out.status().message().c_str());
      return kExitUnreadable;
    }
    std::fputs(out.value().text.c_str(), stdout);
    return out.value().problems ? kExitViolations : 0;
  }
  tarde::Status target = tarde::storage::check_restore_target(request.target);
  if (!target.is_ok()) {
    std::fprintf(stderr, "tarde-dump: %s\n", target.message().c_str());
    return kExitTargetNotEmpty;
  }
  auto out = tarde::tools::restore_output(backup_dir, request.backup_id, request.target);
  if (!out.is_ok()) {
    std::fprintf(stderr, "tarde-dump: %s\n", out.status().message().c_str());
    return out.status().code() == tarde::Status::Code::kInvalidArgument ? kExitTargetNotEmpty
                                                                        : kExitUnreadable;
  }
  std::fputs(out.value().c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  std::string dir;
  tarde::tools::DumpRequest request;
  auto outcome = tarde::tools::parse_command_line(args, &dir, &request);
  if (!outcome.is_ok()) return usage_error(outcome.status().message());
  if (outcome.value() == tarde::FlagsOutcome::kHelp) {
    std::fputs(tarde::tools::usage_text().c_str(), stdout);
    return 0;
  }
  if (request.command == "backups" || request.command == "restore") {
    return run_backup_command(dir, request);
  }
  if (!std::filesystem::exists(dir + "/CURRENT")) {
    std::fprintf(stderr, "tarde-dump: %s is not a tarde data directory (no CURRENT file)\n",
                 dir.c_str());
    return kExitUnreadable;
  }
  // A read-only look first, which writes nothing into the directory: a
  // foreign RocksDB is named as such, a damaged store is read up to the damage.
  const int attempts = tarde::storage::RocksKv::locked_by_another_process(dir) ? kLiveAttempts : 1;
  auto families = tarde::storage::RocksKv::read_column_families(dir);
  for (int attempt = 1; attempt < attempts && !families.is_ok(); ++attempt) {
    families = tarde::storage::RocksKv::read_column_families(dir);
  }
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
  const int code = dump_secondary(dir, secondary, request, attempts);
  std::error_code ignored;
  std::filesystem::remove_all(secondary, ignored);
  return code;
}
