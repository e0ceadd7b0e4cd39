#include "tools/dump/command_line.h"

#include <optional>

#include "base/cli_flags.h"

namespace tarde::tools {
namespace {

constexpr const char* kDescription = R"(usage: tarde-dump <data-dir> <command> [options] [--json]
       tarde-dump backups <backup-dir> [--json]
       tarde-dump restore <backup-dir> <id> <target-dir>

commands:
  summary                      counts by state and queue, ready and dead per queue,
                               retry index size with its earliest and latest instants,
                               each queue's ready floor (where a restart reads from)
  tx ID [--limit N]            one transaction's record and its history as HISTORY
                               shows it: the first event and the newest, the count
                               of events dropped before each, a timer fire's due
                               instant and lateness
  list [--state S] [--queue Q] [--limit N]
                               transactions in id order
  due [--limit N]              the retry index in time order
  ready QUEUE [--limit N]      a queue's ready requests in hand-out order
  dead QUEUE [--limit N]       a queue's dead letters
  state QUEUE [--limit N]      a queue's state index (format 2): each state's tx_ids
  check                        every invariant; exit status 1 and one line per violation

backups (of tarde serve --backup-dir; a data directory named backups or restore
is written ./backups):
  backups <backup-dir>         every backup: id, time, bytes, files, and whether its
                               files still match their checksums (exit status 1 if
                               one does not)
  restore <backup-dir> <id> <target-dir>
                               copies backup <id> into <target-dir>, which must be
                               new or empty (exit status 4 otherwise), checking
                               every checksum; then serve it with --data <target-dir>
)";

constexpr const char* kFooter =
    R"(It opens the directory as a RocksDB secondary instance, so it works on a
stopped server's data and on a running server's without disturbing it; on a
running server's, a view that failed or showed problems is read again, up to
five times, since the server replaces files while they are read.
backups and restore write nothing into the backup directory.
A damaged store is read up to the damage, after a line saying what is wrong
(exit status 3); a RocksDB that is not a tarde store is named as such, with
its column families. Nothing is ever written into the data directory.
)";

// tarde-dump's flags, storing into *request.
void define_flags(CLI::App& app, DumpRequest* request) {
  app.name("tarde-dump");
  app.description(kDescription);
  app.footer(kFooter);
  app.get_help_ptr()->group("options");
  app.option_defaults()->group("options");
  app.add_flag("--json", request->json, "print JSON for scripts instead of tables for people");
  add_text_flag(app, "--state",
                "list: only transactions in state S (SENDING, IN_FLIGHT, SCHEDULED,\n"
                "SUCCEEDED or FAILED; default: all)",
                &request->state)
      ->type_name("S");
  add_text_flag(app, "--queue", "list: only the transactions of queue Q (default: all)",
                &request->queue)
      ->type_name("Q");
  add_number_flag(app, "--limit", "tx, list, due, ready, dead, state: at most N rows; 0 = all",
                  &request->limit, 0, UINT64_MAX)
      ->default_str("0");
}

// `backups DIR` or `restore DIR ID TARGET` into *dir and *request; false
// when the words have another shape (parse_backup_error says which).
bool parse_backup_words(const std::vector<std::string>& words, std::string* dir,
                        DumpRequest* request) {
  request->command = words[0];
  const size_t expected = words[0] == "backups" ? 2 : 4;
  if (words.size() != expected) return false;
  *dir = words[1];
  if (words[0] == "backups") return true;
  auto id = parse_whole_number("the backup id", words[2], 1, UINT32_MAX);
  if (!id.is_ok()) return false;
  request->backup_id = static_cast<uint32_t>(id.value());
  request->target = words[3];
  return true;
}

Status parse_backup_error(const std::vector<std::string>& words) {
  if (words[0] == "backups") {
    return Status::invalid_argument("backups needs exactly one argument: the backup directory");
  }
  if (words.size() == 4) {
    auto id = parse_whole_number("the backup id", words[2], 1, UINT32_MAX);
    return id.status();
  }
  return Status::invalid_argument(
      "restore needs exactly three arguments: the backup directory, the backup id and the "
      "target directory");
}

}  // namespace

std::string usage_text() {
  DumpRequest unused;  // the flags need somewhere to store; help stores nothing
  return help_text([&unused](CLI::App& app) { define_flags(app, &unused); });
}

Result<FlagsOutcome> parse_command_line(const std::vector<std::string>& args, std::string* dir,
                                        DumpRequest* request) {
  std::vector<std::string> words;
  auto outcome =
      parse_flags([request](CLI::App& app) { define_flags(app, request); }, args, &words);
  if (!outcome.is_ok() || outcome.value() != FlagsOutcome::kRun) return outcome;
  if (!words.empty() && (words[0] == "backups" || words[0] == "restore")) {
    return parse_backup_words(words, dir, request) ? outcome : parse_backup_error(words);
  }
  if (words.size() < 2) return Status::invalid_argument("needs a data directory and a command");
  if (words.size() > 3) return Status::invalid_argument("unexpected argument '" + words[3] + "'");
  *dir = words[0];
  request->command = words[1];
  if (words.size() == 3) request->argument = words[2];
  const bool needs_argument = request->command == "tx" || request->command == "ready" ||
                              request->command == "dead" || request->command == "state";
  if (needs_argument && request->argument.empty()) {
    return Status::invalid_argument(request->command + " needs an argument");
  }
  return outcome;
}

}  // namespace tarde::tools
