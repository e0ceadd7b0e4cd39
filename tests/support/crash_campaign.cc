#include "tests/support/crash_campaign.h"

#include <chrono>
#include <regex>

#include "tests/support/run_tool.h"

namespace tarde::testing {

Campaign run_campaign(const std::string& args) {
  const auto started = std::chrono::steady_clock::now();
  ToolRun ran = run_tool("crash", args);
  Campaign c;
  c.status = ran.status;
  c.out = std::move(ran.out);
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::smatch m;
  static const std::regex summary(R"(tarde-crash: seed \d+ kills (\d+) .* violations (\d+))");
  if (std::regex_search(c.out, m, summary)) {
    c.kills = std::stol(m[1]);
    c.violations = std::stol(m[2]);
  }
  return c;
}

long deaths_at(const Campaign& c, const std::string& point) {
  std::smatch m;
  const std::regex line("\\n    " + std::regex_replace(point, std::regex("\\."), "\\.") +
                        R"( +(\d+)\n)");
  return std::regex_search(c.out, m, line) ? std::stol(m[1]) : 0;
}

}  // namespace tarde::testing
