#pragma once

#include <cstdint>

#include "storage/records.h"

namespace tarde::engine {

// The waits of PROTOCOL.md "Waits", as pure functions of the policy, the
// attempt and one uniform draw `unit` in [0, 1) that becomes the jitter
// u = jitter * (2 * unit - 1), so u is uniform in [-jitter, +jitter].
//
//   wait(k) = min(base * factor^(k-1), cap) * (1 + u)
//
// With strict_cap the jittered wait is capped again. Results are whole
// milliseconds, never negative.

// The wait before the retry that follows a CANCELLED answer to attempt k >= 1.
int64_t cancelled_wait_ms(const storage::RetryPolicy& policy, uint32_t k, double unit);

// The wait before re-sending after the k-th TRANSIENT answer in a row (k >= 1),
// with the transient_* settings and the same jitter and strict_cap.
int64_t transient_wait_ms(const storage::RetryPolicy& policy, uint32_t k, double unit);

// A Retry-After given with an answer replaces the computed wait, without
// jitter, bounded by the cap that would have applied.
int64_t bounded_retry_after_ms(int64_t retry_after_ms, int64_t cap_ms);

}  // namespace tarde::engine
