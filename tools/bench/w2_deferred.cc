// W2, the deferred retry: a transaction is enqueued, handed out, answered
// "not now, retry in delay_ms" (tarde: RESPOND CANCELLED retry_after=), handed
// out again when due, and answered SUCCESS. With --rate R, sixteen producer
// connections offer R new transactions (so R retries) per second and
// `connections` workers serve them; with --rate 0 (overload) every
// connection runs enqueue → reserve → answer as fast as it can. Measures
// retries completed per second, fire lateness (hand-out − announced due
// time) and the server's CPU per 1000 retries.
#include <chrono>

#include "tools/bench/proc_stats.h"
#include "tools/bench/workloads.h"

namespace tarde::bench {
namespace {

// Producer connections of the fixed-rate form: enough to offer 1000/s even
// where one enqueue takes up to 16 ms (a busy disk's fsync).
constexpr int kProducers = 16;

// Shared state of one W2 run.
struct W2State {
  Run* run = nullptr;
  bool stop_producing = false;
  bool stop_working = false;
  double rate = 0;
  SteadyClock::time_point start;
  uint64_t slots_taken = 0;
};

// A worker connection; `mixed` also enqueues one new transaction per loop.
class Worker {
 public:
  Worker(W2State* s, int c, bool mixed) : s_(s), c_(c), mixed_(mixed) {}
  void start() { next(); }
  bool idle() const { return idle_; }

 private:
  void next() {
    if (s_->stop_working) {
      idle_ = true;
      return;
    }
    if (mixed_ && !s_->stop_producing) {
      return s_->run->enqueue(c_, s_->run->ledger().add(), 0, [this](int64_t) { take(); });
    }
    take();
  }
  void take() {
    s_->run->reserve(c_, 1000, [this](std::optional<Job> job) {
      if (!job) return next();
      if (s_->run->ledger().handouts_of(job->number) == 1) {
        return s_->run->defer(c_, *job, s_->run->options().delay_ms, false,
                              [this](int64_t) { next(); });
      }
      s_->run->complete(c_, *job, [this] { next(); });
    });
  }

  W2State* s_;
  int c_;
  bool mixed_;
  bool idle_ = false;
};

// A producer connection of the fixed-rate form: takes the next free slot of
// the global schedule (slot k at start + k / rate).
class Producer {
 public:
  Producer(W2State* s, int c) : s_(s), c_(c) {}
  void start() { next(); }
  bool idle() const { return idle_; }

 private:
  void next() {
    if (s_->stop_producing) {
      idle_ = true;
      return;
    }
    const auto slot = s_->start + std::chrono::microseconds(static_cast<int64_t>(
                                      static_cast<double>(s_->slots_taken) * 1e6 / s_->rate));
    const auto now = SteadyClock::now();
    if (slot > now) {
      s_->run->loop().after(std::chrono::duration_cast<std::chrono::microseconds>(slot - now) +
                                std::chrono::microseconds(1),
                            [this] { next(); });
      return;
    }
    s_->slots_taken += 1;
    s_->run->enqueue(c_, s_->run->ledger().add(), 0, [this](int64_t) { next(); });
  }

  W2State* s_;
  int c_;
  bool idle_ = false;
};

}  // namespace

int run_w2_deferred(const Options& given) {
  Options options = given;
  options.workload =
      given.rate > 0 ? "w2-rate" + std::to_string(static_cast<int>(given.rate)) : "w2-overload";
  Run run(options);
  const bool paced = options.rate > 0;
  if (!run.open(options.connections + (paced ? kProducers : 0))) return 1;
  W2State s;
  s.run = &run;
  s.rate = options.rate;
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::unique_ptr<Producer>> producers;
  for (int c = 0; c < options.connections; ++c) {
    workers.push_back(std::make_unique<Worker>(&s, c, !paced));
  }
  for (int p = 0; paced && p < kProducers; ++p) {
    producers.push_back(std::make_unique<Producer>(&s, options.connections + p));
  }
  run.progress(
      "running " + std::to_string(options.seconds) + " s" +
      (paced ? " at " + std::to_string(options.rate) + " new transactions/s" : " flat out"));
  const double cpu_start = cpu_seconds(options.server_pid);
  s.start = SteadyClock::now();
  for (auto& w : workers) w->start();
  for (auto& p : producers) p->start();
  const auto measure = std::chrono::milliseconds(static_cast<int64_t>(options.seconds * 1000));
  // The steady window starts once the first retries come due (after the
  // first delay), so that the rate is not diluted by the start-up second.
  const auto warm = std::chrono::milliseconds(options.delay_ms);
  const bool has_warm_up = warm < measure;
  uint64_t retries_at_warm = 0;
  double cpu_at_warm = cpu_start;
  uint64_t retries_in_window = 0;
  double cpu_in_window = 0;
  if (has_warm_up) {
    run.loop().after(warm, [&] {
      retries_at_warm = run.ledger().retry_completions();
      cpu_at_warm = cpu_seconds(options.server_pid);
    });
  }
  run.loop().after(measure, [&] {
    s.stop_producing = true;
    retries_in_window = run.ledger().retry_completions() - retries_at_warm;
    cpu_in_window = cpu_seconds(options.server_pid) - cpu_at_warm;
  });
  const double window_s =
      options.seconds - (has_warm_up ? static_cast<double>(options.delay_ms) / 1000.0 : 0.0);
  // After the window, the transactions already started finish their retry.
  const auto all_done = [&] {
    if (!s.stop_producing) return false;
    for (auto& p : producers) {
      if (!p->idle()) return false;
    }
    if (run.ledger().completions() == run.ledger().jobs()) s.stop_working = true;
    for (auto& w : workers) {
      if (!w->idle()) return false;
    }
    return true;
  };
  const auto drain = std::chrono::milliseconds(options.delay_ms) + std::chrono::seconds(60);
  if (!run.drive(all_done, measure + drain, "W2 retries")) return 1;
  const bool ledger_ok = run.ledger().check(options.workload.c_str(), 2, 1, true);
  const int64_t left = run.pending();
  run.progress(std::to_string(retries_in_window) + " retries completed in the window; " +
               std::to_string(left) + " jobs left on the server");
  if (!ledger_ok || left != 0) {
    run.progress("FAILED: check");
    return 1;
  }
  const auto sink = run.sink();
  if (paced)
    sink.emit("new_per_s_achieved", static_cast<double>(run.ledger().jobs()) / options.seconds,
              "1/s");
  sink.emit("retries_per_s", static_cast<double>(retries_in_window) / window_s, "1/s");
  emit_percentiles(sink, "lateness", run.ledger().lateness_us(), true);
  if (options.server_pid > 0 && retries_in_window > 0) {
    sink.emit("cpu_ms_per_1000_retries",
              cpu_in_window * 1000.0 * 1000.0 / static_cast<double>(retries_in_window), "ms");
  }
  run.emit_latencies();
  return 0;
}

}  // namespace tarde::bench
