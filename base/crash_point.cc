#include "base/crash_point.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tarde {
namespace {

struct Armed {
  std::string name;  // empty: nothing armed
  long count = 1;
};

Armed parse_armed() {
  Armed armed;
  const char* spec = std::getenv("TARDE_CRASH_AT");
  if (spec == nullptr || *spec == '\0') return armed;
  std::string text(spec);
  const size_t colon = text.find(':');
  armed.name = text.substr(0, colon);
  if (colon != std::string::npos) armed.count = std::max(1L, std::atol(text.c_str() + colon + 1));
  return armed;
}

const Armed& armed() {
  static const Armed value = parse_armed();
  return value;
}

std::atomic<long> reached{0};

}  // namespace

void crash_point(std::string_view name) {
  const Armed& a = armed();
  if (a.name.empty() || name != a.name) return;
  if (reached.fetch_add(1) + 1 < a.count) return;
  std::fprintf(stderr, "tarde: crash point %s reached, exiting now\n", a.name.c_str());
  _exit(kCrashExitStatus);
}

}  // namespace tarde
