// W1, the full cycle: each connection repeats enqueue → reserve → complete
// (tarde: ENQUEUE → RESERVE → RESPOND SUCCESS) as fast as replies come back.
#include <unistd.h>

#include <chrono>

#include "tools/bench/proc_stats.h"
#include "tools/bench/workloads.h"

namespace tarde::bench {
namespace {

class CycleLoop {
 public:
  CycleLoop(Run* run, int c, const bool* stopping) : run_(run), c_(c), stopping_(stopping) {}
  void start() { next(); }
  bool idle() const { return idle_; }
  uint64_t cycles() const { return cycles_; }

 private:
  void next() {
    if (*stopping_) {
      idle_ = true;
      return;
    }
    const uint64_t number = run_->ledger().add();
    run_->enqueue(c_, number, 0, [this](int64_t) {
      run_->reserve(c_, 1000, [this](std::optional<Job> job) {
        if (!job) return run_->loop().fail("W1: RESERVE found nothing ready");
        run_->complete(c_, *job, [this] {
          cycles_ += 1;
          next();
        });
      });
    });
  }

  Run* run_;
  int c_;
  const bool* stopping_;
  bool idle_ = false;
  uint64_t cycles_ = 0;
};

}  // namespace

int run_w1_cycle(const Options& options) {
  Run run(options);
  if (!run.open(options.connections)) return 1;
  run.progress("running " + std::to_string(options.seconds) + " s");
  bool stopping = false;
  std::vector<std::unique_ptr<CycleLoop>> loops;
  for (int c = 0; c < options.connections; ++c) {
    loops.push_back(std::make_unique<CycleLoop>(&run, c, &stopping));
  }
  const double server_cpu_start = cpu_seconds(options.server_pid);
  const double generator_cpu_start = cpu_seconds(getpid());
  const auto start = SteadyClock::now();
  for (auto& loop : loops) loop->start();
  const auto measure = std::chrono::milliseconds(static_cast<int64_t>(options.seconds * 1000));
  run.loop().after(measure, [&] { stopping = true; });
  const auto all_idle = [&] {
    for (auto& loop : loops) {
      if (!loop->idle()) return false;
    }
    return true;
  };
  if (!run.drive(all_idle, measure + std::chrono::seconds(30), "W1 cycles")) return 1;
  const double elapsed = std::chrono::duration<double>(SteadyClock::now() - start).count();
  const double server_cpu = cpu_seconds(options.server_pid) - server_cpu_start;
  const double generator_cpu = cpu_seconds(getpid()) - generator_cpu_start;
  uint64_t cycles = 0;
  for (auto& loop : loops) cycles += loop->cycles();
  const bool ledger_ok = run.ledger().check("w1", 1, 0, true);
  const int64_t left = run.pending();
  run.progress(std::to_string(cycles) + " cycles in " + std::to_string(elapsed) + " s, " +
               std::to_string(left) + " jobs left on the server");
  if (!ledger_ok || left != 0) {
    run.progress("FAILED: check");
    return 1;
  }
  run.sink().emit("cycles_per_s", static_cast<double>(cycles) / elapsed, "1/s");
  // Both share the machine's cores: the generator's share bounds what any
  // server can reach here (docs/benchmarks.md, "The ceiling of this machine").
  if (cycles > 0) {
    const double us_per_cycle = 1e6 / static_cast<double>(cycles);
    if (options.server_pid != 0) {
      run.sink().emit("server_cpu_us_per_cycle", server_cpu * us_per_cycle, "us");
    }
    run.sink().emit("generator_cpu_us_per_cycle", generator_cpu * us_per_cycle, "us");
  }
  run.emit_latencies();
  return 0;
}

}  // namespace tarde::bench
