#include "tools/dump/command_line.h"

#include <optional>

#include "base/cli_flags.h"

namespace tarde::tools {
namespace {

constexpr const char* kDescription = R"(usage: tarde-dump <data-dir> <command> [options] [--json]

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
  state QUEUE [--limit N]      a queue's state index (format 2): each state's tx_ids
  check                        every invariant; exit status 1 and one line per violation
)";

constexpr const char* kFooter =
    R"(It opens the directory as a RocksDB secondary instance, so it works on a
stopped server's data and on a running server's without disturbing it.
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
  add_number_flag(app, "--limit", "list, due, ready, dead, state: at most N rows; 0 = all",
                  &request->limit, 0, UINT64_MAX)
      ->default_str("0");
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
