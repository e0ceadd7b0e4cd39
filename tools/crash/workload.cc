#include "tools/crash/workload.h"

#include "tools/crash/worker.h"

namespace tarde::crash {

const std::vector<std::pair<std::string, std::string>>& queue_settings() {
  static const std::vector<std::pair<std::string, std::string>> settings = {
      {"max_attempts", "4"},     {"base", "20ms"},          {"factor", "2"},
      {"cap", "500ms"},          {"jitter", "0.2"},         {"transient_base", "10ms"},
      {"transient_cap", "100ms"}, {"lease", "300ms"},       {"max_deliveries", "3"},
      {"breaker", "0"},          {"retention", "0"},        {"response_timeout", "0"},
  };
  return settings;
}

Workload::Workload(const CampaignOptions& options, Recorder& recorder, Endpoint& endpoint)
    : options_(options), recorder_(recorder), endpoint_(endpoint) {}

Workload::~Workload() { stop(); }

void Workload::start(std::chrono::milliseconds pace_over) {
  started_ = std::chrono::steady_clock::now();
  pace_over_ = std::max(pace_over, std::chrono::milliseconds(1));
  for (uint32_t i = 0; i < options_.clients; ++i) {
    threads_.emplace_back([this, i] { Worker(*this, static_cast<int>(i)).run(); });
  }
}

void Workload::begin_drain() { draining_ = true; }

void Workload::stop() {
  stopping_ = true;
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

bool Workload::take_creation() {
  if (draining_.load()) return false;
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started_);
  const double share = std::min(1.0, static_cast<double>(elapsed.count()) /
                                         static_cast<double>(pace_over_.count()));
  const auto allowed = static_cast<uint64_t>(share * static_cast<double>(options_.transactions)) + 1;
  uint64_t now = created_.load();
  while (now < std::min(allowed, options_.transactions)) {
    if (created_.compare_exchange_weak(now, now + 1)) return true;
  }
  return false;
}

}  // namespace tarde::crash
