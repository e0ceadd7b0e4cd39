#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tools/crash/checks.h"
#include "tools/crash/options.h"

namespace tarde::crash {

// Exit statuses of tarde-crash.
inline constexpr int kExitClean = 0;
inline constexpr int kExitViolations = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitNoServer = 3;

// Both campaigns' pacing. Random kills come this long after a (re)start:
// short enough for many kills per minute, long enough for whole lifecycles
// to run in between. Progress is printed every kProgressEvery; the final
// drain gives up when no transaction settled for kDrainStallLimit.
inline constexpr int64_t kLifeMinMs = 150;
inline constexpr int64_t kLifeMaxMs = 1500;
inline constexpr std::chrono::seconds kProgressEvery{2};
inline constexpr std::chrono::seconds kDrainStallLimit{60};
// An armed life gets at least this long to reach its crash point before it
// is killed at random after all.
inline constexpr int64_t kArmedLifeMs = 3000;

// Seconds since `start`, for progress lines and summaries.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The figures a campaign prints in its summary.
struct CampaignFigures {
  uint64_t kills_random = 0;
  std::map<std::string, uint64_t> kills_at_point;  // crash point -> deaths there
  uint64_t restarts = 0;
  uint64_t dump_checks = 0;
  uint64_t burst_transactions = 0;
  uint64_t kills() const;
};

// What both campaigns' summaries end with: the checks run, every violation,
// and the one line that tests and scripts read ("tarde-crash: seed ...
// violations N"). Flushes stdout.
struct SummaryEnd {
  uint64_t seed = 0;
  uint64_t kills = 0;
  uint64_t restarts = 0;
  uint64_t dump_checks = 0;
};
void print_summary_end(const RecordCounts& counts, const CheckReport& report,
                       const SummaryEnd& end);

// Runs one campaign as the options say: start the server, drive the
// workload, kill and restart until the duration or kill count is reached,
// drain, check. Prints the seed, progress lines and the summary on stdout.
// Returns the process exit status (kExit*).
int run_campaign(const CampaignOptions& options);

}  // namespace tarde::crash
