// tarde-crash campaigns that die at one crash point at a time: the restarted
// server honours every guarantee after dying exactly there, and a server with
// a planted bug fails the campaign there.
#include <doctest/doctest.h>

#include <string>

#include "tests/support/crash_campaign.h"
#include "tests/support/temp_dir.h"

using tarde::testing::Campaign;
using tarde::testing::deaths_at;
using tarde::testing::kSlowdown;
using tarde::testing::kTailSecondsMax;
using tarde::testing::run_campaign;

TEST_SUITE("crash") {
  TEST_CASE("each crash point: the server dies there and the restarted one keeps every guarantee") {
    for (const char* point :
         {"commit.before_write", "commit.after_write", "timer.after_fire", "reserve.after_hand_out",
          "recovery.after_repair", "wheel.after_page", "reconcile.after_slice"}) {
      const std::string point_name = point;  // CAPTURE shows a string, not a pointer
      CAPTURE(point_name);
      // The duration is the budget for reaching the crash point, which a
      // slower build needs more of (wheel.after_page first enqueues a burst
      // of 4200 transactions); --kills 4 still ends the campaign early.
      const int duration_s = 12 * kSlowdown;
      const Campaign c =
          run_campaign("--seed 11 --kills 4 --duration " + std::to_string(duration_s) +
                       " --transactions 120 --crash-points " + point);
      INFO(c.out);
      CHECK(c.status == 0);
      CHECK(c.violations == 0);
      CHECK(deaths_at(c, point) >= 1);
      CHECK(c.seconds < duration_s + kTailSecondsMax);
    }
  }

  // The campaign must catch a real bug, not only pass on a good server:
  // tarde-planted-lost-ack (tests/CMakeLists.txt) sends each reply before
  // the commit it depends on is durable. Dying at commit.before_write, it
  // has answered changes the restarted server does not have: guarantee 1.
  // A death catches such a reply only when the dying commit held one the
  // client had read (about three deaths in four here), so the run has seven
  // armed deaths: with two, one run in fifteen passed.
  TEST_CASE("a planted bug: a server that replies before its commit fails the campaign on G1") {
    const int duration_s = 15 * kSlowdown;
    // A campaign keeps its data directory when it finds a violation: here,
    // in a TempDir that goes when the test ends.
    const tarde::testing::TempDir work;
    const Campaign c = run_campaign(
        "--server " + std::string(TARDE_BIN_DIR) + "/tarde-planted-lost-ack --data " +
        work.sub("data") + " --seed 21 --kills 8 --duration " + std::to_string(duration_s) +
        " --transactions 60 --crash-points commit.before_write");
    INFO(c.out);
    CHECK(c.status == 1);  // tools/crash/campaign.h: kExitViolations
    CHECK(c.violations > 0);
    CHECK(c.out.find("\n    G1 ") != std::string::npos);
    CHECK(deaths_at(c, "commit.before_write") >= 1);
    CHECK(c.seconds < duration_s + kTailSecondsMax);
  }
}
