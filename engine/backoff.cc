#include "engine/backoff.h"

#include <algorithm>
#include <cmath>

#include "base/assert.h"

namespace tarde::engine {
namespace {

int64_t jittered_wait_ms(int64_t base_ms, double factor, int64_t cap_ms, double jitter,
                         bool strict_cap, uint32_t k, double unit) {
  TARDE_ASSERT(k >= 1);
  TARDE_ASSERT(unit >= 0.0 && unit < 1.0);
  // pow() may reach infinity for large k; the min() with the cap absorbs it.
  const double nominal = std::min(static_cast<double>(base_ms) * std::pow(factor, k - 1.0),
                                  static_cast<double>(cap_ms));
  const double u = jitter * (2.0 * unit - 1.0);
  double wait = nominal * (1.0 + u);
  if (strict_cap) wait = std::min(wait, static_cast<double>(cap_ms));
  return std::max<int64_t>(0, std::llround(wait));
}

}  // namespace

int64_t cancelled_wait_ms(const storage::RetryPolicy& policy, uint32_t k, double unit) {
  return jittered_wait_ms(policy.base_ms, policy.factor, policy.cap_ms, policy.jitter,
                          policy.strict_cap, k, unit);
}

int64_t transient_wait_ms(const storage::RetryPolicy& policy, uint32_t k, double unit) {
  return jittered_wait_ms(policy.transient_base_ms, policy.transient_factor,
                          policy.transient_cap_ms, policy.jitter, policy.strict_cap, k, unit);
}

int64_t bounded_retry_after_ms(int64_t retry_after_ms, int64_t cap_ms) {
  return std::clamp<int64_t>(retry_after_ms, 0, cap_ms);
}

}  // namespace tarde::engine
