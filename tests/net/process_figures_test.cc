// The process_* figures of the metrics page, from /proc/self/stat.
#include "net/server/process_figures.h"

#include <doctest/doctest.h>

#include <string>

using namespace tarde;

TEST_CASE("parse_proc_stat reads CPU, memory and start time past a command name with spaces") {
  // Fields 3 to 24 of proc(5); utime 250, stime 150, starttime 1000,
  // vsize 123456789, rss 2000 pages.
  const std::string line =
      "4242 (tar de) (x)) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 150 0 0 20 0 3 0 1000 "
      "123456789 2000 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
  const auto stat = net::parse_proc_stat(line, 100, 4096, 1'700'000'000);
  REQUIRE(stat.has_value());
  CHECK(stat->cpu_seconds == doctest::Approx(4.0));
  CHECK(stat->start_time_seconds == doctest::Approx(1'700'000'010.0));
  CHECK(stat->virtual_bytes == 123456789);
  CHECK(stat->resident_bytes == 2000ULL * 4096);
}

TEST_CASE("parse_proc_stat refuses a short or damaged line") {
  CHECK_FALSE(net::parse_proc_stat("", 100, 4096, 0).has_value());
  CHECK_FALSE(net::parse_proc_stat("1 (x) S 1 2 3", 100, 4096, 0).has_value());
  CHECK_FALSE(net::parse_proc_stat("1 x S 1 2 3", 100, 4096, 0).has_value());
  CHECK_FALSE(
      net::parse_proc_stat("1 (x) S 1 1 1 0 -1 4 1 0 0 0 abc 1 0 0 20 0 1 0 1 1 1", 100, 4096, 0)
          .has_value());
}
