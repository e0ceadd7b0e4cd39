// Command-line parsing of tarde-cli: argv to an Invocation (CLI11 reads the
// flags, base/cli_flags.h), and an Invocation to one protocol request. Every
// argument is checked with the server's own token parsers (net/wire/tokens.h),
// so a mistake is a usage error (exit 2) with a message, not a round trip.
#include <algorithm>
#include <fstream>
#include <sstream>

#include "base/cli_flags.h"
#include "net/wire/tokens.h"
#include "tools/cli/cli.h"

namespace tarde::cli {
namespace {

// The form of a command flag's value.
enum class FlagKind {
  kDuration,
  kDecimal,
  kCount,
  kReason,
  kTxPrefix,
  kSwitch,
  kText,
  kFile,
  kToken
};

// A command flag: its form, and how --help explains it. The enqueue flags
// that are not given take the queue's CONFIG.
struct FlagSpec {
  std::string_view name;  // without "--"
  FlagKind kind;
  std::string_view value_name;  // in the help and in errors; empty for a switch
  std::string_view description;
  // The option it becomes on the wire; empty: the name with '-' spelled '_'.
  std::string_view wire_name = {};
};

constexpr FlagSpec kFlags[] = {
    {"payload", FlagKind::kText, "TEXT", "enqueue: the payload (default: empty)"},
    {"payload-file", FlagKind::kFile, "F", "enqueue: the payload is the content of file F"},
    {"max-attempts", FlagKind::kCount, "N", "enqueue: attempts, the original included"},
    {"base", FlagKind::kDuration, "DUR", "enqueue: the wait before the first retry"},
    {"factor", FlagKind::kDecimal, "F", "enqueue: each retry waits F times the one before"},
    {"cap", FlagKind::kDuration, "DUR", "enqueue: the longest wait before jitter"},
    {"jitter", FlagKind::kDecimal, "F", "enqueue: each wait varies by up to this share (0-1)"},
    {"strict-cap", FlagKind::kSwitch, "", "enqueue: no wait above --cap, jitter included"},
    {"deadline", FlagKind::kDuration, "DUR", "enqueue: FAILED rather than retry after this long"},
    {"sent", FlagKind::kSwitch, "", "enqueue: attempt 1 already went out (IN_FLIGHT)"},
    {"delay", FlagKind::kDuration, "DUR",
     "enqueue: attempt 1 waits like a retry; release: ready again after DUR"},
    {"wait", FlagKind::kDuration, "DUR", "reserve: wait up to DUR for a request (default: 0)"},
    {"reason", FlagKind::kReason, "R",
     "release, respond, resolve: the reason recorded; list: only those\nwith this reason"},
    {"retry-after", FlagKind::kDuration, "DUR", "respond: the wait instead of the computed one"},
    {"limit", FlagKind::kCount, "N",
     "history, deadletters: the newest or first N only; redrive-all, resolve-all: at most N; list: "
     "the page size"},
    {"show-payload", FlagKind::kSwitch, "", "get, deadletters: print the payloads too", "payload"},
    {"prefix", FlagKind::kTxPrefix, "P",
     "list, redrive-all, resolve-all: only tx ids starting with P"},
    {"last-error", FlagKind::kReason, "R",
     "redrive-all, resolve-all: only letters whose last error is R"},
    {"after", FlagKind::kToken, "CURSOR", "list: the page after CURSOR (a page's next cursor)"},
};

// The form of a positional argument.
enum class ArgKind { kQueue, kQueues, kTx, kAttempt, kAnswer, kTerminal, kListState };

struct CommandSpec {
  std::string_view name;
  std::string_view verb;
  std::vector<ArgKind> args;
  std::vector<std::string_view> flags;
  bool settings = false;  // CONFIG: any number of name=value after the args
};

const std::vector<CommandSpec>& commands() {
  using A = ArgKind;
  static const std::vector<CommandSpec> table = {
      {"enqueue",
       "ENQUEUE",
       {A::kQueue, A::kTx},
       {"payload", "payload-file", "max-attempts", "base", "factor", "cap", "jitter", "strict-cap",
        "deadline", "sent", "delay"}},
      {"reserve", "RESERVE", {A::kQueues}, {"wait"}},
      {"touch", "TOUCH", {A::kTx, A::kAttempt}, {}},
      {"pause", "PAUSE", {A::kQueue}, {}},
      {"resume", "RESUME", {A::kQueue}, {}},
      {"redrive-all", "REDRIVE_ALL", {A::kQueue}, {"prefix", "last-error", "limit"}},
      {"resolve-all",
       "RESOLVE_ALL",
       {A::kQueue, A::kTerminal},
       {"prefix", "last-error", "reason", "limit"}},
      {"sent", "SENT", {A::kTx, A::kAttempt}, {}},
      {"release", "RELEASE", {A::kTx, A::kAttempt}, {"delay", "reason"}},
      {"respond", "RESPOND", {A::kTx, A::kAttempt, A::kAnswer}, {"reason", "retry-after"}},
      {"resolve", "RESOLVE", {A::kTx, A::kTerminal}, {"reason"}},
      {"get", "GET", {A::kTx}, {"show-payload"}},
      {"history", "HISTORY", {A::kTx}, {"limit"}},
      {"deadletters", "DEADLETTERS", {A::kQueue}, {"limit", "show-payload"}},
      {"list", "LIST", {A::kQueue, A::kListState}, {"after", "limit", "prefix", "reason"}},
      {"redrive", "REDRIVE", {A::kQueue, A::kTx}, {}},
      {"config", "CONFIG", {A::kQueue}, {}, true},
      {"stats", "STATS", {}, {}},
      {"ping", "PING", {}, {}},
      {"backup", "BACKUP", {}, {}},
  };
  return table;
}

const FlagSpec* find_flag(std::string_view name) {
  for (const FlagSpec& spec : kFlags) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

const CommandSpec* find_command(std::string_view name) {
  for (const CommandSpec& spec : commands()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

Status usage(std::string message) { return Status::invalid_argument(std::move(message)); }

Result<uint16_t> parse_port(const std::string& text) {
  auto port = parse_whole_number("--port", text, 1, 65535);
  if (!port.is_ok()) return usage("--port expects a number from 1 to 65535, got '" + text + "'");
  return static_cast<uint16_t>(port.value());
}

Result<std::chrono::milliseconds> parse_timeout(const std::string& text) {
  auto ms = net::parse_duration_ms(text, "--timeout");
  if (!ms.is_ok() || ms.value() == 0) return usage("--timeout expects a duration such as 10s");
  return std::chrono::milliseconds(ms.value());
}

// tarde-cli's flags: the global ones into inv->global, the commands' ones
// into inv->flags (in the order of kFlags; build_request checks their forms).
void define_flags(CLI::App& app, Invocation* inv) {
  const GlobalOptions defaults;
  GlobalOptions* g = &inv->global;
  app.name("tarde-cli");
  app.description(usage_head());
  app.footer(usage_tail());
  app.option_defaults()->group("Global flags (anywhere on the line)");
  add_text_flag(app, "--host", "server host", &g->host)->type_name("H")->default_str(defaults.host);
  add_parsed_flag(app, "--port", "server port", &g->port, parse_port)
      ->type_name("P")
      ->default_str(std::to_string(defaults.port));
  add_text_flag(app, "--token-file", "send AUTH with the token on the first line of F",
                &g->token_file)
      ->type_name("F");
  add_parsed_flag(app, "--timeout",
                  "bound on connecting and on each reply;\na RESERVE's --wait is added to it",
                  &g->timeout, parse_timeout)
      ->type_name("DUR")
      ->default_str(net::format_duration_ms(defaults.timeout.count()));
  app.add_flag("--raw", g->raw, "print the server's reply verbatim, for scripts");
  app.get_help_ptr()->group("Global flags (anywhere on the line)");
  app.option_defaults()->group("Flags of the commands (see Commands above)");
  for (const FlagSpec& spec : kFlags) {
    const std::string name = "--" + std::string(spec.name);
    const std::string description(spec.description);
    if (spec.kind == FlagKind::kSwitch) {
      app.add_flag_callback(
          name, [inv, &spec] { inv->flags.emplace_back(spec.name, ""); }, description);
      continue;
    }
    // The value's form is checked by build_request, once the command is known.
    add_value_flag(app, name, description, [inv, &spec](const std::string& value) {
      inv->flags.emplace_back(spec.name, value);
      return Status::ok();
    })->type_name(std::string(spec.value_name));
  }
}

Status check_flag_value(const FlagSpec& spec, const std::string& value) {
  const std::string label = "--" + std::string(spec.name);
  Status status;
  switch (spec.kind) {
    case FlagKind::kDuration:
      status = net::parse_duration_ms(value, label).status();
      break;
    case FlagKind::kDecimal:
      status = net::parse_decimal(value, label).status();
      break;
    case FlagKind::kCount:
      status = net::parse_uint(value, label, 1'000'000, 1).status();
      break;
    case FlagKind::kReason:
      status = net::parse_reason(value, label).status();
      break;
    case FlagKind::kTxPrefix:
      status = net::parse_tx_id(value, label).status();
      break;
    case FlagKind::kToken: {
      const bool printable =
          std::all_of(value.begin(), value.end(), [](char c) { return c > 0x20 && c < 0x7F; });
      if (value.empty() || !printable || value.size() > net::kTxIdBytesMax + 1) {
        status = usage(label + " expects 1 to " + std::to_string(net::kTxIdBytesMax + 1) +
                       " printable bytes without spaces, got " + quote_token(value));
      }
      break;
    }
    case FlagKind::kSwitch:
    case FlagKind::kText:
    case FlagKind::kFile:
      break;
  }
  return status;
}

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

Result<std::string> check_arg(ArgKind kind, const std::string& value) {
  switch (kind) {
    case ArgKind::kQueue:
      return net::parse_queue(value, "QUEUE");
    case ArgKind::kQueues: {
      // QUEUE[,QUEUE...]: each name checked here, the list by the server.
      size_t start = 0;
      while (true) {
        const size_t comma = value.find(',', start);
        auto queue = net::parse_queue(value.substr(start, comma - start), "QUEUE");
        if (!queue.is_ok()) return queue.status();
        if (comma == std::string::npos) return value;
        start = comma + 1;
      }
    }
    case ArgKind::kTx:
      return net::parse_tx_id(value, "TX");
    case ArgKind::kAttempt: {
      auto attempt = net::parse_attempt(value, "N (the attempt)");
      if (!attempt.is_ok()) return attempt.status();
      return value;
    }
    case ArgKind::kAnswer: {
      const std::string word = upper(value);
      if (word == "SUCCESS" || word == "CANCELLED" || word == "TRANSIENT" || word == "REJECTED") {
        return word;
      }
      return usage("the answer must be SUCCESS, CANCELLED, TRANSIENT or REJECTED, got '" + value +
                   "'");
    }
    case ArgKind::kTerminal: {
      const std::string word = upper(value);
      if (word == "SUCCEEDED" || word == "FAILED") return word;
      return usage("the state must be SUCCEEDED or FAILED, got '" + value + "'");
    }
    case ArgKind::kListState: {
      std::string word = value;
      std::transform(word.begin(), word.end(), word.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      for (const char* state :
           {"ready", "leased", "in_flight", "scheduled", "succeeded", "failed", "dead"}) {
        if (word == state) return word;
      }
      return usage(
          "the state must be ready, leased, in_flight, scheduled, succeeded, failed or dead, "
          "got '" +
          value + "'");
    }
  }
  return usage("?");
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return usage("cannot read --payload-file " + path);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

// Adds the command's flags to `request`: payloads become its payload, the
// others name=value options with '-' spelled '_'.
Status add_flags(const CommandSpec& spec, const Invocation& inv, Request* request) {
  for (const auto& [name, value] : inv.flags) {
    if (std::find(spec.flags.begin(), spec.flags.end(), name) == spec.flags.end()) {
      return usage(std::string(spec.name) + " does not take --" + name);
    }
    const FlagSpec& flag = *find_flag(name);
    TARDE_RETURN_IF_ERROR(check_flag_value(flag, value));
    if (flag.kind == FlagKind::kText || flag.kind == FlagKind::kFile) {
      if (request->payload) return usage("give one of --payload and --payload-file");
      auto payload = flag.kind == FlagKind::kText ? Result<std::string>(value) : read_file(value);
      if (!payload.is_ok()) return payload.status();
      request->payload = std::move(payload).value();
      continue;
    }
    std::string option(flag.wire_name.empty() ? name : std::string(flag.wire_name));
    std::replace(option.begin(), option.end(), '-', '_');
    request->line += ' ' + option + '=' + (flag.kind == FlagKind::kSwitch ? "1" : value);
  }
  return Status::ok();
}

}  // namespace

bool is_command(std::string_view word) { return find_command(word) != nullptr; }

bool flag_takes_value(std::string_view name) {
  const FlagSpec* spec = find_flag(name);
  const bool global = name == "host" || name == "port" || name == "token-file" || name == "timeout";
  return global || (spec && spec->kind != FlagKind::kSwitch);
}

std::string usage_text() {
  Invocation unused;  // the flags need somewhere to store; help stores nothing
  return help_text([&unused](CLI::App& app) { define_flags(app, &unused); });
}

Result<Invocation> parse_argv(const std::vector<std::string>& args) {
  Invocation inv;
  auto outcome = parse_flags([&inv](CLI::App& app) { define_flags(app, &inv); }, args, &inv.words);
  if (!outcome.is_ok()) return outcome.status();
  inv.global.help = outcome.value() == FlagsOutcome::kHelp;
  return inv;
}

Result<Request> build_request(const Invocation& inv) {
  const CommandSpec* spec = find_command(inv.words.at(0));
  if (!spec) return usage("unknown command '" + inv.words[0] + "' (see tarde-cli --help)");
  const size_t given = inv.words.size() - 1;
  if (given < spec->args.size() || (given > spec->args.size() && !spec->settings)) {
    return usage(std::string(spec->name) + " takes " + std::to_string(spec->args.size()) +
                 " argument(s), got " + std::to_string(given) + " (see tarde-cli --help)");
  }
  Request request{std::string(spec->verb), std::nullopt};
  for (size_t i = 0; i < spec->args.size(); ++i) {
    auto arg = check_arg(spec->args[i], inv.words[i + 1]);
    if (!arg.is_ok()) return usage(arg.status().message());
    request.line += ' ' + arg.value();
  }
  for (size_t i = spec->args.size() + 1; i < inv.words.size(); ++i) {
    const std::string& setting = inv.words[i];
    const size_t eq = setting.find('=');
    if (eq == 0 || eq == std::string::npos || eq + 1 == setting.size() ||
        setting.find(' ') != std::string::npos) {
      return usage("a setting must be name=value, got '" + setting + "'");
    }
    request.line += ' ' + setting;
  }
  TARDE_RETURN_IF_ERROR(add_flags(*spec, inv, &request));
  if (spec->verb == "ENQUEUE" && !request.payload) request.payload = std::string();
  return request;
}

}  // namespace tarde::cli
