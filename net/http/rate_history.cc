#include "net/http/rate_history.h"

#include <algorithm>
#include <cmath>

namespace tarde::net::http {

double percentile(std::vector<double>& values, double p) {
  if (values.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
  const size_t index = std::clamp<size_t>(rank, 1, values.size()) - 1;
  std::nth_element(values.begin(), values.begin() + static_cast<ptrdiff_t>(index), values.end());
  return values[index];
}

void RateHistory::on_transition(const engine::TransitionNote& note) {
  if (note.answer) current_.answers[static_cast<size_t>(*note.answer)] += 1;
  // A fired retry, as the transition log counts its lateness.
  if (note.cause != "timer" || note.before == nullptr ||
      note.before->state != storage::TxState::kScheduled) {
    return;
  }
  current_.retries_fired += 1;
  const double late_ms = static_cast<double>(
      std::max<int64_t>(0, note.after->updated_at_ms - note.before->next_fire_at_ms));
  current_.lateness_max_ms = std::max(current_.lateness_max_ms, late_ms);
  lateness_seen_ += 1;
  if (lateness_.size() < kLatenessKept) {
    lateness_.push_back(late_ms);
  } else {
    lateness_[lateness_seen_ % kLatenessKept] = late_ms;  // keeps a spread of the burst
  }
}

void RateHistory::tick(int64_t now_ms, const std::map<std::string, uint64_t>& handed_out_by_queue) {
  const double keep = std::exp(-1.0 / kRateTimeConstantSeconds);
  for (const auto& [queue, total] : handed_out_by_queue) {
    auto [it, added] = queues_.try_emplace(queue, QueueRate{0, 0});
    QueueRate& rate = it->second;
    // A queue first seen now started at zero since the last tick.
    const uint64_t delta = added ? total : total < rate.last_total ? 0 : total - rate.last_total;
    rate.last_total = total;
    rate.per_second = rate.per_second * keep + static_cast<double>(delta) * (1 - keep);
    current_.handed_out += delta;
  }
  current_.at_ms = now_ms;
  current_.lateness_p99_ms = percentile(lateness_, 0.99);
  samples_.push_back(current_);
  if (samples_.size() > kSamples) samples_.pop_front();
  current_ = RateSample{};
  lateness_.clear();
  lateness_seen_ = 0;
}

std::vector<RateSample> RateHistory::since(int64_t after_ms) const {
  std::vector<RateSample> out;
  for (const RateSample& sample : samples_) {
    if (sample.at_ms > after_ms) out.push_back(sample);
  }
  return out;
}

double RateHistory::handout_rate(const std::string& queue) const {
  const auto it = queues_.find(queue);
  return it == queues_.end() ? 0 : it->second.per_second;
}

}  // namespace tarde::net::http
