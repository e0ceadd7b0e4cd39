#include "net/server/command_line.h"

#include <algorithm>
#include <charconv>

#include "net/wire/tokens.h"

namespace tarde::net {
namespace {

Result<uint64_t> parse_count(const std::string& flag, const std::string& value, uint64_t max) {
  uint64_t parsed = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (ec != std::errc() || end != value.data() + value.size() || value.empty() || parsed == 0 ||
      parsed > max) {
    return Status::invalid_argument(flag + " expects a whole number from 1 to " +
                                    std::to_string(max) + ", got '" + value + "'");
  }
  return parsed;
}

Status apply_flag(const std::string& flag, const std::string& value, ServerOptions* o) {
  if (flag == "--listen") return parse_host_port(value, &o->listen_host, &o->listen_port);
  if (flag == "--metrics-listen") return parse_host_port(value, &o->metrics_host, &o->metrics_port);
  if (flag == "--data") {
    if (value.empty()) return Status::invalid_argument("--data expects a directory");
    o->data_dir = value;
    return Status::ok();
  }
  if (flag == "--sync") {
    if (value != "always" && value != "none") {
      return Status::invalid_argument("--sync expects always or none, got '" + value + "'");
    }
    o->sync = value == "always";
    return Status::ok();
  }
  if (flag == "--max-connections") {
    auto n = parse_count(flag, value, 1'000'000);
    if (!n.is_ok()) return n.status();
    o->max_connections = n.value();
    return Status::ok();
  }
  if (flag == "--max-payload") {
    auto n = parse_count(flag, value, 64ULL << 20);
    if (!n.is_ok()) return n.status();
    o->max_payload_bytes = n.value();
    return Status::ok();
  }
  if (flag == "--idle-timeout") {
    auto ms = parse_duration_ms(value, "--idle-timeout");
    if (!ms.is_ok()) return ms.status();
    o->idle_timeout_ms = ms.value();
    return Status::ok();
  }
  if (flag == "--retry-lead") {
    auto ms = parse_duration_ms(value, "--retry-lead");
    if (!ms.is_ok()) return ms.status();
    if (ms.value() > kMaxRetryLeadMs) {
      return Status::invalid_argument("--retry-lead must be at most 1s, got '" + value + "'");
    }
    o->retry_lead_ms = ms.value();
    return Status::ok();
  }
  if (flag == "--log-format") {
    if (value != "text" && value != "json") {
      return Status::invalid_argument("--log-format expects text or json, got '" + value + "'");
    }
    o->log_json = value == "json";
    return Status::ok();
  }
  if (flag == "--auth-token-file") {
    o->auth_token_file = value;
    return Status::ok();
  }
  if (flag == "--log-level") {
    for (const char* level : {"trace", "debug", "info", "warn", "error", "off"}) {
      if (value == level) {
        o->log_level = value;
        return Status::ok();
      }
    }
    return Status::invalid_argument("--log-level expects trace, debug, info, warn, error or off");
  }
  return Status::invalid_argument("unknown flag " + flag + " (see tarde --help)");
}

}  // namespace

std::string usage_text() {
  return R"(tarde - durable deferred retries

Usage:
  tarde serve [flags]     run the server
  tarde --help            show this text
  tarde --version         print the version

Flags of serve:
  --listen HOST:PORT          where clients connect (default 127.0.0.1:7400)
  --data DIR                  data directory, created if missing (default ./tarde-data)
  --sync always|none          always: fsync every commit before replying (default);
                              none: survive kill -9 but not a power loss
  --max-connections N         connections at once; the next gets ERR OVERLOADED (default 10000)
  --max-payload BYTES         largest ENQUEUE payload (default 1048576)
  --auth-token-file F         require AUTH with the token in F (first line; F must be mode 600)
  --metrics-listen HOST:PORT  serve GET /metrics and GET /healthz over HTTP
  --idle-timeout DUR          close a connection that completes no command for this long,
                              unless it waits in RESERVE or holds a lease (default 5m; 0 = never)
  --retry-lead DUR             a due retry moves to SENDING this long before its instant, so
                              that it is durable and handed out at the instant, not one fsync
                              later; never handed out early (default 10ms; 0 = at the instant)
  --log-level L               trace, debug, info, warn, error or off (default info);
                              debug logs every transition
  --log-format text|json      log lines for people (default) or one JSON object per line

Exit codes of serve:
  0  stopped by SIGINT or SIGTERM
  2  bad command line
  3  could not start for another reason (port in use, token file refused, ...)
  4  the data directory is locked by another process
  5  the data directory was written by a newer tarde (format version)
  6  the data directory is not a tarde store (another RocksDB, or other files)
  7  the data directory is damaged (corrupt WAL, missing SST, MANIFEST or CURRENT)
  8  the data directory is not a directory, or not readable and writable
A refused data directory is left exactly as it was; the one error line says what to do.
)";
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

Status for_each_flag(
    const std::vector<std::string>& args, std::initializer_list<std::string_view> switches,
    const std::function<Status(const std::string& flag, const std::string& value)>& apply) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    if (flag.rfind("--", 0) != 0) {
      return Status::invalid_argument("unexpected argument '" + flag + "' (see --help)");
    }
    std::string value;
    const size_t eq = flag.find('=');
    const bool is_switch = std::find(switches.begin(), switches.end(), flag) != switches.end();
    if (eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if (!is_switch && i + 1 < args.size()) {
      value = args[++i];
    } else if (!is_switch) {
      return Status::invalid_argument(flag + " needs a value");
    }
    TARDE_RETURN_IF_ERROR(apply(flag, value));
  }
  return Status::ok();
}

Result<ServerOptions> parse_serve_flags(const std::vector<std::string>& args) {
  ServerOptions options;
  TARDE_RETURN_IF_ERROR(
      for_each_flag(args, {}, [&](const std::string& flag, const std::string& value) {
        return apply_flag(flag, value, &options);
      }));
  return options;
}

}  // namespace tarde::net
