// How a campaign's producers pace the creation of transactions
// (tools/crash/workload_state.h): by the share of the run done, of its
// duration or of its kills, whichever is further along.
#include <doctest/doctest.h>

#include <chrono>

#include "tools/crash/workload_state.h"

namespace tarde::crash {
namespace {

using std::chrono::milliseconds;

uint64_t creations_allowed(WorkloadState& state) {
  uint64_t n = 0;
  while (state.take_creation()) n += 1;
  return n;
}

struct Paced {
  explicit Paced(uint64_t kills_max) {
    options.transactions = 1000;
    options.duration = std::chrono::seconds(3600);
    options.kills_max = kills_max;
    state.started = std::chrono::steady_clock::now();
  }
  CampaignOptions options;
  Recorder recorder;
  Endpoint endpoint;
  WorkloadState state{options, recorder, endpoint};
};

TEST_CASE("without --kills, creation follows the clock and ends at three quarters of the run") {
  Paced p(0);
  CHECK(creations_allowed(p.state) == 1);      // a moment in: one
  p.state.started -= milliseconds(1'350'000);  // 0.375 of the hour: half of them
  CHECK(creations_allowed(p.state) == 501 - 1);
  p.state.started -= milliseconds(1'350'000);  // 0.75: the rest, and no more
  CHECK(creations_allowed(p.state) == 1000 - 501);
  p.state.started -= milliseconds(900'000);
  CHECK(creations_allowed(p.state) == 0);
  CHECK(p.state.created.load() == 1000);
}

TEST_CASE("under --kills, creation follows the kills however long a life takes") {
  Paced p(100);
  // No kill yet: one kill's worth, 1000 / (0.75 * 100) = 13.3.
  CHECK(creations_allowed(p.state) == 14);
  p.state.started -= milliseconds(30'000);  // 30 s of the hour, no kill: no more
  CHECK(creations_allowed(p.state) == 0);
  p.state.kills = 36;  // 37 kills' worth: 493.3
  CHECK(creations_allowed(p.state) == 494 - 14);
  p.state.kills = 74;  // three quarters of the kills: everything
  CHECK(creations_allowed(p.state) == 1000 - 494);
}

TEST_CASE("under --kills, a clock that runs out first still paces the rest") {
  Paced p(100);
  p.state.started -= milliseconds(2'700'000);  // three quarters of the hour, no kill
  CHECK(creations_allowed(p.state) == 1000);
}

TEST_CASE("draining stops creation") {
  Paced p(0);
  p.state.started -= milliseconds(3'600'000);
  p.state.draining = true;
  CHECK(creations_allowed(p.state) == 0);
}

}  // namespace
}  // namespace tarde::crash
