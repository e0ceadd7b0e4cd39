#include "tools/bench/proc_stats.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace tarde::bench {
namespace {

// Fields 4 (ppid), 14 (utime) and 15 (stime) of /proc/<pid>/stat.
struct ProcStat {
  int ppid = 0;
  uint64_t ticks = 0;
};

bool read_stat(int pid, ProcStat* out) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(file, text)) return false;
  const size_t close = text.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return false;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  std::vector<std::string> fields;
  while (rest >> field) fields.push_back(field);
  if (fields.size() < 13) return false;  // fields[0] is field 3 (state)
  out->ppid = std::stoi(fields[1]);
  out->ticks = std::stoull(fields[11]) + std::stoull(fields[12]);
  return true;
}

std::vector<int> process_tree(int root) {
  std::vector<std::pair<int, int>> all;  // pid, ppid
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    ProcStat stat;
    if (read_stat(std::stoi(name), &stat)) all.emplace_back(std::stoi(name), stat.ppid);
  }
  std::vector<int> tree{root};
  for (size_t i = 0; i < tree.size(); ++i) {
    for (const auto& [pid, ppid] : all) {
      if (ppid == tree[i]) tree.push_back(pid);
    }
  }
  return tree;
}

int64_t status_field_kb(const std::string& path, const std::string& name) {
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    if (line.rfind(name, 0) == 0) return std::stoll(line.substr(name.size()));
  }
  return 0;
}

}  // namespace

double cpu_seconds(int pid) {
  if (pid <= 0) return 0;
  uint64_t ticks = 0;
  for (int member : process_tree(pid)) {
    ProcStat stat;
    if (read_stat(member, &stat)) ticks += stat.ticks;
  }
  return static_cast<double>(ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

int64_t memory_bytes(int pid) {
  if (pid <= 0) return 0;
  const auto tree = process_tree(pid);
  if (tree.size() == 1)
    return status_field_kb("/proc/" + std::to_string(pid) + "/status", "VmRSS:") * 1024;
  int64_t kb = 0;
  for (int member : tree) {
    kb += status_field_kb("/proc/" + std::to_string(member) + "/smaps_rollup", "Pss:");
  }
  return kb * 1024;
}

// Sums allocated blocks or file lengths of everything under path.
static int64_t sum_under(const std::string& path, bool allocated) {
  if (path.empty()) return 0;
  int64_t bytes = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    bytes += allocated ? static_cast<int64_t>(st.st_blocks) * 512
                       : (S_ISREG(st.st_mode) ? static_cast<int64_t>(st.st_size) : 0);
  }
  return bytes;
}

int64_t disk_bytes(const std::string& path) { return sum_under(path, true); }
int64_t data_bytes(const std::string& path) { return sum_under(path, false); }

double wait_until_unchanged(const std::string& path, std::chrono::milliseconds poll,
                            std::chrono::milliseconds quiet_for,
                            std::chrono::milliseconds at_most) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  int64_t bytes = data_bytes(path);
  auto unchanged_since = start;
  while (Clock::now() - unchanged_since < quiet_for && Clock::now() - start < at_most) {
    std::this_thread::sleep_for(poll);
    const int64_t now_bytes = data_bytes(path);
    if (now_bytes != bytes) unchanged_since = Clock::now();
    bytes = now_bytes;
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace tarde::bench
