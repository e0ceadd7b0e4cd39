#pragma once

#include <string>

// One run of a built tool (build/bin/tarde-<name>) with its output captured,
// for the tests of the tools that print and exit.
namespace tarde::testing {

struct ToolRun {
  int status = -1;  // the exit code, or -1 when the tool did not exit normally
  std::string out;  // stdout and stderr together
};

// Runs `tarde-<tool> <args>` through the shell and waits for it.
ToolRun run_tool(const std::string& tool, const std::string& args);

}  // namespace tarde::testing
