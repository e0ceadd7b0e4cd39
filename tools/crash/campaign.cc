#include "tools/crash/campaign.h"

#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <thread>

#include "tools/crash/final_state.h"
#include "tools/crash/recorder.h"
#include "tools/crash/server_control.h"
#include "tools/crash/workload.h"

namespace tarde::crash {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A life armed at wheel.after_page dies there only once the burst's last due
// entries come due, which final_state.cc's enqueue_burst places past the
// burst's estimated end: on a slow build (the sanitizers) that is later than
// kArmedLifeMs after the restart. The life still ends as soon as the point
// is reached.
constexpr int64_t kPagingLifeMs = 20000;
constexpr int kStartAttempts = 3;
// More due entries than one page of the server's wheel (DueTimers'
// page_limit, 4096), so that a restart must page the rest in.
constexpr uint64_t kBurstTransactions = 4200;

// Counts for arming crash points: how many times a point is reached before
// it fires. Commits and timers are frequent; recovery runs once per start;
// a reconciler slice every kReconcileEvery or so (a pass of a small store is
// one slice), about a dozen in an armed life.
uint64_t count_limit(const std::string& point) {
  if (point == "recovery.after_repair" || point == "wheel.after_page") return 1;
  if (point == "reconcile.after_slice") return 5;
  if (point.rfind("commit.", 0) == 0) return 40;
  return 20;
}

class Campaign {
 public:
  explicit Campaign(const CampaignOptions& options)
      : options_(options), rng_(options.seed), workload_(options, recorder_, endpoint_) {}

  int run();

 private:
  bool setup_dirs();
  bool start_server(const std::optional<std::string>& crash_at);
  std::optional<std::string> choose_arm();
  bool finished() const;
  void live_one_life();
  void after_death(const Death& death);
  void progress();
  void summary(const CheckReport& report, double took_s);
  void note(const std::string& text) {
    if (!options_.verbose) return;
    std::printf("[%7.1fs] %s\n", seconds_since(started_), text.c_str());
    std::fflush(stdout);
  }

  const CampaignOptions& options_;
  std::mt19937_64 rng_;
  Recorder recorder_;
  Endpoint endpoint_;
  Workload workload_;
  std::unique_ptr<ServerControl> server_;
  std::string work_dir_;  // removed at the end unless kept; empty with --data
  CampaignFigures figures_;
  std::vector<Violation> violations_;  // dump checks and unexpected exits
  std::optional<std::string> armed_;   // the crash point of the running life
  uint64_t bursts_ = 0;
  uint64_t deaths_ = 0;  // for --dump-check-every
  bool started_once_ = false;
  Clock::time_point started_;
  Clock::time_point last_progress_;
};

bool Campaign::setup_dirs() {
  std::string data_dir = options_.data_dir;
  std::string log_path = data_dir + ".server.log";
  if (data_dir.empty()) {
    std::string pattern = (std::filesystem::temp_directory_path() / "tarde-crash-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::fprintf(stderr, "tarde-crash: cannot create a temp dir\n");
      return false;
    }
    work_dir_ = pattern;
    data_dir = work_dir_ + "/data";
    log_path = work_dir_ + "/server.log";
  }
  server_ =
      std::make_unique<ServerControl>(options_.server_path, options_.dump_path, data_dir, log_path);
  return true;
}

// Starts a life; a server that dies at its crash point before listening
// (recovery.after_repair) counts as a death and is started again.
bool Campaign::start_server(const std::optional<std::string>& crash_at) {
  std::optional<std::string> arm = crash_at;
  for (int failures = 0; failures < kStartAttempts;) {
    armed_ = arm ? std::optional<std::string>(arm->substr(0, arm->find(':'))) : std::nullopt;
    auto port = server_->start(arm);
    if (port.is_ok()) {
      endpoint_.port = port.value();
      if (started_once_) figures_.restarts += 1;
      started_once_ = true;
      return true;
    }
    auto death = server_->poll_exit();
    if (death && death->crash_point && armed_) {
      after_death(*death);
      if (started_once_) figures_.restarts += 1;  // it did start, then died in recovery
      arm.reset();
      continue;
    }
    failures += 1;
    std::fprintf(stderr, "tarde-crash: the server did not start: %s\n%s\n",
                 port.status().to_string().c_str(), server_->log_tail(2000).c_str());
    arm.reset();
  }
  return false;
}

std::optional<std::string> Campaign::choose_arm() {
  if (options_.crash_points.empty()) return std::nullopt;
  // With one point named, every restart arms it: the run is about that point.
  const double arm_share = options_.crash_points.size() == 1 ? 1.0 : 0.5;
  if (std::uniform_real_distribution<double>(0, 1)(rng_) >= arm_share) return std::nullopt;
  const std::string point = options_.crash_points[rng_() % options_.crash_points.size()];
  // The burst that wheel.after_page needs is enqueued in a life that will
  // not die at a crash point of its own half-way through, at most
  // --bursts times, spread over the run (each burst makes every later
  // restart's background sweep longer).
  const double done = run_share(options_, Clock::now() - started_, figures_.kills());
  const double bursts_due = static_cast<double>(options_.bursts_max) * done + 1;
  if (point == "wheel.after_page" &&
      (bursts_ >= options_.bursts_max || static_cast<double>(bursts_) >= bursts_due || armed_)) {
    return std::nullopt;
  }
  const uint64_t count = 1 + rng_() % count_limit(point);
  return point + ":" + std::to_string(count);
}

bool Campaign::finished() const {
  if (options_.kills_max > 0 && figures_.kills() >= options_.kills_max) return true;
  return Clock::now() - started_ >= options_.duration;
}

// One life: run until the server dies at its crash point or the random kill
// instant comes (or the campaign is over), then restart it.
void Campaign::live_one_life() {
  const std::optional<std::string> next_arm = choose_arm();
  int64_t life_ms = kLifeMinMs + static_cast<int64_t>(rng_() % (kLifeMaxMs - kLifeMinMs));
  if (armed_) {
    life_ms = std::max(life_ms, *armed_ == "wheel.after_page" ? kPagingLifeMs : kArmedLifeMs);
  }
  if (next_arm && next_arm->rfind("wheel.after_page", 0) == 0) {
    // The next start must page in more due entries than fit in one page.
    uint64_t planned = 0;
    Status status = enqueue_burst(endpoint_.port.load(), recorder_, options_.seed, bursts_,
                                  kBurstTransactions, &planned);
    figures_.burst_transactions += planned;
    note("burst of delayed ENQUEUEs: " + (status.is_ok() ? std::string("ok") : status.to_string()));
    bursts_ += 1;
    life_ms = 0;
  }
  const Clock::time_point born = Clock::now();
  std::optional<Death> death;
  while (!(death = server_->poll_exit())) {
    progress();
    if (finished()) return;
    if (Clock::now() - born >= milliseconds(life_ms)) {
      death = server_->kill_now();
      break;
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
  after_death(*death);
  // The drain and the final reads need a server that stays up.
  if (!start_server(finished() ? std::nullopt : next_arm)) {
    std::fprintf(stderr, "tarde-crash: giving up: the server does not start again\n");
    std::exit(kExitNoServer);
  }
  note("restarted" + (next_arm ? " with TARDE_CRASH_AT=" + *next_arm : std::string()));
}

void Campaign::after_death(const Death& death) {
  endpoint_.port = 0;
  if (death.crash_point && armed_) {
    figures_.kills_at_point[*armed_] += 1;
    note("died at crash point " + *armed_);
  } else if (death.killed) {
    figures_.kills_random += 1;
    note("killed with SIGKILL");
  } else {
    violations_.push_back(Violation{
        "SERVER", "",
        "the server " + death.describe() + " by itself; log tail:\n" + server_->log_tail(1500)});
  }
  deaths_ += 1;
  workload_.set_kills(figures_.kills());
  if (deaths_ % options_.dump_check_every != 0) return;
  figures_.dump_checks += 1;
  for (const std::string& line : server_->dump_check()) {
    violations_.push_back(Violation{"DUMP", "", "after a death: " + line});
  }
}

void Campaign::progress() {
  if (Clock::now() - last_progress_ < kProgressEvery) return;
  last_progress_ = Clock::now();
  const RecordCounts counts = recorder_.counts();
  std::printf(
      "[%7.1fs] kills %llu restarts %llu transactions %llu handed-out %llu answers %llu "
      "pending %llu violations %zu\n",
      seconds_since(started_), static_cast<unsigned long long>(figures_.kills()),
      static_cast<unsigned long long>(figures_.restarts),
      static_cast<unsigned long long>(counts.transactions),
      static_cast<unsigned long long>(counts.hand_outs),
      static_cast<unsigned long long>(counts.answers),
      static_cast<unsigned long long>(counts.pending), violations_.size());
  std::fflush(stdout);
}

int Campaign::run() {
  std::printf("tarde-crash: seed %llu (replay with --seed %llu)\n",
              static_cast<unsigned long long>(options_.seed),
              static_cast<unsigned long long>(options_.seed));
  std::fflush(stdout);
  started_ = last_progress_ = Clock::now();
  if (!setup_dirs() || !start_server(std::nullopt)) return kExitNoServer;
  Status configured = configure_queue(endpoint_.port.load());
  if (!configured.is_ok()) {
    std::fprintf(stderr, "tarde-crash: CONFIG failed: %s\n", configured.to_string().c_str());
    return kExitNoServer;
  }
  workload_.start();
  while (!finished()) live_one_life();
  if (armed_) {
    // The campaign ended during an armed life: the drain needs a server that
    // will not die at its crash point.
    after_death(server_->kill_now());
    if (!start_server(std::nullopt)) return kExitNoServer;
  }
  note("campaign over: draining");
  workload_.begin_drain();
  const bool drained = drain(endpoint_.port.load(), recorder_, kDrainStallLimit);
  workload_.stop();
  note(drained ? "drained" : "the drain stalled: nothing settled for a minute");
  const std::map<std::string, FinalTx> finals =
      read_finals(endpoint_.port.load(), recorder_.tx_ids());
  const Death end = server_->stop();
  if (!end.killed && !(WIFEXITED(end.raw_status) && WEXITSTATUS(end.raw_status) == 0)) {
    violations_.push_back(Violation{"SERVER", "", "the final stop: the server " + end.describe()});
  }
  figures_.dump_checks += 1;
  for (const std::string& line : server_->dump_check()) {
    violations_.push_back(Violation{"DUMP", "", "at the end: " + line});
  }
  CheckReport report = check_guarantees(recorder_.logs(), finals);
  report.violations.insert(report.violations.begin(), violations_.begin(), violations_.end());
  summary(report, seconds_since(started_));
  const bool keep = options_.keep || !report.violations.empty();
  if (!work_dir_.empty() && !keep) {
    std::error_code ec;
    std::filesystem::remove_all(work_dir_, ec);
  } else {
    std::printf("data kept in %s (server log %s)\n", server_->data_dir().c_str(),
                server_->log_path().c_str());
  }
  return report.violations.empty() ? kExitClean : kExitViolations;
}

void Campaign::summary(const CheckReport& report, double took_s) {
  const RecordCounts counts = recorder_.counts();
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf("\ntarde-crash summary (seed %llu, %.1f s)\n", u(options_.seed), took_s);
  std::printf("  kills: %llu (random SIGKILL %llu, crash points %llu)\n", u(figures_.kills()),
              u(figures_.kills_random), u(figures_.kills() - figures_.kills_random));
  for (const auto& [point, n] : figures_.kills_at_point) {
    std::printf("    %-24s %llu\n", point.c_str(), u(n));
  }
  std::printf("  restarts: %llu\n", u(figures_.restarts));
  std::printf("  transactions: %llu (burst %llu)\n", u(counts.transactions),
              u(figures_.burst_transactions));
  std::printf("  requests handed out: %llu\n", u(counts.hand_outs));
  std::printf("  answers: %llu (late or duplicate messages %llu, refused STALE %llu)\n",
              u(counts.answers), u(report.late_messages), u(report.late_refused_stale));
  std::printf("  requests pending at a death: %llu, ERR replies: %llu\n", u(counts.pending),
              u(counts.errors));
  print_summary_end(counts, report,
                    {options_.seed, figures_.kills(), figures_.restarts, figures_.dump_checks});
}

}  // namespace

void print_summary_end(const RecordCounts& counts, const CheckReport& report,
                       const SummaryEnd& end) {
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf("  checks run: %llu (+ %llu tarde-dump checks)\n", u(report.checks),
              u(end.dump_checks));
  std::printf("  violations: %zu\n", report.violations.size());
  for (const Violation& v : report.violations) {
    std::printf("    %s %s: %s\n", v.guarantee.c_str(), v.tx_id.empty() ? "-" : v.tx_id.c_str(),
                v.text.c_str());
  }
  std::printf(
      "tarde-crash: seed %llu kills %llu restarts %llu transactions %llu requests %llu "
      "answers %llu checks %llu violations %zu\n",
      u(end.seed), u(end.kills), u(end.restarts), u(counts.transactions), u(counts.hand_outs),
      u(counts.answers), u(report.checks + end.dump_checks), report.violations.size());
  std::fflush(stdout);
}

uint64_t CampaignFigures::kills() const {
  uint64_t total = kills_random;
  for (const auto& [point, n] : kills_at_point) total += n;
  return total;
}

int run_campaign(const CampaignOptions& options) { return Campaign(options).run(); }

}  // namespace tarde::crash
