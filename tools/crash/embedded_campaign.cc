#include "tools/crash/embedded_campaign.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "base/crash_point.h"
#include "tools/crash/campaign.h"
#include "tools/crash/final_state.h"
#include "tools/crash/journal_reader.h"
#include "tools/crash/recorder.h"
#include "tools/crash/server_control.h"
#include "tools/crash/workload.h"

namespace tarde::crash {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Client numbers of the embedding program's threads start here, clear of
// the drain's workload (0..63) and responder (1000).
constexpr int kFirstClient = 2000;
// The crash points an embedding program reaches: the group commit and the
// timer live in the library (net/core); the others are the server's
// (reserve.after_hand_out) or need a restart with a full page of due
// entries (wheel.after_page, recovery.after_repair).
constexpr const char* kEmbeddedPoints[] = {"commit.before_write", "commit.after_write",
                                           "timer.after_fire"};
std::string tail_of(const std::string& path, size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

// One life of the embedding program, its output appended to `log_path`;
// `crash_at`, when set, arms TARDE_CRASH_AT in it.
pid_t spawn(const std::vector<std::string>& args, const std::string& log_path,
            const std::string& crash_at) {
  std::vector<char*> argv;
  std::vector<std::string> copy = args;
  for (std::string& arg : copy) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    if (!crash_at.empty()) ::setenv("TARDE_CRASH_AT", crash_at.c_str(), 1);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

std::string describe_status(int raw) {
  if (WIFEXITED(raw)) return "exited with status " + std::to_string(WEXITSTATUS(raw));
  if (WIFSIGNALED(raw)) return "was killed by signal " + std::to_string(WTERMSIG(raw));
  return "stopped";
}

}  // namespace

int run_embedded_campaign(const CampaignOptions& options) {
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf("tarde-crash --embedded: seed %llu (replay with --seed %llu)\n", u(options.seed),
              u(options.seed));
  std::fflush(stdout);
  const Clock::time_point started = Clock::now();
  std::mt19937_64 rng(options.seed);
  std::string work_dir;
  std::string data_dir = options.data_dir;
  if (data_dir.empty()) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tarde-crash-embedded-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::fprintf(stderr, "tarde-crash: cannot create a temp dir\n");
      return kExitNoServer;
    }
    work_dir = pattern;
    data_dir = work_dir + "/data";
  }
  const std::string journal = data_dir + ".journal";
  const std::string program_log = data_dir + ".embedded.log";
  ServerControl server(options.server_path, options.dump_path, data_dir, data_dir + ".server.log");
  std::vector<Violation> violations;

  // The queue's CONFIG, set through tarde serve before the first life.
  auto port = server.start(std::nullopt);
  if (!port.is_ok()) {
    std::fprintf(stderr, "tarde-crash: the server did not start: %s\n",
                 port.status().to_string().c_str());
    return kExitNoServer;
  }
  Status configured = configure_queue(port.value());
  server.stop();
  if (!configured.is_ok()) {
    std::fprintf(stderr, "tarde-crash: CONFIG failed: %s\n", configured.to_string().c_str());
    return kExitNoServer;
  }

  // Each life may create its share of --transactions.
  double expected_lives = static_cast<double>(options.duration.count()) / 0.85;
  if (options.kills_max > 0) expected_lives = std::min<double>(expected_lives, options.kills_max);
  const uint64_t budget = std::max<uint64_t>(
      1, static_cast<uint64_t>(static_cast<double>(options.transactions) / expected_lives + 0.5));

  std::vector<std::string> points;  // the --crash-points this mode can reach
  for (const char* point : kEmbeddedPoints) {
    for (const std::string& wanted : options.crash_points) {
      if (wanted == point) points.push_back(point);
    }
  }
  std::map<std::string, uint64_t> deaths_at_point;
  std::map<uint64_t, int64_t> death_us;  // by life number
  uint64_t kills = 0;
  uint64_t dump_checks = 0;
  Clock::time_point last_progress = started;
  auto all_kills = [&] {
    uint64_t total = kills;
    for (const auto& [point, n] : deaths_at_point) total += n;
    return total;
  };
  auto finished = [&] {
    if (options.kills_max > 0 && all_kills() >= options.kills_max) return true;
    return Clock::now() - started >= options.duration;
  };
  for (uint64_t life = 0; !finished(); ++life) {
    // Half the lives (all, with one point named) die at a crash point.
    std::string armed;
    const double arm_share = points.size() == 1 ? 1.0 : 0.5;
    if (!points.empty() && std::uniform_real_distribution<double>(0, 1)(rng) < arm_share) {
      armed = points[rng() % points.size()];
    }
    const uint64_t count_limit = armed == "timer.after_fire" ? 20 : 40;
    const std::string crash_at =
        armed.empty() ? "" : armed + ":" + std::to_string(1 + rng() % count_limit);
    const pid_t pid = spawn({options.embedded_path, data_dir, journal, std::to_string(options.seed),
                             std::to_string(life), std::to_string(options.clients),
                             std::to_string(budget), std::to_string(kFirstClient)},
                            program_log, crash_at);
    int64_t life_ms = kLifeMinMs + static_cast<int64_t>(rng() % (kLifeMaxMs - kLifeMinMs));
    if (!armed.empty()) life_ms = kArmedLifeMs;
    const Clock::time_point born = Clock::now();
    int raw = 0;
    bool exited = false;
    while (Clock::now() - born < milliseconds(life_ms)) {
      if (::waitpid(pid, &raw, WNOHANG) == pid) {
        exited = true;
        break;
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
    if (!exited) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &raw, 0);
      kills += 1;
    } else if (!armed.empty() && WIFEXITED(raw) && WEXITSTATUS(raw) == kCrashExitStatus) {
      deaths_at_point[armed] += 1;
    } else {
      violations.push_back(Violation{"PROGRAM", "",
                                     "the embedding program " + describe_status(raw) +
                                         " by itself; log tail:\n" + tail_of(program_log, 1500)});
    }
    death_us[life] = wall_us();
    if ((life + 1) % options.dump_check_every == 0) {
      dump_checks += 1;
      for (const std::string& line : server.dump_check()) {
        violations.push_back(Violation{"DUMP", "", "after a death: " + line});
      }
    }
    if (Clock::now() - last_progress >= kProgressEvery) {
      last_progress = Clock::now();
      std::printf("[%7.1fs] kills %llu lives %llu violations %zu\n", seconds_since(started),
                  u(all_kills()), u(life + 1), violations.size());
      std::fflush(stdout);
    }
    if (options.verbose) {
      std::printf("[%7.1fs] life %llu: %s%s\n", seconds_since(started), u(life),
                  exited ? "exited" : "killed",
                  armed.empty() ? "" : (" (armed " + crash_at + ")").c_str());
    }
  }

  // What the lives saw, then the drain and the final reads through tarde
  // serve on the same directory.
  Recorder recorder;
  Status read = read_journal(journal, death_us, recorder);
  if (!read.is_ok()) violations.push_back(Violation{"JOURNAL", "", read.to_string()});
  port = server.start(std::nullopt);
  if (!port.is_ok()) {
    std::fprintf(stderr, "tarde-crash: tarde serve does not start on the embedded data: %s\n%s\n",
                 port.status().to_string().c_str(), server.log_tail(2000).c_str());
    return kExitNoServer;
  }
  Endpoint endpoint;
  endpoint.port = port.value();
  {
    Workload drainers(options, recorder, endpoint);
    drainers.begin_drain();
    drainers.start();
    const bool drained = drain(port.value(), recorder, kDrainStallLimit);
    drainers.stop();
    if (options.verbose)
      std::printf("%s\n", drained ? "drained" : "the drain stalled: nothing settled for a minute");
  }
  const std::map<std::string, FinalTx> finals = read_finals(port.value(), recorder.tx_ids());
  const Death end = server.stop();
  if (!end.killed && !(WIFEXITED(end.raw_status) && WEXITSTATUS(end.raw_status) == 0)) {
    violations.push_back(Violation{"SERVER", "", "the final stop: the server " + end.describe()});
  }
  dump_checks += 1;
  for (const std::string& line : server.dump_check()) {
    violations.push_back(Violation{"DUMP", "", "at the end: " + line});
  }
  CheckReport report = check_guarantees(recorder.logs(), finals);
  report.violations.insert(report.violations.begin(), violations.begin(), violations.end());

  const RecordCounts counts = recorder.counts();
  std::printf("\ntarde-crash --embedded summary (seed %llu, %.1f s)\n", u(options.seed),
              seconds_since(started));
  std::printf("  kills: %llu (random SIGKILL of the embedding program %llu, crash points %llu)\n",
              u(all_kills()), u(kills), u(all_kills() - kills));
  for (const auto& [point, n] : deaths_at_point) {
    std::printf("    %-24s %llu\n", point.c_str(), u(n));
  }
  std::printf("  transactions: %llu\n", u(counts.transactions));
  std::printf("  requests handed out: %llu\n", u(counts.hand_outs));
  std::printf("  answers: %llu (late or duplicate messages %llu, refused STALE %llu)\n",
              u(counts.answers), u(report.late_messages), u(report.late_refused_stale));
  std::printf("  calls pending at a death: %llu, errors: %llu\n", u(counts.pending),
              u(counts.errors));
  // Every death is followed by a restart of the embedding program.
  print_summary_end(counts, report, {options.seed, all_kills(), all_kills(), dump_checks});
  const bool keep = options.keep || !report.violations.empty();
  if (!work_dir.empty() && !keep) {
    std::error_code ec;
    std::filesystem::remove_all(work_dir, ec);
  } else {
    std::printf("data kept in %s (journal %s)\n", data_dir.c_str(), journal.c_str());
  }
  return report.violations.empty() ? kExitClean : kExitViolations;
}

}  // namespace tarde::crash
