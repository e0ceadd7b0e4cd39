#include "tools/crash/options.h"

#include <charconv>
#include <random>

#include "net/server/command_line.h"

namespace tarde::crash {
namespace {

Result<uint64_t> parse_number(const std::string& flag, const std::string& text, uint64_t min,
                              uint64_t max) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < min ||
      value > max) {
    return Status::invalid_argument(flag + " expects a whole number from " + std::to_string(min) +
                                    " to " + std::to_string(max) + ", got '" + text + "'");
  }
  return value;
}

Result<std::vector<std::string>> parse_points(const std::string& text) {
  if (text == "all") return all_crash_points();
  if (text == "none") return std::vector<std::string>{};
  std::vector<std::string> points;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    bool known = false;
    for (const std::string& point : all_crash_points()) known = known || point == name;
    if (!known) return Status::invalid_argument("unknown crash point '" + name + "'");
    points.push_back(name);
    start = comma + 1;
  }
  return points;
}

// Applies one flag that takes a value. invalid_argument when it is unknown or
// its value is bad.
Status apply_valued(const std::string& flag, const std::string& value, CampaignOptions* o) {
  if (flag == "--seed") {
    auto n = parse_number(flag, value, 0, UINT64_MAX);
    if (!n.is_ok()) return n.status();
    o->seed = n.value();
  } else if (flag == "--duration") {
    auto n = parse_number(flag, value, 1, 86'400);
    if (!n.is_ok()) return n.status();
    o->duration = std::chrono::seconds(n.value());
  } else if (flag == "--kills") {
    auto n = parse_number(flag, value, 0, 1'000'000);
    if (!n.is_ok()) return n.status();
    o->kills_max = n.value();
  } else if (flag == "--clients") {
    auto n = parse_number(flag, value, 1, 64);
    if (!n.is_ok()) return n.status();
    o->clients = static_cast<uint32_t>(n.value());
  } else if (flag == "--transactions") {
    auto n = parse_number(flag, value, 1, 1'000'000);
    if (!n.is_ok()) return n.status();
    o->transactions = n.value();
  } else if (flag == "--crash-points") {
    auto points = parse_points(value);
    if (!points.is_ok()) return points.status();
    o->crash_points = points.value();
  } else if (flag == "--data") {
    o->data_dir = value;
  } else if (flag == "--server") {
    o->server_path = value;
  } else if (flag == "--dump") {
    o->dump_path = value;
  } else {
    return Status::invalid_argument("unknown flag " + flag);
  }
  return Status::ok();
}

}  // namespace

const std::vector<std::string>& all_crash_points() {
  static const std::vector<std::string> points = {
      "commit.before_write",    "commit.after_write",    "timer.after_fire",
      "reserve.after_hand_out", "recovery.after_repair", "wheel.after_page",
  };
  return points;
}

const char* usage_text() {
  return R"(usage: tarde-crash [options]

Runs the real tarde server, drives concurrent clients through whole retry
lifecycles, kills the server with SIGKILL at random instants and at named
crash points, restarts it on the same data, and checks tarde's five
guarantees (docs/design.md) plus `tarde-dump check` after every restart and
at the end.

options:
  --seed N                  random seed (default: drawn; printed so a run can be replayed)
  --duration SECONDS        how long to run before draining (default 60)
  --kills N                 stop as soon as N kills happened (default 0: run the duration)
  --clients N               concurrent client connections (default 4)
  --transactions N          transactions to create over the run (default 400)
  --crash-points LIST       all, none, or NAME,NAME,... armed at random restarts
                            (default all): commit.before_write, commit.after_write,
                            timer.after_fire, reserve.after_hand_out,
                            recovery.after_repair, wheel.after_page
  --data DIR                data directory (default: a fresh temp dir)
  --keep                    keep the data directory (it is kept anyway on violations)
  --server PATH             the tarde binary (default: next to tarde-crash)
  --dump PATH               the tarde-dump binary (default: next to tarde-crash)
  --verbose                 log every kill, restart and unusual reply
  --embedded                kill tarde-crash-embedded, a program that embeds tarde
                            (tarde/embedded.h) and journals its calls, instead of the
                            server (random SIGKILLs, and the crash points the library
                            reaches: commit.before_write, commit.after_write,
                            timer.after_fire)

exit status: 0 no violations, 1 violations, 2 usage error, 3 the server could not start
)";
}

Result<CampaignOptions> parse_options(const std::vector<std::string>& args,
                                      const std::string& binary_dir) {
  CampaignOptions o;
  o.seed = std::random_device{}();
  o.crash_points = all_crash_points();
  TARDE_RETURN_IF_ERROR(net::for_each_flag(
      args, {"--keep", "--verbose", "--embedded"},
      [&](const std::string& flag, const std::string& value) {
        if (flag == "--keep") {
          o.keep = true;
          return Status::ok();
        }
        if (flag == "--verbose") {
          o.verbose = true;
          return Status::ok();
        }
        if (flag == "--embedded") {
          o.embedded = true;
          return Status::ok();
        }
        return apply_valued(flag, value, &o);
      }));
  if (o.server_path.empty()) o.server_path = binary_dir + "/tarde";
  if (o.dump_path.empty()) o.dump_path = binary_dir + "/tarde-dump";
  o.embedded_path = binary_dir + "/tarde-crash-embedded";
  return o;
}

}  // namespace tarde::crash
