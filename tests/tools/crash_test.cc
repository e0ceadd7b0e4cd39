// tarde-crash campaigns against the real server and the embedded engine: a
// short one with every crash point, one with tarde-dump checks, and the
// harness's usage. tests/tools/crash_points_test.cc dies at each point alone.
#include <doctest/doctest.h>

#include <string>

#include "tests/support/crash_campaign.h"

using tarde::testing::Campaign;
using tarde::testing::kSlowdown;
using tarde::testing::kTailSecondsMax;
using tarde::testing::run_campaign;

TEST_SUITE("crash") {
  // Each campaign ends at its kill count; the duration, which a slower build
  // needs more of (a restart under AddressSanitizer takes seconds), is only
  // the budget for reaching it.
  TEST_CASE("a short campaign: 30 kills at random and at every crash point, no violation") {
    const int duration_s = 120 * kSlowdown;
    const Campaign c = run_campaign("--seed 30 --kills 30 --duration " +
                                    std::to_string(duration_s) + " --crash-points all --clients 4");
    INFO(c.out);
    CHECK(c.status == 0);
    CHECK(c.kills >= 30);
    CHECK(c.violations == 0);
    CHECK(c.seconds < duration_s + kTailSecondsMax);
  }

  TEST_CASE("the embedded engine: a program that embeds tarde, killed 10 times, no violation") {
    const int duration_s = 60 * kSlowdown;
    const Campaign c = run_campaign("--embedded --seed 12 --kills 10 --duration " +
                                    std::to_string(duration_s) + " --clients 4");
    INFO(c.out);
    CHECK(c.status == 0);
    CHECK(c.kills >= 10);
    CHECK(c.violations == 0);
    CHECK(c.seconds < duration_s + kTailSecondsMax);
  }

  TEST_CASE("--dump-check-every N checks the store after every Nth death and at the end") {
    const Campaign c =
        run_campaign("--seed 31 --kills 10 --duration " + std::to_string(60 * kSlowdown) +
                     " --crash-points none --dump-check-every 5");
    INFO(c.out);
    CHECK(c.status == 0);
    CHECK(c.kills == 10);
    CHECK(c.out.find("(+ 3 tarde-dump checks)") != std::string::npos);  // deaths 5 and 10, the end
  }

  TEST_CASE("usage errors exit 2 and say what is wrong") {
    const Campaign nowhere = run_campaign("--crash-points nowhere");
    CHECK(nowhere.status == 2);
    CHECK(nowhere.out.find("tarde-crash: --crash-points: unknown crash point 'nowhere'") !=
          std::string::npos);
    const Campaign no_clients = run_campaign("--clients 0");
    CHECK(no_clients.status == 2);
    CHECK(no_clients.out.find("--clients expects a whole number from 1 to 64, got '0'") !=
          std::string::npos);
    const Campaign stray = run_campaign("stray");
    CHECK(stray.status == 2);
    CHECK(stray.out.find("unexpected argument 'stray'") != std::string::npos);
    const Campaign unknown = run_campaign("--seed 1 --bogus");
    CHECK(unknown.status == 2);
    CHECK(unknown.out.find("tarde-crash: unknown flag --bogus (see tarde-crash --help)") !=
          std::string::npos);
    const Campaign missing = run_campaign("--duration");
    CHECK(missing.status == 2);
    CHECK(missing.out.find("tarde-crash: --duration needs a value (SECONDS)") != std::string::npos);
    const Campaign bad = run_campaign("--duration=1m");
    CHECK(bad.status == 2);
    CHECK(bad.out.find("--duration expects a whole number from 1 to 86400, got '1m'") !=
          std::string::npos);
    const Campaign switch_value = run_campaign("--keep=no");
    CHECK(switch_value.status == 2);
    CHECK(switch_value.out.find("--keep takes no value") != std::string::npos);
    CHECK(unknown.out.find("usage: tarde-crash") != std::string::npos);  // the usage follows
  }

  TEST_CASE("--help lists every flag with its default") {
    const Campaign help = run_campaign("--help");
    CHECK(help.status == 0);
    for (const char* text : {"usage: tarde-crash [options]",
                             "--seed N",
                             "--duration SECONDS",
                             "(default 60)",
                             "--kills N",
                             "--clients N",
                             "(default 4)",
                             "--transactions N",
                             "(default 400)",
                             "--crash-points LIST",
                             "(default all)",
                             "--dump-check-every N",
                             "(default 1)",
                             "--data DIR",
                             "--keep",
                             "--server PATH",
                             "--dump PATH",
                             "--verbose",
                             "--embedded",
                             "exit status:"}) {
      CHECK_MESSAGE(help.out.find(text) != std::string::npos, text);
    }
  }
}
