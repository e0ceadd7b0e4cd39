#pragma once

#include <string>

#include "tests/support/slowdown.h"

// One tarde-crash campaign run to its end, with the figures of its summary,
// for the tests that drive the crash harness (tests/tools/crash*_test.cc).
namespace tarde::testing {

struct Campaign {
  int status = -1;       // tarde-crash's exit code
  std::string out;       // everything it printed
  double seconds = 0;    // how long it ran
  long kills = -1;       // from its summary line; -1 without one
  long violations = -1;  // likewise
};

// Runs `tarde-crash <args>` and waits for it.
Campaign run_campaign(const std::string& args);

// How many deaths the summary reports at crash point `point` (0 when not
// listed).
long deaths_at(const Campaign& c, const std::string& point);

// A campaign stops at its --duration at the latest, then drains, restarts the
// server once more and checks every guarantee. This bound on that tail only
// catches a campaign that never stops: it is generous because the tail's real
// length depends on the machine's load, and it scales with the build's
// slowdown (sanitizers).
inline constexpr double kTailSecondsMax = 60.0 * kSlowdown;

}  // namespace tarde::testing
