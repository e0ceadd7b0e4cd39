#pragma once

#include "base/clock.h"

namespace tarde {

// SystemClock is the real Clock: wall time from the system clock (what gets
// persisted), steady time from the monotonic clock (what measures intervals).
// Thread-safe.
class SystemClock final : public Clock {
 public:
  int64_t now_wall_ms() const override;
  int64_t now_steady_ms() const override;
  // Wall time to the microsecond, for arming timers precisely.
  int64_t now_wall_us() const;
};

}  // namespace tarde
