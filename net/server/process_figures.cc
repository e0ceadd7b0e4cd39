#include "net/server/process_figures.h"

#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#ifndef TARDE_VERSION
#error "CMake defines TARDE_VERSION (the project version) for this file"
#endif
#ifndef TARDE_REVISION
#error "CMake defines TARDE_REVISION (the git revision, or unknown) for this file"
#endif

namespace tarde::net {
namespace {

std::optional<uint64_t> number(std::string_view field) {
  uint64_t value = 0;
  const auto result = std::from_chars(field.data(), field.data() + field.size(), value);
  if (result.ec != std::errc() || result.ptr != field.data() + field.size()) return std::nullopt;
  return value;
}

std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

uint64_t boot_time_seconds() {
  std::ifstream in("/proc/stat");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("btime ", 0) == 0) return number(line.substr(6)).value_or(0);
  }
  return 0;
}

std::optional<ProcessStat> read_proc_stat() {
  const long ticks = sysconf(_SC_CLK_TCK);
  const long page = sysconf(_SC_PAGESIZE);
  if (ticks <= 0 || page <= 0) return std::nullopt;
  return parse_proc_stat(first_line("/proc/self/stat"), static_cast<double>(ticks),
                         static_cast<uint64_t>(page), boot_time_seconds());
}

double open_fds() {
  std::error_code ec;
  double n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    n += 1;
  }
  return n;
}

double max_fds() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
  return static_cast<double>(limit.rlim_cur);
}

// A process_* gauge or counter read from /proc/self/stat.
void stat_figure(Figures& figures, std::string name, FigureKind kind, std::string help,
                 double (*value)(const ProcessStat&)) {
  figures.sampled(
      {.name = std::move(name), .kind = kind, .help = std::move(help), .unprefixed = true},
      [value](FigureSamples& out) {
        const auto stat = read_proc_stat();
        out.total(stat ? value(*stat) : 0);
      });
}

}  // namespace

std::optional<ProcessStat> parse_proc_stat(std::string_view line, double ticks_per_second,
                                           uint64_t page_bytes, uint64_t boot_time_seconds) {
  const size_t name_end = line.rfind(')');
  if (name_end == std::string_view::npos) return std::nullopt;
  // Fields from 3 (state) on, so fields[i] is field i + 3 of proc(5).
  std::vector<std::string_view> fields;
  std::string_view rest = line.substr(name_end + 1);
  while (!rest.empty()) {
    const size_t start = rest.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const size_t end = std::min(rest.find(' '), rest.size());
    fields.push_back(rest.substr(0, end));
    rest.remove_prefix(end);
  }
  constexpr size_t kUtime = 14 - 3, kStime = 15 - 3, kStartTime = 22 - 3, kVsize = 23 - 3,
                   kRss = 24 - 3;
  if (fields.size() <= kRss) return std::nullopt;
  const auto utime = number(fields[kUtime]);
  const auto stime = number(fields[kStime]);
  const auto start = number(fields[kStartTime]);
  const auto vsize = number(fields[kVsize]);
  const auto rss = number(fields[kRss]);
  if (!utime || !stime || !start || !vsize || !rss) return std::nullopt;
  return ProcessStat{.cpu_seconds = static_cast<double>(*utime + *stime) / ticks_per_second,
                     .start_time_seconds = static_cast<double>(boot_time_seconds) +
                                           static_cast<double>(*start) / ticks_per_second,
                     .resident_bytes = *rss * page_bytes,
                     .virtual_bytes = *vsize};
}

void declare_process_figures(Figures& figures) {
  figures.sampled({.name = "build_info",
                   .help = "Always 1; the labels say which tarde this is (version, git revision).",
                   .labels = {"version", "revision"}},
                  [](FigureSamples& out) {
                    out.add({TARDE_VERSION, TARDE_REVISION}, 1);
                  });
  stat_figure(figures, "process_cpu_seconds_total", FigureKind::kCounter,
              "Total user and system CPU time spent in seconds.",
              [](const ProcessStat& s) { return s.cpu_seconds; });
  stat_figure(figures, "process_resident_memory_bytes", FigureKind::kGauge,
              "Resident memory size in bytes.",
              [](const ProcessStat& s) { return static_cast<double>(s.resident_bytes); });
  stat_figure(figures, "process_virtual_memory_bytes", FigureKind::kGauge,
              "Virtual memory size in bytes.",
              [](const ProcessStat& s) { return static_cast<double>(s.virtual_bytes); });
  stat_figure(figures, "process_start_time_seconds", FigureKind::kGauge,
              "Start time of the process since unix epoch in seconds.",
              [](const ProcessStat& s) { return s.start_time_seconds; });
  figures.sampled(
      {.name = "process_open_fds", .help = "Number of open file descriptors.", .unprefixed = true},
      [](FigureSamples& out) { out.total(open_fds()); });
  figures.sampled({.name = "process_max_fds",
                   .help = "Maximum number of open file descriptors.",
                   .unprefixed = true},
                  [](FigureSamples& out) { out.total(max_fds()); });
}

}  // namespace tarde::net
