// tarde-fill: writes transactions into a data directory, and refuses a bad
// command line with exit status 2 and a message.
#include <doctest/doctest.h>

#include <string>

#include "tests/support/run_tool.h"
#include "tests/support/temp_dir.h"

using namespace tarde;

namespace {

using testing::ToolRun;

ToolRun fill(const std::string& args) { return testing::run_tool("fill", args); }

bool has(const ToolRun& ran, const std::string& text) {
  return ran.out.find(text) != std::string::npos;
}

}  // namespace

TEST_CASE("tarde-fill writes what its flags say, in either spelling and order") {
  testing::TempDir dir;
  const std::string data = dir.sub("data");
  const ToolRun filled = fill("--count=3 " + data + " --ready --queue pagos --prefix F-");
  INFO(filled.out);
  REQUIRE(filled.status == 0);
  const ToolRun listed = testing::run_tool("dump", data + " list --queue pagos");
  CHECK(listed.status == 0);
  for (const char* id : {"F-0 ", "F-1 ", "F-2 "}) CHECK_MESSAGE(has(listed, id), id);
  CHECK_FALSE(has(listed, "F-3 "));
}

TEST_CASE("tarde-fill --sent writes IN_FLIGHT transactions, --dead dead letters") {
  testing::TempDir dir;
  const std::string data = dir.sub("data");
  REQUIRE(fill(data + " --count 2 --sent --prefix S-").status == 0);
  const ToolRun filled = fill(data + " --count 2 --dead --prefix D-");
  INFO(filled.out);
  REQUIRE(filled.status == 0);
  const ToolRun in_flight = testing::run_tool("dump", data + " list --state IN_FLIGHT");
  CHECK(has(in_flight, "S-0 "));
  CHECK(has(in_flight, "S-1 "));
  const ToolRun dead = testing::run_tool("dump", data + " dead q");
  CHECK(has(dead, "D-0#1"));
  CHECK(has(dead, "D-1#1"));
  const ToolRun state = testing::run_tool("dump", data + " state q");
  CHECK(has(state, "dead_lettered  D-1"));
  CHECK(has(state, "in_flight      S-0"));
  CHECK(testing::run_tool("dump", data + " check").status == 0);
  const ToolRun both = fill(data + " --count 1 --sent --dead");
  CHECK(both.status == 2);
  CHECK(has(both, "--ready, --sent and --dead exclude each other"));
}

TEST_CASE("tarde-fill refuses a bad command line with exit status 2 and says why") {
  testing::TempDir dir;
  const std::string data = dir.sub("data");
  const ToolRun unknown = fill(data + " --count 1 --bogus");
  CHECK(unknown.status == 2);
  CHECK(has(unknown, "tarde-fill: unknown flag --bogus (see tarde-fill --help)"));
  const ToolRun missing = fill(data + " --count");
  CHECK(missing.status == 2);
  CHECK(has(missing, "tarde-fill: --count needs a value (N)"));
  const ToolRun bad = fill(data + " --count 1 --delay-ms soon");
  CHECK(bad.status == 2);
  CHECK(has(bad, "--delay-ms expects a whole number from 0 to"));
  const ToolRun no_count = fill(data);
  CHECK(no_count.status == 2);
  CHECK(has(no_count, "--count is needed"));
  const ToolRun no_dir = fill("--count 1");
  CHECK(no_dir.status == 2);
  CHECK(has(no_dir, "needs a data directory"));

  const ToolRun help = fill("--help");
  CHECK(help.status == 0);
  for (const char* text : {"usage: tarde-fill <data-dir> --count N", "--queue Q", "(default q)",
                           "--delay-ms D", "(default 3600000)", "--ready"}) {
    CHECK_MESSAGE(has(help, text), text);
  }
}
