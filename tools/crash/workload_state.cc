#include "tools/crash/workload_state.h"

#include <algorithm>

namespace tarde::crash {

const std::vector<std::pair<std::string, std::string>>& queue_settings() {
  static const std::vector<std::pair<std::string, std::string>> settings = {
      {"max_attempts", "4"},      {"base", "20ms"},   {"factor", "2"},
      {"cap", "500ms"},           {"jitter", "0.2"},  {"transient_base", "10ms"},
      {"transient_cap", "100ms"}, {"lease", "300ms"}, {"max_deliveries", "3"},
      {"breaker", "0"},           {"retention", "0"}, {"response_timeout", "0"},
  };
  return settings;
}

double run_share(const CampaignOptions& options, std::chrono::steady_clock::duration elapsed,
                 uint64_t kills) {
  const double seconds = std::chrono::duration<double>(elapsed).count();
  double done = seconds / static_cast<double>(options.duration.count());
  if (options.kills_max > 0) {
    done = std::max(done, static_cast<double>(kills) / static_cast<double>(options.kills_max));
  }
  return done;
}

bool WorkloadState::take_creation() {
  if (draining.load()) return false;
  // One kill ahead: the life now running may create its share.
  const double done = run_share(options, std::chrono::steady_clock::now() - started, kills + 1);
  const double share = std::min(1.0, done / kCreatedBy);
  const auto allowed = static_cast<uint64_t>(share * static_cast<double>(options.transactions)) + 1;
  uint64_t now = created.load();
  while (now < std::min(allowed, options.transactions)) {
    if (created.compare_exchange_weak(now, now + 1)) return true;
  }
  return false;
}

}  // namespace tarde::crash
