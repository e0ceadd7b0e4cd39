// Command-line parsing of tarde-cli: argv to an Invocation, and an
// Invocation to one protocol request. Every argument is checked with the
// server's own token parsers (net/wire/tokens.h), so a mistake is a usage error
// (exit 2) with a message, not a round trip.
#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "net/wire/tokens.h"
#include "tools/cli/cli.h"

namespace tarde::cli {
namespace {

// The form of a command flag's value.
enum class FlagKind { kDuration, kDecimal, kCount, kReason, kSwitch, kText, kFile };

struct FlagSpec {
  std::string_view name;  // without "--"
  FlagKind kind;
};

constexpr FlagSpec kFlags[] = {
    {"payload", FlagKind::kText},       {"payload-file", FlagKind::kFile},
    {"max-attempts", FlagKind::kCount}, {"base", FlagKind::kDuration},
    {"factor", FlagKind::kDecimal},     {"cap", FlagKind::kDuration},
    {"jitter", FlagKind::kDecimal},     {"strict-cap", FlagKind::kSwitch},
    {"deadline", FlagKind::kDuration},  {"sent", FlagKind::kSwitch},
    {"delay", FlagKind::kDuration},     {"wait", FlagKind::kDuration},
    {"reason", FlagKind::kReason},      {"retry-after", FlagKind::kDuration},
    {"limit", FlagKind::kCount},
};

// The form of a positional argument.
enum class ArgKind { kQueue, kTx, kAttempt, kAnswer, kTerminal };

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
      {"enqueue", "ENQUEUE", {A::kQueue, A::kTx},
       {"payload", "payload-file", "max-attempts", "base", "factor", "cap", "jitter",
        "strict-cap", "deadline", "sent", "delay"}},
      {"reserve", "RESERVE", {A::kQueue}, {"wait"}},
      {"sent", "SENT", {A::kTx, A::kAttempt}, {}},
      {"release", "RELEASE", {A::kTx, A::kAttempt}, {"delay", "reason"}},
      {"respond", "RESPOND", {A::kTx, A::kAttempt, A::kAnswer}, {"reason", "retry-after"}},
      {"resolve", "RESOLVE", {A::kTx, A::kTerminal}, {"reason"}},
      {"get", "GET", {A::kTx}, {}},
      {"history", "HISTORY", {A::kTx}, {"limit"}},
      {"deadletters", "DEADLETTERS", {A::kQueue}, {"limit"}},
      {"redrive", "REDRIVE", {A::kQueue, A::kTx}, {}},
      {"config", "CONFIG", {A::kQueue}, {}, true},
      {"stats", "STATS", {}, {}},
      {"ping", "PING", {}, {}},
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
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value == 0 ||
      value > 65535) {
    return usage("--port expects a number from 1 to 65535, got '" + text + "'");
  }
  return static_cast<uint16_t>(value);
}

// Applies a global flag; false when `name` is not one.
Result<bool> apply_global(const std::string& name, const std::string& value, GlobalOptions* g) {
  if (name == "host") {
    g->host = value;
  } else if (name == "port") {
    auto port = parse_port(value);
    if (!port.is_ok()) return port.status();
    g->port = port.value();
  } else if (name == "token-file") {
    g->token_file = value;
  } else if (name == "timeout") {
    auto ms = net::parse_duration_ms(value, "--timeout");
    if (!ms.is_ok() || ms.value() == 0) return usage("--timeout expects a duration such as 10s");
    g->timeout = std::chrono::milliseconds(ms.value());
  } else {
    return false;
  }
  return true;
}

bool is_global_valued(std::string_view name) {
  return name == "host" || name == "port" || name == "token-file" || name == "timeout";
}

// Handles argv[i], a "--name[=value]" flag, advancing i past a separate value.
Status take_flag(const std::vector<std::string>& args, size_t* i, Invocation* inv) {
  std::string name = args[*i].substr(2);
  std::optional<std::string> value;
  if (const size_t eq = name.find('='); eq != std::string::npos) {
    value = name.substr(eq + 1);
    name = name.substr(0, eq);
  }
  if (name == "help") {
    inv->global.help = true;
    return Status::ok();
  }
  if (name == "raw") {
    inv->global.raw = true;
    return Status::ok();
  }
  const FlagSpec* spec = find_flag(name);
  const bool takes_value = is_global_valued(name) || (spec && spec->kind != FlagKind::kSwitch);
  if (!spec && !takes_value) return usage("unknown flag --" + name + " (see tarde-cli --help)");
  if (!takes_value && value) return usage("--" + name + " takes no value");
  if (takes_value && !value) {
    if (*i + 1 >= args.size()) return usage("--" + name + " needs a value");
    value = args[++*i];
  }
  auto global = apply_global(name, value.value_or(""), &inv->global);
  if (!global.is_ok()) return global.status();
  if (!global.value()) inv->flags.emplace_back(name, value.value_or(""));
  return Status::ok();
}

Status check_flag_value(const FlagSpec& spec, const std::string& value) {
  const std::string label = "--" + std::string(spec.name);
  Status status;
  switch (spec.kind) {
    case FlagKind::kDuration: status = net::parse_duration_ms(value, label).status(); break;
    case FlagKind::kDecimal: status = net::parse_decimal(value, label).status(); break;
    case FlagKind::kCount: status = net::parse_uint(value, label, 1'000'000, 1).status(); break;
    case FlagKind::kReason: status = net::parse_reason(value, label).status(); break;
    case FlagKind::kSwitch:
    case FlagKind::kText:
    case FlagKind::kFile: break;
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
    case ArgKind::kQueue: return net::parse_queue(value, "QUEUE");
    case ArgKind::kTx: return net::parse_tx_id(value, "TX");
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
      return usage("the answer must be SUCCESS, CANCELLED, TRANSIENT or REJECTED, got '" +
                   value + "'");
    }
    case ArgKind::kTerminal: {
      const std::string word = upper(value);
      if (word == "SUCCEEDED" || word == "FAILED") return word;
      return usage("the state must be SUCCEEDED or FAILED, got '" + value + "'");
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
    std::string option(name);
    std::replace(option.begin(), option.end(), '-', '_');
    request->line += ' ' + option + '=' + (flag.kind == FlagKind::kSwitch ? "1" : value);
  }
  return Status::ok();
}

}  // namespace

bool is_command(std::string_view word) { return find_command(word) != nullptr; }

bool flag_takes_value(std::string_view name) {
  const FlagSpec* spec = find_flag(name);
  return is_global_valued(name) || (spec && spec->kind != FlagKind::kSwitch);
}

Result<Invocation> parse_argv(const std::vector<std::string>& args) {
  Invocation inv;
  bool flags_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!flags_done && arg == "--") {
      flags_done = true;
    } else if (!flags_done && (arg == "-h")) {
      inv.global.help = true;
    } else if (!flags_done && arg.size() > 2 && arg.rfind("--", 0) == 0) {
      TARDE_RETURN_IF_ERROR(take_flag(args, &i, &inv));
    } else {
      inv.words.push_back(arg);
    }
  }
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
