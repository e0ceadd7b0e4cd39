#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "clients/cpp/client.h"
#include "tools/crash/recorder.h"
#include "tools/crash/workload_state.h"

namespace tarde::crash {

// Worker is one client thread of a Workload: one connection (reopened after
// every failure), its own random stream, and what it remembers for late
// messages. Lives on its thread only.
class Worker {
 public:
  Worker(WorkloadState& workload, int index);
  void run();

 private:
  using Call = std::function<Result<client::Summary>(client::Client&)>;

  bool connected();
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  uint64_t below(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_); }
  // Sends one request about `tx_id` and records it; nullopt unless a summary
  // came back (a transport failure also drops the connection).
  std::optional<client::Summary> call(OpKind kind, const std::string& tx_id, uint32_t attempt,
                                      std::string word, bool deliberate, const Call& fn);
  void step();
  void produce();
  void send_enqueue();
  std::optional<HandOut> reserve(std::chrono::milliseconds wait);
  void dispatch();
  void answer(const std::string& tx_id, uint32_t attempt);
  void drain_step();
  void late_answer();
  void resolve_scheduled();
  client::Answer random_answer();
  void remember(const std::string& tx_id, const client::Summary& summary, uint32_t attempt);

  WorkloadState& workload_;
  int index_;
  std::mt19937_64 rng_;
  std::unique_ptr<client::Client> client_;
  uint64_t next_tx_ = 0;
  // Whether the last RESERVE got a request: late messages and RESOLVEs are
  // mixed into real work, not sent in a loop while the queue is idle.
  bool busy_ = false;
  // A created-or-pending ENQUEUE this worker still has to see acknowledged.
  std::optional<std::pair<std::string, TxPlan>> enqueue_;
  std::vector<std::pair<std::string, uint32_t>> answered_;  // (tx, attempt) answered OK
  std::vector<std::string> scheduled_;                      // seen SCHEDULED
};

}  // namespace tarde::crash
