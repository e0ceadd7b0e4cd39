// W3, the burst: --count jobs all due at one instant T. The generator first
// measures how fast this system takes enqueues (one second of jobs due now,
// then drained), picks T so that loading ends before it, loads the burst,
// and lets every connection reserve → complete until all are done. Measures
// the time from T to the last completion, the first hand-out after T, fire
// lateness, and the server's memory before loading, at T and at its peak.
#include <chrono>
#include <memory>

#include "tools/bench/loops.h"
#include "tools/bench/proc_stats.h"
#include "tools/bench/workloads.h"

namespace tarde::bench {
namespace {

// One second of enqueues due now, then drained; returns enqueues per second
// (0 on failure).
double calibrate_enqueue_rate(Run& run) {
  Ledger& ledger = run.ledger();
  bool calibrating = true;
  Loops calibrate(
      &run, [&] { return calibrating; },
      [&](int c, std::function<void()> next) {
        run.enqueue(c, ledger.add(), 0, [next](int64_t) { next(); });
      });
  run.loop().after(std::chrono::seconds(1), [&] { calibrating = false; });
  calibrate.start();
  if (!run.drive([&] { return calibrate.idle(); }, std::chrono::seconds(30), "calibration")) {
    return 0;
  }
  const double enqueue_rate = static_cast<double>(ledger.jobs());
  Loops drain(
      &run, [&] { return ledger.completions() < ledger.jobs(); },
      [&](int c, std::function<void()> next) {
        run.reserve(c, 200, [&, c, next](std::optional<Job> job) {
          if (!job) return next();
          run.complete(c, *job, next);
        });
      });
  drain.start();
  if (!run.drive([&] { return drain.idle(); }, std::chrono::seconds(60), "calibration drain")) {
    return 0;
  }
  return enqueue_rate;
}

// Enqueues `count` jobs due at due_us on every connection.
bool load_burst(Run& run, uint64_t count, int64_t due_us) {
  Ledger& ledger = run.ledger();
  uint64_t loaded = 0;
  Loops load(
      &run, [&] { return loaded < count; },
      [&](int c, std::function<void()> next) {
        loaded += 1;
        const uint64_t number = ledger.add();
        run.enqueue(c, number, due_us, [&, number, next](int64_t announced) {
          ledger.announce(number, announced);
          next();
        });
      });
  load.start();
  const auto to_due = std::chrono::microseconds(due_us - wall_now_us());
  const auto limit =
      std::chrono::duration_cast<std::chrono::milliseconds>(to_due) + std::chrono::seconds(600);
  return run.drive([&] { return load.idle(); }, limit, "burst load");
}

// What the drain phase saw.
struct Drained {
  int64_t first_handout_us = 0;
  int64_t memory_peak = 0;
};

// Records the server's peak memory every 50 ms while *alive holds.
struct MemorySampler {
  Run* run;
  int pid;
  int64_t* peak;
  std::shared_ptr<bool> alive;
  void operator()() const {
    if (!*alive) return;
    *peak = std::max(*peak, memory_bytes(pid));
    run->loop().after(std::chrono::milliseconds(50), *this);
  }
};

// Every connection reserves → completes until every job is done, sampling
// the server's memory every 50 ms.
bool drain_burst(Run& run, Drained* seen) {
  Ledger& ledger = run.ledger();
  const int pid = run.options().server_pid;
  const auto alive = std::make_shared<bool>(true);
  if (pid > 0) MemorySampler{&run, pid, &seen->memory_peak, alive}();
  Loops burst(
      &run, [&] { return ledger.completions() < ledger.jobs(); },
      [&](int c, std::function<void()> next) {
        run.reserve(c, 1000, [&, c, next](std::optional<Job> job) {
          if (!job) return next();
          if (seen->first_handout_us == 0) seen->first_handout_us = wall_now_us();
          run.complete(c, *job, next);
        });
      });
  burst.start();
  const bool ok =
      run.drive([&] { return burst.idle(); }, std::chrono::seconds(1200), "burst drain");
  *alive = false;  // the sample still queued must neither measure nor re-arm
  return ok;
}

}  // namespace

int run_w3_burst(const Options& options) {
  Run run(options);
  if (!run.open(options.connections)) return 1;
  Ledger& ledger = run.ledger();
  const int pid = options.server_pid;
  const double enqueue_rate = calibrate_enqueue_rate(run);
  if (enqueue_rate <= 0) return 1;
  const uint64_t calibration_jobs = ledger.jobs();
  // T leaves loading half as long again as the calibrated rate needs.
  const double lead_s = static_cast<double>(options.count) / enqueue_rate * 1.5 + 2;
  const int64_t due_us = wall_now_us() + static_cast<int64_t>(lead_s * 1e6);
  run.progress("enqueue rate " + std::to_string(static_cast<int>(enqueue_rate)) + "/s; loading " +
               std::to_string(options.count) + " jobs due in " +
               std::to_string(static_cast<int>(lead_s)) + " s");
  const int64_t memory_before = memory_bytes(pid);
  if (!load_burst(run, options.count, due_us)) return 1;
  // A delay is counted from when the server reads it, so the instant it
  // announces may come a little after the one asked for: hand-outs are
  // measured from the earliest announced instant (the one asked for when
  // the system takes absolute times).
  const int64_t announced_us = ledger.earliest_due_us(calibration_jobs + 1);
  const int64_t burst_due_us = announced_us != 0 ? announced_us : due_us;
  const bool overran = wall_now_us() >= due_us;
  if (overran) run.progress("WARNING: loading ended after the due instant");
  Drained seen;
  const int64_t memory_loaded = memory_bytes(pid);
  seen.memory_peak = memory_loaded;
  ledger.lateness_us().clear();
  const uint64_t handouts_before = ledger.handouts();
  if (!drain_burst(run, &seen)) return 1;
  const bool ledger_ok =
      ledger.check("w3", 1, 0, true) && ledger.handouts() - handouts_before == options.count;
  const int64_t left = run.pending();
  const double drain_s = static_cast<double>(ledger.last_completion_us() - burst_due_us) / 1e6;
  run.progress("drained " + std::to_string(options.count) + " in " + std::to_string(drain_s) +
               " s after the due instant; " + std::to_string(left) + " jobs left (" +
               std::to_string(calibration_jobs) + " calibration jobs before)");
  if (!ledger_ok || left != 0) {
    run.progress("FAILED: check");
    return 1;
  }
  auto sink = run.sink();
  sink.workload = "w3-" + count_label(options.count);
  sink.emit("drain_s", drain_s, "s");
  sink.emit("handouts_per_s", static_cast<double>(options.count) / drain_s, "1/s");
  sink.emit("first_handout_ms", static_cast<double>(seen.first_handout_us - burst_due_us) / 1000.0,
            "ms");
  sink.emit("announced_after_asked_ms", static_cast<double>(burst_due_us - due_us) / 1000.0, "ms");
  emit_percentiles(sink, "lateness", ledger.lateness_us(), true);
  if (pid > 0) {
    sink.emit("rss_before_mb", static_cast<double>(memory_before) / kMiB, "MiB");
    sink.emit("rss_loaded_mb", static_cast<double>(memory_loaded) / kMiB, "MiB");
    sink.emit("rss_peak_mb", static_cast<double>(seen.memory_peak) / kMiB, "MiB");
    sink.emit("rss_growth_mb", static_cast<double>(seen.memory_peak - memory_before) / kMiB, "MiB");
  }
  if (overran) sink.emit("load_overran_due", 1, "flag");
  return 0;
}

}  // namespace tarde::bench
