#include "tests/support/run_tool.h"

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>

namespace tarde::testing {

ToolRun run_tool(const std::string& tool, const std::string& args) {
  const std::string command = std::string(TARDE_BIN_DIR) + "/tarde-" + tool + " " + args + " 2>&1";
  ToolRun ran;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer;
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) ran.out.append(buffer.data(), n);
  const int raw = pclose(pipe);
  ran.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return ran;
}

}  // namespace tarde::testing
