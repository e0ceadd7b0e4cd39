#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tools/crash/options.h"
#include "tools/crash/recorder.h"

namespace tarde::crash {

// The queue every transaction of a campaign lives on, and its CONFIG: a
// millisecond-scale policy so that retries, leases and dead letters all
// happen within seconds. The breaker is off (TRANSIENT answers are common on
// purpose) and retention is off (the final checks read every transaction).
inline constexpr const char* kQueue = "crash";
const std::vector<std::pair<std::string, std::string>>& queue_settings();

// Producers create every transaction within this share of the run, so that
// the rest of it still retries, expires leases and dead-letters them.
inline constexpr double kCreatedBy = 0.75;

// The share of a campaign done after `elapsed` and `kills`: of --duration,
// or of --kills when that is further along (1 or more: the run is over).
double run_share(const CampaignOptions& options, std::chrono::steady_clock::duration elapsed,
                 uint64_t kills);

// Where the clients connect. The campaign sets the port after each restart
// and clears it while the server is down. Thread-safe.
struct Endpoint {
  std::atomic<uint16_t> port{0};  // 0: down
};

// WorkloadState is what a Workload's client threads share: the campaign's
// options, the recorder, the endpoint, the stop and drain flags, and the
// pace at which transactions are created. The Workload owns it and its
// threads; each Worker holds a reference. Thread-safe.
struct WorkloadState {
  WorkloadState(const CampaignOptions& options, Recorder& recorder, Endpoint& endpoint)
      : options(options), recorder(recorder), endpoint(endpoint) {}

  // True when a producer may create one more transaction now (and counts it).
  // Creation keeps pace with the share of the run done: of --duration, or
  // of --kills when the kills come first (one kill ahead), whatever a life
  // takes.
  bool take_creation();

  const CampaignOptions& options;
  Recorder& recorder;
  Endpoint& endpoint;
  std::atomic<bool> stopping{false};
  std::atomic<bool> draining{false};
  std::atomic<uint64_t> created{0};
  std::atomic<uint64_t> kills{0};                 // the campaign's deaths so far, which it sets
  std::chrono::steady_clock::time_point started;  // set before the threads start
};

}  // namespace tarde::crash
