// W4, scale and restart, in two invocations around a kill -9 done by
// scripts/bench:
// - w4-load: enqueues --count jobs due in an hour, reports the load rate and
//   the server's memory and disk, then one probe job due 2 s later, and
//   exits (the script kills the server at once, before the probe is due);
// - w4-restart: run right after the script restarted the server (--since-ns
//   is when it did), connects until the server answers (time to first
//   reply), reserves until the overdue probe comes out (time to first
//   firing), completes it and checks that the backlog is all still there.
#include <chrono>
#include <cstdio>
#include <thread>

#include "tools/bench/loops.h"
#include "tools/bench/proc_stats.h"
#include "tools/bench/workloads.h"

namespace tarde::bench {
namespace {

constexpr int64_t kBacklogDelayUs = 3600LL * 1'000'000;
constexpr int64_t kProbeDelayUs = 2'000'000;
// How long w4-restart keeps trying: far above any restart seen.
constexpr auto kRestartPatience = std::chrono::seconds(300);
// After loading, a store may still be flushing or compacting, and then holds
// old and new files at once. The settled figures are taken once the data
// directory's size has not changed for kSettledFor (sampled every
// kSettlePoll), or after kSettleAtMost.
constexpr auto kSettlePoll = std::chrono::milliseconds(250);
constexpr auto kSettledFor = std::chrono::seconds(2);
constexpr auto kSettleAtMost = std::chrono::seconds(30);

double ms_since_ns(int64_t since_ns) {
  const int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  return static_cast<double>(now_ns - since_ns) / 1e6;
}

}  // namespace

int run_w4_load(const Options& given) {
  Options options = given;
  options.workload = "w4-" + count_label(given.count);
  Run run(options);
  if (!run.open(options.connections)) return 1;
  const int pid = options.server_pid;
  const int64_t memory_before = memory_bytes(pid);
  const int64_t disk_before = disk_bytes(options.data_dir);
  const int64_t due_us = wall_now_us() + kBacklogDelayUs;
  uint64_t sent = 0;
  uint64_t done = 0;
  const auto start = SteadyClock::now();
  auto last_report = start;
  Loops load(
      &run, [&] { return sent < options.count; },
      [&](int c, std::function<void()> next) {
        sent += 1;
        // Job numbers are not kept in the ledger: 10 M of them would cost the
        // generator more memory than the server under test.
        run.client(c).enqueue(sent, due_us, [&, next](int64_t) {
          done += 1;
          if (SteadyClock::now() - last_report > std::chrono::seconds(10)) {
            last_report = SteadyClock::now();
            run.progress("loaded " + std::to_string(done) + " of " + std::to_string(options.count));
          }
          next();
        });
      });
  load.start();
  if (!run.drive([&] { return load.idle(); }, std::chrono::hours(3), "W4 load")) return 1;
  const double load_s = std::chrono::duration<double>(SteadyClock::now() - start).count();
  const int64_t memory_loaded = memory_bytes(pid);
  const int64_t disk_loaded = disk_bytes(options.data_dir);
  const int64_t data_loaded = data_bytes(options.data_dir);
  run.progress("loaded; waiting for the data directory to settle");
  const double settle_s =
      wait_until_unchanged(options.data_dir, kSettlePoll, kSettledFor, kSettleAtMost);
  const int64_t memory_settled = memory_bytes(pid);
  const int64_t disk_settled = disk_bytes(options.data_dir);
  const int64_t data_settled = data_bytes(options.data_dir);
  bool probed = false;
  run.client(0).enqueue(options.count + 1, wall_now_us() + kProbeDelayUs,
                        [&](int64_t) { probed = true; });
  if (!run.drive([&] { return probed; }, std::chrono::seconds(30), "probe")) return 1;
  const int64_t left = run.pending();
  run.progress("loaded " + std::to_string(options.count) + " in " + std::to_string(load_s) +
               " s; the server holds " + std::to_string(left) + " jobs");
  if (left != static_cast<int64_t>(options.count) + 1) {
    run.progress("FAILED: check");
    return 1;
  }
  const auto sink = run.sink();
  sink.emit("load_per_s", static_cast<double>(options.count) / load_s, "1/s");
  if (pid > 0) {
    sink.emit("rss_mb", static_cast<double>(memory_loaded) / kMiB, "MiB");
    sink.emit("rss_growth_mb", static_cast<double>(memory_loaded - memory_before) / kMiB, "MiB");
    sink.emit("rss_settled_mb", static_cast<double>(memory_settled) / kMiB, "MiB");
  }
  if (!options.data_dir.empty()) {
    sink.emit("disk_mb", static_cast<double>(disk_loaded) / kMiB, "MiB");
    sink.emit("disk_growth_mb", static_cast<double>(disk_loaded - disk_before) / kMiB, "MiB");
    sink.emit("data_mb", static_cast<double>(data_loaded) / kMiB, "MiB");
    sink.emit("disk_settled_mb", static_cast<double>(disk_settled) / kMiB, "MiB");
    sink.emit("data_settled_mb", static_cast<double>(data_settled) / kMiB, "MiB");
    sink.emit("settle_s", settle_s, "s");
  }
  return 0;
}

int run_w4_restart(const Options& given) {
  Options options = given;
  options.workload = "w4-" + count_label(given.count);
  const auto give_up = SteadyClock::now() + kRestartPatience;
  std::unique_ptr<Run> run;
  while (true) {
    run = std::make_unique<Run>(options);
    run->set_quiet(true);
    if (run->open(1)) {
      bool answered = false;
      run->client(0).ping([&] { answered = true; });
      if (run->drive([&] { return answered; }, std::chrono::seconds(10), "ping")) break;
    }
    if (SteadyClock::now() > give_up) {
      std::fprintf(stderr, "w4-restart: the server did not answer in time\n");
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const double first_reply_ms = ms_since_ns(options.since_ns);
  run->set_quiet(false);
  std::optional<Job> probe;
  std::function<void()> try_reserve = [&] {
    run->client(0).reserve(1000, [&](std::optional<Job> job) {
      if (job)
        probe = std::move(job);
      else
        try_reserve();
    });
  };
  try_reserve();
  if (!run->drive([&] { return probe.has_value(); }, kRestartPatience, "first firing")) return 1;
  const double first_fire_ms = ms_since_ns(options.since_ns);
  const bool is_probe = probe->number == options.count + 1;
  bool completed = false;
  run->client(0).complete(*probe, [&] { completed = true; });
  if (!run->drive([&] { return completed; }, std::chrono::seconds(30), "probe completion"))
    return 1;
  const int64_t left = run->pending();
  const double counted_ms = ms_since_ns(options.since_ns);
  run->progress("first reply " + std::to_string(first_reply_ms) + " ms, first firing " +
                std::to_string(first_fire_ms) + " ms after start; " + std::to_string(left) +
                " jobs held after the probe");
  if (!is_probe || left != static_cast<int64_t>(options.count)) {
    run->progress("FAILED: check (the first job out was not the probe, or jobs were lost)");
    return 1;
  }
  const auto sink = run->sink();
  sink.emit("restart_first_reply_ms", first_reply_ms, "ms");
  sink.emit("restart_first_fire_ms", first_fire_ms, "ms");
  // When the server could say how many jobs it holds (tarde counts them in
  // the background after a start, and serves meanwhile).
  sink.emit("restart_counted_ms", counted_ms, "ms");
  if (options.server_pid > 0) {
    sink.emit("rss_after_restart_mb", static_cast<double>(memory_bytes(options.server_pid)) / kMiB,
              "MiB");
  }
  return 0;
}

}  // namespace tarde::bench
