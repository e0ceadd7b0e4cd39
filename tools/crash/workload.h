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

namespace tarde::crash {

// The queue every transaction of a campaign lives on, and its CONFIG: a
// millisecond-scale policy so that retries, leases and dead letters all
// happen within seconds. The breaker is off (TRANSIENT answers are common on
// purpose) and retention is off (the final checks read every transaction).
inline constexpr const char* kQueue = "crash";
const std::vector<std::pair<std::string, std::string>>& queue_settings();

// Where the clients connect. The campaign sets the port after each restart
// and clears it while the server is down. Thread-safe.
struct Endpoint {
  std::atomic<uint16_t> port{0};  // 0: down
};

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

  // `pace_over`: producers spread --transactions over this much time.
  void start(std::chrono::milliseconds pace_over);
  // Stops producing and late messages: dispatchers now answer SUCCESS.
  void begin_drain();
  void stop();
  uint64_t created() const { return created_.load(); }

 private:
  friend class Worker;
  // True when a producer may create one more transaction now (and counts it).
  bool take_creation();

  const CampaignOptions& options_;
  Recorder& recorder_;
  Endpoint& endpoint_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> draining_{false};
  std::atomic<uint64_t> created_{0};
  std::chrono::steady_clock::time_point started_;
  std::chrono::milliseconds pace_over_{1};
  std::vector<std::thread> threads_;
};

}  // namespace tarde::crash
