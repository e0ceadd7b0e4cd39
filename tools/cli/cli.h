#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "clients/cpp/client.h"

// The pieces of `tarde-cli`, the human client: argument parsing (args.cc),
// output for people (render.cc) and the interactive shell (shell.cc). Each is
// a plain function called from main on the one thread the tool has.
namespace tarde::cli {

// Exit statuses, so that scripts can tell an answer from a mistake from an
// outage.
inline constexpr int kExitOk = 0;        // OK, CREATED, EXISTS, REQUEST, EMPTY, ...
inline constexpr int kExitNegative = 1;  // NOT_FOUND, STALE, CONFLICT
inline constexpr int kExitUsage = 2;     // the command line is wrong
inline constexpr int kExitError = 3;     // ERR reply or no connection

// The flags that apply to the connection rather than to one command.
struct GlobalOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 7400;
  std::string token_file;  // empty: no AUTH
  bool raw = false;        // print replies verbatim
  std::chrono::milliseconds timeout{30'000};
  bool help = false;
};

// A command line taken apart: the global options, the command word and its
// positionals in order, and the command's own --flags (value "" for
// switches) in order.
struct Invocation {
  GlobalOptions global;
  std::vector<std::string> words;
  std::vector<std::pair<std::string, std::string>> flags;
};

// One protocol request: a line without CRLF and, for ENQUEUE, the payload
// whose length the client appends.
struct Request {
  std::string line;
  std::optional<std::string> payload;
};

// The full --help text: usage_head(), every flag with its default, then
// usage_tail().
std::string usage_text();
// The parts of the --help text before the flags (usage, commands) and after
// them (forms, output, the shell, exit status, examples).
const char* usage_head();
const char* usage_tail();
// The text of the shell's `help`.
std::string shell_help_text();

// Splits argv (without the program name): flags anywhere, `--flag value` or
// `--flag=value`, and the other words in order (all of them after a lone
// `--`). invalid_argument with a message for people when a flag is unknown,
// lacks its value, or a global flag's value is wrong.
Result<Invocation> parse_argv(const std::vector<std::string>& args);

// Builds the protocol request for invocation.words[0] (a command other than
// shell), checking every argument's form first. invalid_argument with a
// message for people on any usage error.
Result<Request> build_request(const Invocation& invocation);

// Whether --`name` is a flag that takes a value (--wait 2s), as opposed to a
// switch (--sent) or no flag at all.
bool flag_takes_value(std::string_view name);

// Whether `word` names a one-shot command (enqueue, get, ...).
bool is_command(std::string_view word);

// Prints `reply` for people on `out` (and a one-line explanation on `err`
// for NOT_FOUND, STALE, CONFLICT and ERR), or verbatim on `out` when `raw`.
// Times are shown relative to `now_ms`. Returns the exit status the reply
// calls for.
int render(const client::Reply& reply, bool raw, int64_t now_ms, std::ostream& out,
           std::ostream& err);

// The exit status a reply calls for (see the constants above).
int exit_status(const client::Reply& reply);

// "2024-06-10T08:13:20.123Z" for an epoch-ms time.
std::string iso_time(int64_t epoch_ms);
// "in 1h59m", "3s ago", "now": `epoch_ms` relative to `now_ms`.
std::string relative_time(int64_t epoch_ms, int64_t now_ms);

// Runs the interactive mode on stdin/stdout until `quit` or end of input.
// Returns the exit status: 0, or kExitError when the connection failed.
int run_shell(client::Client& client, const GlobalOptions& options);

// Milliseconds since the epoch, now.
int64_t now_epoch_ms();

}  // namespace tarde::cli
