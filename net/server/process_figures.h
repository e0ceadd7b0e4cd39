#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/figures.h"

namespace tarde::net {

// What /proc/self/stat says about a process, in base units: the figures
// every Prometheus client library exports as process_*, so the dashboards
// and alerts written for them work on tarde too.
struct ProcessStat {
  double cpu_seconds = 0;         // user plus system time
  double start_time_seconds = 0;  // since the epoch
  uint64_t resident_bytes = 0;
  uint64_t virtual_bytes = 0;
};

// Parses the one line of /proc/self/stat. `ticks_per_second` is
// sysconf(_SC_CLK_TCK), `page_bytes` the page size and `boot_time_seconds`
// the btime line of /proc/stat. The command name (field 2) may hold spaces
// and parentheses, so fields are counted after its last ')'. nullopt when the
// line is too short or a field is not a number. Pure; any thread.
std::optional<ProcessStat> parse_proc_stat(std::string_view line, double ticks_per_second,
                                           uint64_t page_bytes, uint64_t boot_time_seconds);

// Declares in `figures` the build_info gauge (version and revision as fixed
// at configure time) and the process_* figures, read from /proc whenever the
// metrics page is rendered. A figure /proc cannot give (not Linux, a
// sandbox without /proc) shows 0. None appears in STATS.
void declare_process_figures(Figures& figures);

}  // namespace tarde::net
