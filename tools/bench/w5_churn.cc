// W5, churn: --count transactions enqueued once, then handed out and
// deferred again and again for --seconds (tarde: CANCELLED and TRANSIENT in
// turn, each with retry_after = --delay-ms; the peers have one kind of
// deferral). Nothing ever completes, so a store that keeps what it no
// longer needs grows: the data directory's size is sampled every
// --sample-s and reported with its ratio to the first sample.
#include <chrono>

#include "tools/bench/loops.h"
#include "tools/bench/proc_stats.h"
#include "tools/bench/workloads.h"

namespace tarde::bench {

int run_w5_churn(const Options& options) {
  Run run(options);
  if (!run.open(options.connections)) return 1;
  Ledger& ledger = run.ledger();
  Loops load(
      &run, [&] { return ledger.jobs() < options.count; },
      [&](int c, std::function<void()> next) {
        run.enqueue(c, ledger.add(), 0, [next](int64_t) { next(); });
      });
  load.start();
  if (!run.drive([&] { return load.idle(); }, std::chrono::hours(1), "W5 load")) return 1;
  run.progress("loaded " + std::to_string(options.count) + "; churning for " +
               std::to_string(options.seconds) + " s");
  bool churning = true;
  uint64_t deferrals = 0;
  Loops churn(
      &run, [&] { return churning; },
      [&](int c, std::function<void()> next) {
        run.reserve(c, 1000, [&, c, next](std::optional<Job> job) {
          if (!job) return next();
          const bool transient = ledger.handouts_of(job->number) % 2 == 0;
          run.defer(c, *job, options.delay_ms, transient, [&, next](int64_t) {
            deferrals += 1;
            next();
          });
        });
      });
  std::vector<double> disk_mb;
  std::function<void()> sample = [&] {
    disk_mb.push_back(static_cast<double>(disk_bytes(options.data_dir)) / kMiB);
    run.progress("disk " + std::to_string(disk_mb.back()) + " MiB after " +
                 std::to_string(deferrals) + " deferrals");
    run.loop().after(std::chrono::milliseconds(static_cast<int64_t>(options.sample_seconds * 1000)),
                     sample);
  };
  const auto start = SteadyClock::now();
  churn.start();
  run.loop().after(std::chrono::milliseconds(static_cast<int64_t>(options.sample_seconds * 1000)),
                   sample);
  run.loop().after(std::chrono::milliseconds(static_cast<int64_t>(options.seconds * 1000)),
                   [&] { churning = false; });
  const auto limit = std::chrono::milliseconds(static_cast<int64_t>(options.seconds * 1000)) +
                     std::chrono::seconds(30);
  if (!run.drive([&] { return churn.idle(); }, limit, "W5 churn")) return 1;
  const double elapsed = std::chrono::duration<double>(SteadyClock::now() - start).count();
  const double final_mb = static_cast<double>(disk_bytes(options.data_dir)) / kMiB;
  const bool ledger_ok = ledger.check("w5", Ledger::kAnyCount, Ledger::kAnyCount, false);
  const int64_t left = run.pending();
  run.progress(std::to_string(deferrals) + " deferrals; " + std::to_string(left) +
               " jobs held at the end");
  if (!ledger_ok || left != static_cast<int64_t>(options.count)) {
    run.progress("FAILED: check");
    return 1;
  }
  const auto sink = run.sink();
  sink.emit("deferrals_per_s", static_cast<double>(deferrals) / elapsed, "1/s");
  if (!options.data_dir.empty()) {
    const double first_mb = disk_mb.empty() ? final_mb : disk_mb.front();
    sink.emit("disk_first_sample_mb", first_mb, "MiB");
    sink.emit("disk_end_mb", final_mb, "MiB");
    sink.emit("disk_end_over_first", first_mb > 0 ? final_mb / first_mb : 0, "x");
    sink.emit("data_end_mb", static_cast<double>(data_bytes(options.data_dir)) / kMiB, "MiB");
  }
  return 0;
}

}  // namespace tarde::bench
