#pragma once

#include <chrono>
#include <cstdint>
#include <string>

// What the benchmark reads about the server under test from /proc and the
// file system: CPU time, memory and disk use. A server may be one process
// (tarde, beanstalkd, Redis) or a tree (PostgreSQL's postmaster and its
// backends); every figure covers the process and all its descendants.
namespace tarde::bench {

// utime + stime of pid and its descendants, in seconds; 0 if pid is 0.
double cpu_seconds(int pid);

// Bytes in a MiB, for the figures printed in MiB.
inline constexpr double kMiB = 1024.0 * 1024.0;

// Resident memory in bytes: VmRSS for a single process; for a tree, the sum
// of Pss (so shared buffers are not counted once per backend).
int64_t memory_bytes(int pid);

// Bytes allocated on disk under `path` (st_blocks × 512); 0 if empty path.
int64_t disk_bytes(const std::string& path);
// The files' lengths under `path` (st_size): what they hold, without space
// preallocated for them (RocksDB preallocates its WAL).
int64_t data_bytes(const std::string& path);

// Waits until data_bytes(path) has not changed for `quiet_for` (sampled every
// `poll`), or `at_most` has passed: a store still flushing or compacting
// holds old and new files at once. Returns the seconds waited.
double wait_until_unchanged(const std::string& path, std::chrono::milliseconds poll,
                            std::chrono::milliseconds quiet_for, std::chrono::milliseconds at_most);

}  // namespace tarde::bench
