#include "tools/crash/workload.h"

#include "tools/crash/worker.h"

namespace tarde::crash {

Workload::Workload(const CampaignOptions& options, Recorder& recorder, Endpoint& endpoint)
    : state_(options, recorder, endpoint) {}

Workload::~Workload() { stop(); }

void Workload::start() {
  state_.started = std::chrono::steady_clock::now();
  for (uint32_t i = 0; i < state_.options.clients; ++i) {
    threads_.emplace_back([this, i] { Worker(state_, static_cast<int>(i)).run(); });
  }
}

void Workload::begin_drain() { state_.draining = true; }

void Workload::stop() {
  state_.stopping = true;
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

}  // namespace tarde::crash
