#pragma once

#include <cstdint>
#include <string>

namespace tarde {

// An epoch-milliseconds instant as UTC ISO-8601 with milliseconds,
// "2026-11-29T19:53:57.959Z": the one way tarde's logs and tools print times.
std::string iso_utc_ms(int64_t epoch_ms);

}  // namespace tarde
