// tarde-crash: the kill -9 crash-recovery harness (docs/design.md "Guarantees").
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "tools/crash/campaign.h"
#include "tools/crash/embedded_campaign.h"
#include "tools/crash/options.h"

namespace {

// The directory of this executable, where tarde and tarde-dump are built too.
std::string binary_dir(const char* argv0) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) return self.parent_path().string();
  return std::filesystem::path(argv0).parent_path().string();
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto options = tarde::crash::parse_options(args, binary_dir(argv[0]));
  if (!options.is_ok()) {
    std::fprintf(stderr, "tarde-crash: %s\n\n%s", options.status().message().c_str(),
                 tarde::crash::usage_text().c_str());
    return tarde::crash::kExitUsage;
  }
  if (options.value().help) {
    std::fputs(tarde::crash::usage_text().c_str(), stdout);
    return 0;
  }
  if (options.value().embedded) return tarde::crash::run_embedded_campaign(options.value());
  return tarde::crash::run_campaign(options.value());
}
