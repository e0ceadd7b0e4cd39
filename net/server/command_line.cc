#include "net/server/command_line.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/cli_flags.h"
#include "net/wire/tokens.h"

namespace tarde::net {
namespace {

constexpr const char* kDescription = R"(tarde - durable deferred retries

Usage:
  tarde serve [flags]     run the server
  tarde serve --config FILE [flags]
                          read the flags from FILE first: one `name = value`
                          line per flag, without its --; # starts a comment;
                          flags on the command line override the file
  tarde --help            show this text
  tarde --version         print the version
)";

constexpr const char* kExitCodes = R"(Exit codes of serve:
  0  stopped by SIGINT or SIGTERM
  2  bad command line, or a bad --config file (the message names its line)
  3  could not start for another reason (port in use, token file refused, ...)
  4  the data directory is locked by another process
  5  the data directory was written by a newer tarde (format version)
  6  the data directory is not a tarde store (another RocksDB, or other files)
  7  the data directory is damaged (corrupt WAL, missing SST, MANIFEST or CURRENT)
  8  the data directory is not a directory, or not readable and writable
A refused data directory is left exactly as it was; the one error line says what to do.
)";

// Serve's flags, storing into *o; defaults shown are those of ServerOptions.
// With config_file, also --config, stored there.
// Adds `--name A|B`, one of two words: *out becomes whether the value is
// `words[0]` when `first_is_true`, `words[1]` otherwise.
CLI::Option* add_two_word_flag(CLI::App& app, const std::string& name,
                               const std::string& description, bool* out,
                               std::array<std::string, 2> words, bool first_is_true,
                               bool default_value) {
  const std::string yes = words[first_is_true ? 0 : 1];
  const std::string no = words[first_is_true ? 1 : 0];
  return add_value_flag(app, name, description,
                        [=](const std::string& value) {
                          auto word = parse_choice(name, value, {words[0], words[1]});
                          if (!word.is_ok()) return word.status();
                          *out = word.value() == yes;
                          return Status::ok();
                        })
      ->type_name(words[0] + "|" + words[1])
      ->default_str(default_value ? yes : no);
}

void define_serve_flags(CLI::App& app, ServerOptions* o, std::string* config_file) {
  const ServerOptions defaults;
  app.name("tarde");
  app.description(kDescription);
  app.footer(kExitCodes);
  app.set_version_flag("--version", "");
  app.get_version_ptr()->group("");  // both are in the usage lines above
  app.get_help_ptr()->group("");
  app.option_defaults()->group("Flags of serve");
  add_value_flag(app, "--listen", "where clients connect",
                 [o](const std::string& value) {
                   return parse_host_port(value, &o->listen_host, &o->listen_port);
                 })
      ->type_name("HOST:PORT")
      ->default_str(defaults.listen_host + ":" + std::to_string(defaults.listen_port));
  add_value_flag(app, "--data", "data directory, created if missing",
                 [o](const std::string& value) {
                   if (value.empty()) return Status::invalid_argument("--data expects a directory");
                   o->data_dir = value;
                   return Status::ok();
                 })
      ->type_name("DIR")
      ->default_str(defaults.data_dir);
  add_two_word_flag(app, "--sync",
                    "always: fsync every commit before replying;\n"
                    "none: survive kill -9 but not a power loss",
                    &o->sync, {"always", "none"}, true, defaults.sync);
  add_number_flag(app, "--max-connections", "connections at once; the next gets ERR OVERLOADED",
                  &o->max_connections, 1, 1'000'000)
      ->default_str(std::to_string(defaults.max_connections));
  add_number_flag(app, "--max-payload", "largest ENQUEUE payload", &o->max_payload_bytes, 1,
                  64ULL << 20)
      ->type_name("BYTES")
      ->default_str(std::to_string(defaults.max_payload_bytes));
  add_number_flag(app, "--due-memory",
                  "retry timers held in memory at most; a burst due within a minute\n"
                  "beyond it is read back from disk as it comes due",
                  &o->due_memory_entries, 1, kMaxDueMemoryEntries)
      ->type_name("ENTRIES")
      ->default_str(std::to_string(defaults.due_memory_entries));
  add_text_flag(app, "--auth-token-file",
                "require AUTH with the token in F (first line; F must be mode 600;\n"
                "default: no AUTH)",
                &o->auth_token_file)
      ->type_name("F");
  const auto set_http = [o](const std::string& value) {
    o->http_explicit = true;
    if (value == "off") {
      o->http_host.clear();
      o->http_port = 0;
      return Status::ok();
    }
    return parse_host_port(value, &o->http_host, &o->http_port);
  };
  add_value_flag(app, "--http-listen",
                 "HOST:PORT or off: serve the dashboard, the JSON API,\n"
                 "GET /metrics and GET /healthz over HTTP; with --auth-token-file\n"
                 "all but /healthz and the page's files need the token",
                 set_http)
      ->type_name("ADDR")
      ->default_str(kDefaultHttpListen);
  add_value_flag(app, "--metrics-listen", "the same as --http-listen (its former name)", set_http)
      ->type_name("HOST:PORT");
  add_parsed_flag(
      app, "--idle-timeout",
      "close a connection that completes no command for this long,\n"
      "unless it waits in RESERVE or holds a lease; 0 = never",
      &o->idle_timeout_ms,
      [](const std::string& value) { return parse_duration_ms(value, "--idle-timeout"); })
      ->type_name("DUR")
      ->default_str(format_duration_ms(defaults.idle_timeout_ms));
  add_value_flag(app, "--retry-lead",
                 "a due retry moves to SENDING this long before its instant, so\n"
                 "that it is durable and handed out at the instant, not one fsync\n"
                 "later; never handed out early; 0 = at the instant",
                 [o](const std::string& value) {
                   auto ms = parse_duration_ms(value, "--retry-lead");
                   if (!ms.is_ok()) return ms.status();
                   if (ms.value() > kMaxRetryLeadMs) {
                     return Status::invalid_argument("--retry-lead must be at most " +
                                                     format_duration_ms(kMaxRetryLeadMs) +
                                                     ", got '" + value + "'");
                   }
                   o->retry_lead_ms = ms.value();
                   return Status::ok();
                 })
      ->type_name("DUR")
      ->default_str(format_duration_ms(defaults.retry_lead_ms));
  add_value_flag(app, "--reconcile-every",
                 "run the reconciler this long after its last pass ended: it\n"
                 "repairs lost timers and requests and reports transactions\n"
                 "stuck past their queue's stuck_after; 0 or off = never",
                 [o](const std::string& value) {
                   if (value == "off") {
                     o->reconcile_every_ms = 0;
                     return Status::ok();
                   }
                   auto ms = parse_duration_ms(value, "--reconcile-every");
                   if (!ms.is_ok()) return ms.status();
                   o->reconcile_every_ms = ms.value();
                   return Status::ok();
                 })
      ->type_name("DUR")
      ->default_str(format_duration_ms(defaults.reconcile_every_ms));
  add_parsed_flag(app, "--log-level",
                  "trace, debug, info, warn, error or off;\n"
                  "debug logs every transition",
                  &o->log_level,
                  [](const std::string& value) {
                    return parse_choice("--log-level", value,
                                        {"trace", "debug", "info", "warn", "error", "off"});
                  })
      ->type_name("L")
      ->default_str(defaults.log_level);
  add_two_word_flag(app, "--log-format", "log lines for people, or one JSON object per line",
                    &o->log_json, {"text", "json"}, false, defaults.log_json);
  add_text_flag(app, "--backup-dir",
                "where BACKUP makes its backups (created if missing; RocksDB's\n"
                "BackupEngine layout; tarde-dump backups lists them; default:\n"
                "none, BACKUP is refused)",
                &o->backup_dir)
      ->type_name("DIR");
  add_number_flag(app, "--backup-rate-limit",
                  "bytes per second a backup may copy, to spare the disks;\n"
                  "0 = unlimited",
                  &o->backup_rate_limit_bytes_per_s, 0, 1ULL << 40)
      ->type_name("BYTES")
      ->default_str(std::to_string(defaults.backup_rate_limit_bytes_per_s));
  add_two_word_flag(app, "--commit-wait",
                    "on: a commit waits briefly (at most twice a commit's time)\n"
                    "for commands of clients that are not waiting for it, so that\n"
                    "more share one fsync; off: each commit starts at once",
                    &o->commit_wait, {"on", "off"}, true, defaults.commit_wait);
  add_two_word_flag(app, "--profile-writes",
                    "time each commit's RocksDB write by its parts (WAL, fsync,\n"
                    "memtable, waits) into STATS and /metrics (write_profile.*);\n"
                    "a diagnostic: it costs a few clock reads per commit",
                    &o->profile_writes, {"on", "off"}, true, defaults.profile_writes);
  if (config_file != nullptr) {
    add_text_flag(app, "--config",
                  "read the flags above from F first (`name = value` lines);\n"
                  "the command line overrides it (default: none)",
                  config_file)
        ->type_name("F");
  }
}

// "  a b  " -> "a b".
std::string trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  const size_t last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// Applies the settings of the config file `path` to *options, line by line,
// with the same value parsers as the flags. An error names the file and the
// line: "PATH:LINE: what is wrong".
Status apply_config_file(const std::string& path, ServerOptions* options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::invalid_argument(path + ": cannot read the config file: it is a directory");
  }
  std::ifstream in(path);
  if (!in) {
    return Status::invalid_argument(path +
                                    ": cannot read the config file: " + std::strerror(errno));
  }
  // The names a file may set: every flag of serve but --config itself.
  std::vector<std::string> names;
  {
    CLI::App app;
    define_serve_flags(app, options, nullptr);
    for (const CLI::Option* option : app.get_options()) {
      for (const std::string& name : option->get_lnames()) names.push_back(name);
    }
  }
  std::string text;
  int line_number = 0;
  while (std::getline(in, text)) {
    ++line_number;
    const std::string where = path + ":" + std::to_string(line_number) + ": ";
    const std::string line = trimmed(text);
    if (line.empty() || line[0] == '#') continue;
    const size_t equals = line.find('=');
    if (equals == std::string::npos) {
      return Status::invalid_argument(where + "expected `name = value`, got '" + line + "'");
    }
    const std::string name = trimmed(line.substr(0, equals));
    const std::string value = trimmed(line.substr(equals + 1));
    const bool known = std::find(names.begin(), names.end(), name) != names.end() &&
                       name != "help" && name != "version";
    if (!known) {
      return Status::invalid_argument(where + "unknown setting '" + name +
                                      "' (the flags of tarde serve, without --; see tarde --help)");
    }
    if (value.empty()) return Status::invalid_argument(where + name + " needs a value");
    auto applied =
        parse_flags([options](CLI::App& app) { define_serve_flags(app, options, nullptr); },
                    {"--" + name + "=" + value});
    if (!applied.is_ok()) {
      std::string message = applied.status().message();
      if (message.rfind("--" + name, 0) == 0) message.erase(0, 2);  // the file's spelling
      return Status::invalid_argument(where + message);
    }
  }
  if (in.bad()) {
    return Status::invalid_argument(path +
                                    ": cannot read the config file: " + std::strerror(errno));
  }
  return Status::ok();
}

}  // namespace

std::string usage_text() {
  ServerOptions unused;  // the flags need somewhere to store; help stores nothing
  std::string unused_config;
  return help_text([&](CLI::App& app) { define_serve_flags(app, &unused, &unused_config); });
}

std::string version_text() { return "tarde 0.1.0 (protocol 1)\n"; }

Result<CommandLine> parse_command_line(const std::vector<std::string>& args) {
  CommandLine line;
  std::vector<std::string> words;
  std::string config_file;
  auto define = [&line, &config_file](CLI::App& app) {
    define_serve_flags(app, &line.options, &config_file);
  };
  auto outcome = parse_flags(define, args, &words);
  if (!outcome.is_ok()) return outcome.status();
  if (!config_file.empty() && outcome.value() == FlagsOutcome::kRun) {
    // The file first, then the command line again over it: its flags win.
    line.options = ServerOptions();
    TARDE_RETURN_IF_ERROR(apply_config_file(config_file, &line.options));
    words.clear();
    outcome = parse_flags(define, args, &words);
    if (!outcome.is_ok()) return outcome.status();
  }
  const std::string command = words.empty() ? "" : words[0];
  if (outcome.value() == FlagsOutcome::kHelp || command == "help") {
    line.action = CommandLine::Action::kHelp;
  } else if (outcome.value() == FlagsOutcome::kVersion || command == "version") {
    line.action = CommandLine::Action::kVersion;
  } else if (command != "serve") {
    return Status::invalid_argument(
        (command.empty() ? std::string("no command") : "unknown command '" + command + "'") +
        " (see tarde --help)");
  } else if (words.size() > 1) {
    return Status::invalid_argument("unexpected argument '" + words[1] + "' (see tarde --help)");
  }
  return line;
}

Status parse_host_port(const std::string& text, std::string* host, uint16_t* port) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    return Status::invalid_argument("expected HOST:PORT, got '" + text + "'");
  }
  std::string h = text.substr(0, colon);
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  const std::string p = text.substr(colon + 1);
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
  if (ec != std::errc() || end != p.data() + p.size() || value > 65535) {
    return Status::invalid_argument("bad port in '" + text + "'");
  }
  *host = h;
  *port = static_cast<uint16_t>(value);
  return Status::ok();
}

}  // namespace tarde::net
