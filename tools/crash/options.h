#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace tarde::crash {

// Every crash point the server defines (base/crash_point.h), in the order
// the summary prints them.
const std::vector<std::string>& all_crash_points();

// What one tarde-crash campaign does, from its command line. A plain value.
struct CampaignOptions {
  uint64_t seed = 0;
  std::chrono::seconds duration{60};
  // Stop once this many kills happened (0: run for the whole duration).
  uint64_t kills_max = 0;
  uint32_t clients = 4;
  // Transactions the producers create over the whole campaign.
  uint64_t transactions = 400;
  // At most this many bursts of delayed ENQUEUEs (one before each start armed
  // at wheel.after_page, which needs a full page of due entries on disk).
  uint64_t bursts_max = 200;
  // `tarde-dump check` runs after every Nth death (and always at the end). It
  // reads the whole store, so on a long campaign whose store keeps growing,
  // checking after every death makes the run's time grow with its square.
  uint64_t dump_check_every = 1;
  // Crash points the restarts may arm; empty means random SIGKILLs only.
  std::vector<std::string> crash_points;
  std::string data_dir;  // empty: a fresh temp dir
  bool keep = false;     // keep the data dir (it is always kept on violations)
  std::string server_path;
  std::string dump_path;
  bool verbose = false;
  bool help = false;  // --help: print usage_text() instead of running
  // --embedded: kill a program that embeds tarde (tarde-crash-embedded,
  // next to tarde-crash) instead of the server.
  bool embedded = false;
  std::string embedded_path;
};

// The usage text printed by --help and after a usage error: every flag with
// its default.
std::string usage_text();

// Parses argv (without the program name): `--flag value` or `--flag=value`.
// `binary_dir` is where the tarde and tarde-dump binaries are looked for when
// --server/--dump are absent. invalid_argument with a message that names the
// flag and what it expects for a usage error.
Result<CampaignOptions> parse_options(const std::vector<std::string>& args,
                                      const std::string& binary_dir);

}  // namespace tarde::crash
