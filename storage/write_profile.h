#pragma once

#include <cstdint>
#include <mutex>

#include "base/figures.h"

namespace tarde::storage {

// WriteProfile adds up where the store's writes spent their time, from
// RocksDB's own per-thread counters (perf_context, iostats_context) read
// around each write, plus the writing thread's CPU time. It exists to
// attribute the cost of a durable commit (docs/benchmarks.md) to the WAL
// append, the fsync, the memtable inserts and the waits between writers,
// measured rather than guessed. Counting has a cost of its own (a clock
// read per timed step), so a RocksKv keeps one only when asked
// (`tarde serve --profile-writes`). Thread-safe.
class WriteProfile {
 public:
  // Sums since the store opened. Times in nanoseconds.
  struct Totals {
    uint64_t writes = 0;
    uint64_t keys = 0;
    uint64_t bytes = 0;         // the write batches' data
    uint64_t wall_ns = 0;       // the Write calls, start to end
    uint64_t cpu_ns = 0;        // the writing thread's CPU during them
    uint64_t wal_ns = 0;        // RocksDB: appending to the WAL and syncing it
    uint64_t wal_write_ns = 0;  // the WAL's write syscalls
    uint64_t fsync_ns = 0;      // the WAL's fsync/fdatasync syscalls
    uint64_t memtable_ns = 0;   // RocksDB: inserting into the memtables
    uint64_t wait_ns = 0;       // RocksDB: waiting to join or lead a write group
    uint64_t pre_post_ns = 0;   // RocksDB: the rest of the write's bookkeeping
  };

  // A write being measured: made on the writing thread right before the
  // write, finished right after it on the same thread.
  class Measure {
   public:
    Measure();
    void finish(WriteProfile& profile, uint64_t keys, uint64_t bytes);

   private:
    uint64_t wall_start_ns_;
    uint64_t cpu_start_ns_;
  };

  Totals totals() const;
  // write_profile_* on the metrics page, write_profile.* in STATS: the
  // counts, and the times by part in microseconds. Requires: this profile
  // outlives `figures`' renderings.
  void declare_figures(Figures& figures) const;

 private:
  mutable std::mutex mutex_;
  Totals totals_;
};

}  // namespace tarde::storage
