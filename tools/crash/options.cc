#include "tools/crash/options.h"

#include <random>

#include "base/cli_flags.h"

namespace tarde::crash {
namespace {

constexpr const char* kDescription = R"(usage: tarde-crash [options]

Runs the real tarde server, drives concurrent clients through whole retry
lifecycles, kills the server with SIGKILL at random instants and at named
crash points, restarts it on the same data, and checks tarde's five
guarantees (docs/design.md) plus `tarde-dump check` after every restart and
at the end.
)";

constexpr const char* kFooter =
    "exit status: 0 no violations, 1 violations, 2 usage error, 3 the server could not start\n";

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

std::string point_list() {
  std::string list;
  for (const std::string& point : all_crash_points()) list += (list.empty() ? "" : ", ") + point;
  return list;
}

// tarde-crash's flags, storing into *o.
void define_flags(CLI::App& app, CampaignOptions* o) {
  const CampaignOptions defaults;
  app.name("tarde-crash");
  app.description(kDescription);
  app.footer(kFooter);
  app.get_help_ptr()->group("options");
  app.option_defaults()->group("options");
  add_number_flag(app, "--seed", "random seed (default: drawn; printed so a run can be replayed)",
                  &o->seed, 0, UINT64_MAX);
  add_parsed_flag(app, "--duration", "how long to run before draining", &o->duration,
                  [](const std::string& value) -> Result<std::chrono::seconds> {
                    auto n = parse_whole_number("--duration", value, 1, 86'400);
                    if (!n.is_ok()) return n.status();
                    return std::chrono::seconds(n.value());
                  })
      ->type_name("SECONDS")
      ->default_str(std::to_string(defaults.duration.count()));
  add_number_flag(app, "--kills", "stop as soon as N kills happened; 0 = run the duration",
                  &o->kills_max, 0, 1'000'000)
      ->default_str(std::to_string(defaults.kills_max));
  add_number_flag(app, "--clients", "concurrent client connections", &o->clients, 1, 64)
      ->default_str(std::to_string(defaults.clients));
  add_number_flag(app, "--transactions", "transactions to create over the run", &o->transactions, 1,
                  1'000'000)
      ->default_str(std::to_string(defaults.transactions));
  add_number_flag(app, "--bursts",
                  "at most N bursts of 4200 delayed ENQUEUEs, one before each start armed at "
                  "wheel.after_page",
                  &o->bursts_max, 0, 100'000)
      ->default_str(std::to_string(defaults.bursts_max));
  add_number_flag(app, "--dump-check-every",
                  "run tarde-dump check on the store after every Nth death (always at the end)",
                  &o->dump_check_every, 1, 1'000'000)
      ->default_str(std::to_string(defaults.dump_check_every));
  add_parsed_flag(app, "--crash-points",
                  "all, none, or NAME,NAME,... armed at random restarts:\n" + point_list(),
                  &o->crash_points, parse_points)
      ->type_name("LIST")
      ->default_str("all");
  add_text_flag(app, "--data", "data directory (default: a fresh temp dir)", &o->data_dir)
      ->type_name("DIR");
  app.add_flag("--keep", o->keep, "keep the data directory (it is kept anyway on violations)");
  add_text_flag(app, "--server", "the tarde binary (default: next to tarde-crash)", &o->server_path)
      ->type_name("PATH");
  add_text_flag(app, "--dump", "the tarde-dump binary (default: next to tarde-crash)",
                &o->dump_path)
      ->type_name("PATH");
  app.add_flag("--verbose", o->verbose, "log every kill, restart and unusual reply");
  app.add_flag("--embedded", o->embedded,
               "kill tarde-crash-embedded, a program that embeds tarde (tarde/embedded.h) and "
               "journals its calls, instead of the server (random SIGKILLs, and the crash points "
               "the library reaches: commit.before_write, commit.after_write, timer.after_fire)");
}

}  // namespace

const std::vector<std::string>& all_crash_points() {
  static const std::vector<std::string> points = {
      "commit.before_write",    "commit.after_write",    "timer.after_fire",
      "reserve.after_hand_out", "recovery.after_repair", "wheel.after_page",
      "reconcile.after_slice",
  };
  return points;
}

std::string usage_text() {
  CampaignOptions unused;  // the flags need somewhere to store; help stores nothing
  return help_text([&unused](CLI::App& app) { define_flags(app, &unused); });
}

Result<CampaignOptions> parse_options(const std::vector<std::string>& args,
                                      const std::string& binary_dir) {
  CampaignOptions o;
  o.seed = std::random_device{}();
  o.crash_points = all_crash_points();
  auto outcome = parse_flags([&o](CLI::App& app) { define_flags(app, &o); }, args);
  if (!outcome.is_ok()) return outcome.status();
  o.help = outcome.value() == FlagsOutcome::kHelp;
  if (o.server_path.empty()) o.server_path = binary_dir + "/tarde";
  if (o.dump_path.empty()) o.dump_path = binary_dir + "/tarde-dump";
  o.embedded_path = binary_dir + "/tarde-crash-embedded";
  return o;
}

}  // namespace tarde::crash
