#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tools/crash/options.h"
#include "tools/crash/recorder.h"
#include "tools/crash/workload_state.h"

namespace tarde::crash {

// Workload runs --clients threads, each with its own connection, through
// whole lifecycles: producing (ENQUEUE, some delayed, some sent=1),
// dispatching (RESERVE, SENT or not, RESPOND with a random answer, RELEASE,
// abandoned leases, disconnects mid-lease), late and duplicate answers and
// RESOLVE of scheduled transactions. Every request and reply goes to the
// Recorder. A failed connection marks the request in flight pending and the
// thread reconnects once the Endpoint has a port again.
//
// Owned by the campaign's main thread, which calls start, begin_drain and
// stop; the threads end in stop (or the destructor).
class Workload {
 public:
  Workload(const CampaignOptions& options, Recorder& recorder, Endpoint& endpoint);
  ~Workload();
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  void start();
  // The campaign's deaths so far, which pace the producers under --kills.
  void set_kills(uint64_t kills) { state_.kills = kills; }
  // Stops producing and late messages: dispatchers now answer SUCCESS.
  void begin_drain();
  void stop();
  uint64_t created() const { return state_.created.load(); }

 private:
  WorkloadState state_;
  std::vector<std::thread> threads_;
};

}  // namespace tarde::crash
