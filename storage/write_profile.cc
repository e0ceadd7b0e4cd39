#include "storage/write_profile.h"

#include <rocksdb/iostats_context.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>
#include <time.h>

namespace tarde::storage {
namespace {

uint64_t now_ns(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

WriteProfile::Measure::Measure() {
  // The level is per thread; RocksKv sets it back to off at its next entry.
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableTimeExceptForMutex);
  rocksdb::get_perf_context()->Reset();
  rocksdb::get_iostats_context()->Reset();
  wall_start_ns_ = now_ns(CLOCK_MONOTONIC);
  cpu_start_ns_ = now_ns(CLOCK_THREAD_CPUTIME_ID);
}

void WriteProfile::Measure::finish(WriteProfile& profile, uint64_t keys, uint64_t bytes) {
  const uint64_t cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_start_ns_;
  const uint64_t wall_ns = now_ns(CLOCK_MONOTONIC) - wall_start_ns_;
  const rocksdb::PerfContext& perf = *rocksdb::get_perf_context();
  const rocksdb::IOStatsContext& io = *rocksdb::get_iostats_context();
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  std::lock_guard<std::mutex> lock(profile.mutex_);
  Totals& t = profile.totals_;
  t.writes += 1;
  t.keys += keys;
  t.bytes += bytes;
  t.wall_ns += wall_ns;
  t.cpu_ns += cpu_ns;
  t.wal_ns += perf.write_wal_time;
  t.wal_write_ns += io.write_nanos;
  t.fsync_ns += io.fsync_nanos;
  t.memtable_ns += perf.write_memtable_time;
  t.wait_ns += perf.write_thread_wait_nanos;
  t.pre_post_ns += perf.write_pre_and_post_process_time;
}

void WriteProfile::declare_figures(Figures& figures) const {
  const auto count = [&](const char* name, const char* help, const char* stats,
                         uint64_t Totals::*field) {
    figures.sampled(
        {.name = name, .kind = FigureKind::kCounter, .help = help, .stats_name = stats},
        [this, field](FigureSamples& out) { out.total(static_cast<double>(totals().*field)); });
  };
  count("write_profile_writes_total", "Store writes timed (--profile-writes).",
        "write_profile.writes", &Totals::writes);
  count("write_profile_keys_total", "Keys put or deleted by the timed writes.",
        "write_profile.keys", &Totals::keys);
  count("write_profile_bytes_total", "Bytes of the timed writes' batches.", "write_profile.bytes",
        &Totals::bytes);
  figures.sampled(
      {.name = "write_profile_seconds_total",
       .kind = FigureKind::kCounter,
       .help = "Time of the timed writes by part: the whole call (wall), the writing thread's "
               "CPU, RocksDB's WAL append and sync (wal), its write and fsync syscalls, the "
               "memtable inserts, waiting for the write group, and the rest.",
       .labels = {"part"},
       .stats_each = "write_profile.{}_us",
       .metrics_divisor = 1e6},
      [this](FigureSamples& out) {
        const Totals t = totals();
        const auto us = [](uint64_t ns) { return static_cast<double>(ns / 1000); };
        out.add({"wall"}, us(t.wall_ns));
        out.add({"cpu"}, us(t.cpu_ns));
        out.add({"wal"}, us(t.wal_ns));
        out.add({"wal_write"}, us(t.wal_write_ns));
        out.add({"fsync"}, us(t.fsync_ns));
        out.add({"memtable"}, us(t.memtable_ns));
        out.add({"wait"}, us(t.wait_ns));
        out.add({"pre_post"}, us(t.pre_post_ns));
        out.total(us(t.wall_ns));
      });
}

WriteProfile::Totals WriteProfile::totals() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return totals_;
}

}  // namespace tarde::storage
