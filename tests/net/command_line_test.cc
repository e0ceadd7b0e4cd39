// `tarde` command lines: serve's flags (--retry-lead's default, range and
// refusals), the other words, how a bad line is explained, and --config.
#include "net/server/command_line.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "tests/support/temp_dir.h"

using namespace tarde;

namespace {

// The options of `tarde serve <flags>`, or why the line is refused.
Result<net::ServerOptions> serve_flags(std::vector<std::string> flags) {
  flags.insert(flags.begin(), "serve");
  auto line = net::parse_command_line(flags);
  if (!line.is_ok()) return line.status();
  REQUIRE(line.value().action == net::CommandLine::Action::kServe);
  return line.value().options;
}

// The message of a refused `tarde <args>`.
std::string refusal(const std::vector<std::string>& args) {
  auto line = net::parse_command_line(args);
  REQUIRE_FALSE(line.is_ok());
  CHECK(line.status().code() == Status::Code::kInvalidArgument);
  return line.status().message();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("--retry-lead: 10 ms by default, 0 to 1 s accepted, anything else refused") {
  auto defaults = serve_flags({});
  REQUIRE(defaults.is_ok());
  CHECK(defaults.value().retry_lead_ms == 10);

  for (const auto& accepted :
       {std::pair<const char*, int64_t>{"0", 0}, {"0ms", 0}, {"250ms", 250}, {"1s", 1000}}) {
    const std::string text = accepted.first;
    CAPTURE(text);
    auto parsed = serve_flags({"--retry-lead", text});
    REQUIRE(parsed.is_ok());
    CHECK(parsed.value().retry_lead_ms == accepted.second);
  }
  auto joined = serve_flags({"--retry-lead=20ms"});
  REQUIRE(joined.is_ok());
  CHECK(joined.value().retry_lead_ms == 20);

  auto too_long = serve_flags({"--retry-lead", "2s"});
  REQUIRE_FALSE(too_long.is_ok());
  CHECK(too_long.status().message().find("at most 1s") != std::string::npos);
  CHECK_FALSE(serve_flags({"--retry-lead", "soon"}).is_ok());
  CHECK_FALSE(serve_flags({"--retry-lead", "-5ms"}).is_ok());
  auto missing = serve_flags({"--retry-lead"});
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().message().find("needs a value") != std::string::npos);
}

TEST_CASE("--reconcile-every: 1 min by default, 0 or off disables, a bad DUR is refused") {
  auto defaults = serve_flags({});
  REQUIRE(defaults.is_ok());
  CHECK(defaults.value().reconcile_every_ms == 60'000);
  for (const auto& accepted :
       {std::pair<const char*, int64_t>{"0", 0}, {"off", 0}, {"200ms", 200}, {"5m", 300'000}}) {
    const std::string text = accepted.first;
    CAPTURE(text);
    auto parsed = serve_flags({"--reconcile-every", text});
    REQUIRE(parsed.is_ok());
    CHECK(parsed.value().reconcile_every_ms == accepted.second);
  }
  for (const char* refused : {"never", "-1s", "1 h", "Off"}) {
    CAPTURE(refused);
    CHECK_FALSE(serve_flags({"--reconcile-every", refused}).is_ok());
  }
  CHECK(contains(net::usage_text(),
                 "stuck past their queue's stuck_after; 0 or off = never (default 1m)"));
}

TEST_CASE("serve's flags: defaults, both spellings, the last of a repeated flag") {
  auto defaults = serve_flags({});
  REQUIRE(defaults.is_ok());
  const net::ServerOptions& d = defaults.value();
  CHECK(d.listen_host == "127.0.0.1");
  CHECK(d.listen_port == 7400);
  CHECK(d.data_dir == "./tarde-data");
  CHECK(d.sync);
  CHECK(d.max_connections == 10'000);
  CHECK(d.max_payload_bytes == 1 << 20);
  CHECK(d.idle_timeout_ms == 300'000);
  CHECK(d.log_level == "info");
  CHECK_FALSE(d.log_json);
  CHECK(d.http_host == "127.0.0.1");
  CHECK(d.http_port == 7401);
  CHECK_FALSE(d.http_explicit);
  CHECK(d.auth_token_file.empty());
  CHECK(d.due_memory_entries == 131'072);

  auto set = serve_flags({"--listen=[::1]:9000",
                          "--data",
                          "/tmp/x",
                          "--sync",
                          "none",
                          "--max-connections=5",
                          "--max-payload",
                          "64",
                          "--idle-timeout",
                          "0",
                          "--due-memory",
                          "1000",
                          "--log-level",
                          "debug",
                          "--log-format=json",
                          "--metrics-listen",
                          "127.0.0.1:9100",
                          "--auth-token-file",
                          "/tmp/token",
                          "--listen",
                          "0.0.0.0:7401"});
  REQUIRE(set.is_ok());
  const net::ServerOptions& o = set.value();
  CHECK(o.listen_host == "0.0.0.0");  // the last --listen wins
  CHECK(o.listen_port == 7401);
  CHECK(o.data_dir == "/tmp/x");
  CHECK_FALSE(o.sync);
  CHECK(o.max_connections == 5);
  CHECK(o.max_payload_bytes == 64);
  CHECK(o.due_memory_entries == 1000);
  CHECK(o.idle_timeout_ms == 0);
  CHECK(o.log_level == "debug");
  CHECK(o.log_json);
  CHECK(o.http_host == "127.0.0.1");
  CHECK(o.http_port == 9100);
  CHECK(o.http_explicit);
  CHECK(o.auth_token_file == "/tmp/token");
}

TEST_CASE("--http-listen sets the HTTP address or turns it off; --metrics-listen is its alias") {
  auto set = serve_flags({"--http-listen", "0.0.0.0:8080"});
  REQUIRE(set.is_ok());
  CHECK(set.value().http_host == "0.0.0.0");
  CHECK(set.value().http_port == 8080);
  CHECK(set.value().http_explicit);
  auto off = serve_flags({"--http-listen", "off"});
  REQUIRE(off.is_ok());
  CHECK(off.value().http_host.empty());
  CHECK(off.value().http_explicit);
  auto alias = serve_flags({"--metrics-listen", "127.0.0.1:9"});
  REQUIRE(alias.is_ok());
  CHECK(alias.value().http_port == 9);
  CHECK(refusal({"serve", "--http-listen", "nowhere"}) ==
        "--http-listen: expected HOST:PORT, got 'nowhere'");
}

TEST_CASE("a bad serve line names the flag and what it expects") {
  CHECK(refusal({"serve", "--bogus"}) == "unknown flag --bogus (see tarde --help)");
  CHECK(refusal({"serve", "--bogus=1"}) == "unknown flag --bogus (see tarde --help)");
  CHECK(refusal({"serve", "--listen"}) == "--listen needs a value (HOST:PORT)");
  CHECK(refusal({"serve", "--listen", "nowhere"}) == "--listen: expected HOST:PORT, got 'nowhere'");
  CHECK(refusal({"serve", "--metrics-listen", "h:99999"}) ==
        "--metrics-listen: bad port in 'h:99999'");
  CHECK(refusal({"serve", "--sync", "sometimes"}) ==
        "--sync expects always or none, got 'sometimes'");
  CHECK(refusal({"serve", "--log-level", "loud"}) ==
        "--log-level expects trace, debug, info, warn, error or off, got 'loud'");
  CHECK(refusal({"serve", "--log-format", "xml"}) ==
        "--log-format expects text or json, got 'xml'");
  CHECK(refusal({"serve", "--max-connections", "0"}) ==
        "--max-connections expects a whole number from 1 to 1000000, got '0'");
  CHECK(refusal({"serve", "--max-payload", "1e6"}) ==
        "--max-payload expects a whole number from 1 to 67108864, got '1e6'");
  CHECK(refusal({"serve", "--due-memory", "0"}) ==
        "--due-memory expects a whole number from 1 to 100000000, got '0'");
  CHECK(refusal({"serve", "--due-memory", "lots"}) ==
        "--due-memory expects a whole number from 1 to 100000000, got 'lots'");
  CHECK(contains(refusal({"serve", "--idle-timeout", "5 minutes"}), "--idle-timeout must be"));
  CHECK(refusal({"serve", "--data", ""}) == "--data expects a directory");
  CHECK(refusal({"serve", "--data="}) == "--data needs a value (DIR)");
  CHECK(refusal({"serve", "stray"}) == "unexpected argument 'stray' (see tarde --help)");
}

TEST_CASE("tarde's words: serve, help and version; anything else is refused") {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"-h"}, {"help"}, {"serve", "--help"}, {"serve", "--data", "d", "-h"}}) {
    auto line = net::parse_command_line(args);
    REQUIRE(line.is_ok());
    CHECK(line.value().action == net::CommandLine::Action::kHelp);
  }
  for (const auto& args : std::vector<std::vector<std::string>>{{"--version"}, {"version"}}) {
    auto line = net::parse_command_line(args);
    REQUIRE(line.is_ok());
    CHECK(line.value().action == net::CommandLine::Action::kVersion);
  }
  CHECK(refusal({"frobnicate"}) == "unknown command 'frobnicate' (see tarde --help)");
  CHECK(refusal({"--data", "d"}) == "no command (see tarde --help)");
  CHECK(refusal({}) == "no command (see tarde --help)");
  CHECK(contains(net::version_text(), "tarde 0.1.0"));
}

TEST_CASE("tarde --help lists every flag of serve with its default, then the exit codes") {
  const std::string help = net::usage_text();
  for (const char* line :
       {"  tarde serve [flags]     run the server",
        "  --listen HOST:PORT          where clients connect (default 127.0.0.1:7400)",
        "  --data DIR                  data directory, created if missing (default ./tarde-data)",
        "                              none: survive kill -9 but not a power loss (default always)",
        "  --max-connections N         connections at once; the next gets ERR OVERLOADED (default "
        "10000)",
        "  --max-payload BYTES         largest ENQUEUE payload (default 1048576)",
        "  --auth-token-file F         require AUTH",
        "  --http-listen ADDR          HOST:PORT or off: serve the dashboard",
        "unless it waits in RESERVE or holds a lease; 0 = never (default 5m)",
        "later; never handed out early; 0 = at the instant (default 10ms)",
        "  --log-level L               trace, debug, info, warn, error or off;",
        "debug logs every transition (default info)",
        "  --log-format text|json      log lines for people, or one JSON object per line (default "
        "text)",
        "Exit codes of serve:", "  7  the data directory is damaged",
        "A refused data directory is left exactly as it was"}) {
    CHECK_MESSAGE(contains(help, line), line);
  }
}

namespace {

// Writes `text` to `path`.
void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  REQUIRE(out.good());
}

}  // namespace

TEST_CASE("--config FILE: every serve setting as `name = value`, comments and blank lines") {
  testing::TempDir dir;
  const std::string conf = dir.sub("tarde.conf");
  write_text(conf,
             "# tarde serve's settings\n"
             "\n"
             "listen = 0.0.0.0:7500\n"
             "  data=/var/lib/tarde  \n"
             "sync = none\r\n"
             "\t# indented comment\n"
             "max-connections = 12\n"
             "max-payload = 4096\n"
             "auth-token-file = /etc/tarde/token with space\n"
             "metrics-listen = 127.0.0.1:9100\n"
             "idle-timeout = 1m\n"
             "retry-lead = 20ms\n"
             "reconcile-every = 200ms\n"
             "log-level = warn\n"
             "log-format = json\n"
             "backup-dir = /var/lib/tarde-backups\n"
             "backup-rate-limit = 1000000\n"
             "sync = always\n");  // the last of a repeated name wins, as on the command line
  auto parsed = serve_flags({"--config", conf});
  REQUIRE(parsed.is_ok());
  const net::ServerOptions& o = parsed.value();
  CHECK(o.listen_host == "0.0.0.0");
  CHECK(o.listen_port == 7500);
  CHECK(o.data_dir == "/var/lib/tarde");
  CHECK(o.sync);
  CHECK(o.max_connections == 12);
  CHECK(o.max_payload_bytes == 4096);
  CHECK(o.auth_token_file == "/etc/tarde/token with space");
  CHECK(o.http_host == "127.0.0.1");
  CHECK(o.http_port == 9100);
  CHECK(o.idle_timeout_ms == 60'000);
  CHECK(o.retry_lead_ms == 20);
  CHECK(o.reconcile_every_ms == 200);
  CHECK(o.log_level == "warn");
  CHECK(o.log_json);
  CHECK(o.backup_dir == "/var/lib/tarde-backups");
  CHECK(o.backup_rate_limit_bytes_per_s == 1'000'000);

  // An empty file (only comments) leaves every default.
  const std::string empty = dir.sub("empty.conf");
  write_text(empty, "# nothing set\n\n");
  auto defaults = serve_flags({"--config=" + empty});
  REQUIRE(defaults.is_ok());
  CHECK(defaults.value().listen_port == 7400);
  CHECK(defaults.value().data_dir == "./tarde-data");
}

TEST_CASE("--config: flags on the command line override the file, before or after --config") {
  testing::TempDir dir;
  const std::string conf = dir.sub("tarde.conf");
  write_text(conf, "listen = 127.0.0.1:7500\ndata = /var/lib/tarde\nlog-level = debug\n");
  for (const auto& flags : std::vector<std::vector<std::string>>{
           {"--config", conf, "--data", "/tmp/other", "--listen=127.0.0.1:0"},
           {"--data", "/tmp/other", "--listen", "127.0.0.1:0", "--config", conf}}) {
    auto parsed = serve_flags(flags);
    REQUIRE(parsed.is_ok());
    CHECK(parsed.value().data_dir == "/tmp/other");
    CHECK(parsed.value().listen_port == 0);
    CHECK(parsed.value().log_level == "debug");  // from the file: not overridden
  }
  // --help still wins over a config file, even a bad one.
  auto help = net::parse_command_line({"serve", "--config", dir.sub("missing"), "--help"});
  REQUIRE(help.is_ok());
  CHECK(help.value().action == net::CommandLine::Action::kHelp);
  // A bad flag on the command line is refused as usual.
  CHECK(refusal({"serve", "--config", conf, "--sync", "x"}) ==
        "--sync expects always or none, got 'x'");
}

TEST_CASE("--config: an error names the file and the line") {
  testing::TempDir dir;
  const std::string conf = dir.sub("tarde.conf");
  auto refused_file = [&](const std::string& text) {
    write_text(conf, text);
    return refusal({"serve", "--config", conf});
  };
  CHECK(refused_file("# ok\nlisten = 127.0.0.1:1\nbogus = 1\n") ==
        conf +
            ":3: unknown setting 'bogus' (the flags of tarde serve, without --; see tarde --help)");
  CHECK(
      refused_file("--data = /x\n") ==
      conf +
          ":1: unknown setting '--data' (the flags of tarde serve, without --; see tarde --help)");
  CHECK(
      refused_file("config = /etc/other.conf\n") ==
      conf +
          ":1: unknown setting 'config' (the flags of tarde serve, without --; see tarde --help)");
  CHECK(refused_file("help = 1\n").find(":1: unknown setting 'help'") != std::string::npos);
  CHECK(refused_file("\n\nsync = sometimes\n") ==
        conf + ":3: sync expects always or none, got 'sometimes'");
  CHECK(refused_file("max-connections = 0\n") ==
        conf + ":1: max-connections expects a whole number from 1 to 1000000, got '0'");
  CHECK(refused_file("listen = nowhere\n") ==
        conf + ":1: listen: expected HOST:PORT, got 'nowhere'");
  CHECK(refused_file("retry-lead = 2s\n") == conf + ":1: retry-lead must be at most 1s, got '2s'");
  CHECK(refused_file("data =\n") == conf + ":1: data needs a value");
  CHECK(refused_file("# fine\nlisten 127.0.0.1:7400\n") ==
        conf + ":2: expected `name = value`, got 'listen 127.0.0.1:7400'");
  CHECK(refused_file("= 5\n") ==
        conf + ":1: unknown setting '' (the flags of tarde serve, without --; see tarde --help)");

  const std::string missing = dir.sub("missing.conf");
  CHECK(refusal({"serve", "--config", missing}) ==
        missing + ": cannot read the config file: No such file or directory");
  CHECK(refusal({"serve", "--config", dir.path()}) ==
        dir.path() + ": cannot read the config file: it is a directory");
  if (::geteuid() != 0) {  // root reads any file
    write_text(conf, "sync = none\n");
    REQUIRE(::chmod(conf.c_str(), 0) == 0);
    CHECK(refusal({"serve", "--config", conf}) ==
          conf + ": cannot read the config file: Permission denied");
  }
  CHECK(refusal({"serve", "--config"}) == "--config needs a value (F)");
}

TEST_CASE("tarde --help lists --config") {
  const std::string help = net::usage_text();
  CHECK(contains(help, "  tarde serve --config FILE [flags]"));
  CHECK(contains(help, "  --config F                  read the flags above from F first"));
}

TEST_CASE("--backup-dir and --backup-rate-limit: defaults, values, refusals, help") {
  auto defaults = serve_flags({});
  REQUIRE(defaults.is_ok());
  CHECK(defaults.value().backup_dir.empty());
  CHECK(defaults.value().backup_rate_limit_bytes_per_s == 0);
  auto set = serve_flags({"--backup-dir", "/srv/backups", "--backup-rate-limit=5000"});
  REQUIRE(set.is_ok());
  CHECK(set.value().backup_dir == "/srv/backups");
  CHECK(set.value().backup_rate_limit_bytes_per_s == 5000);
  CHECK(refusal({"serve", "--backup-dir="}) == "--backup-dir needs a value (DIR)");
  CHECK(contains(refusal({"serve", "--backup-rate-limit", "fast"}), "--backup-rate-limit"));
  const std::string help = net::usage_text();
  CHECK(contains(help, "  --backup-dir DIR            where BACKUP makes its backups"));
  CHECK(contains(help, "  --backup-rate-limit BYTES   bytes per second a backup may copy"));
  CHECK(contains(help, "0 = unlimited (default 0)"));
}

namespace {

// Checks an on/off flag of `serve`: its default, both words, and the
// refusal (naming the flag) of anything else.
void check_on_off_flag(const std::string& flag, bool net::ServerOptions::*field, bool by_default) {
  auto defaults = serve_flags({});
  REQUIRE(defaults.is_ok());
  CHECK(defaults.value().*field == by_default);
  auto on = serve_flags({flag, "on"});
  REQUIRE(on.is_ok());
  CHECK(on.value().*field);
  auto off = serve_flags({flag, "off"});
  REQUIRE(off.is_ok());
  CHECK_FALSE(off.value().*field);
  for (const char* refused : {"yes", "no", "1", "0", "ON", "Off", ""}) {
    CAPTURE(refused);
    auto parsed = serve_flags({flag, refused});
    REQUIRE_FALSE(parsed.is_ok());
    CHECK(contains(parsed.status().message(), flag));
  }
}

}  // namespace

TEST_CASE("--commit-wait: on by default, on or off, anything else refused") {
  check_on_off_flag("--commit-wait", &net::ServerOptions::commit_wait, true);
}

TEST_CASE("--profile-writes: off by default, on or off, anything else refused") {
  check_on_off_flag("--profile-writes", &net::ServerOptions::profile_writes, false);
}
