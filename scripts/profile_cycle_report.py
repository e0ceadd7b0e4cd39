#!/usr/bin/env python3
"""Turns what scripts/profile-cycle collected into a markdown report: where
the server's CPU goes per W1 cycle (an ENQUEUE, a RESERVE and a RESPOND).

Inputs, all in the run's directory:
  results.tsv         tarde-bench's RESULT lines (cycles, server CPU per cycle)
  threads-0, -1       per-thread figures before and after the run:
                      "tid name voluntary involuntary cpu_ticks"
  syscalls.txt        `perf stat -x,` of syscall tracepoints (optional)
  perf.txt            `perf script -F comm,tid,ip,sym` with call chains (optional)
  write-profile.txt   STATS lines write_profile.* of a second run (optional)

Each perf sample is put in the category of its innermost frame that a rule
names (the rules run from the leaf up), so a memcpy inside a RocksDB write
counts as RocksDB and a sample in the scheduler counts as switching threads.
Shares of samples are turned into microseconds with the server CPU per cycle
measured in the same run.
"""

import collections
import os
import re
import sys

# (category, pattern on a frame's symbol); the first rule that matches the
# innermost frame it can decides.
RULES = [
    # On a paravirtualized guest a system call's entry and exit are sampled
    # in the C library's wrapper of the call, in user space: counted apart,
    # the same for every server, whatever the call.
    ("system call entry and exit (C library wrappers)",
     r"^(__GI___libc_write|__libc_write|write|writev|__libc_read|read|__send|sendto|sendmsg"
     r"|__libc_recv|recvfrom|recvmsg|epoll_wait|epoll_pwait|epoll_ctl|fdatasync|fsync|syscall)$"),
    ("switching threads (scheduler)", r"^finish_task_switch|^__schedule$|^schedule$"),
    ("fsync (fdatasync)", r"fdatasync|__x64_sys_fsync|file_write_and_wait"),
    ("network send", r"tcp_sendmsg|sock_write_iter|^__x64_sys_sendto$"),
    ("network receive", r"tcp_recvmsg|sock_read_iter|^__x64_sys_recvfrom$"),
    ("WAL file write (write syscall)", r"ext4_file_write_iter|^ksys_write$|^__x64_sys_pwrite64$"),
    ("io_uring, the batches' own work", r"io_uring|io_submit_sqes|io_issue_sqe"),
    ("epoll_wait", r"epoll_wait"),
    ("epoll_ctl", r"epoll_ctl"),
    ("thread wakeups (futex)", r"futex|^pthread_cond_|^pthread_mutex_"),
    ("allocation", r"jemalloc|^je_|^operator new|^operator delete|^malloc$|^free$|^_int_malloc|^_int_free|^cfree|^sdallocx"),
    ("RocksDB memtable insert", r"MemTable::Add|InlineSkipList|MemTableInserter|MemTableRep"),
    ("RocksDB reads (Get)", r"DBImpl::Get|Version::Get|MemTable::Get|TableCache::Get"),
    ("RocksDB write batch", r"rocksdb::WriteBatch"),
    ("RocksDB write path, other", r"DBImpl::WriteImpl|WriteThread|DBImpl::Write|log::Writer"),
    ("parsing commands", r"tarde::net::Decoder|tarde::net::.*parse"),
    ("engine", r"tarde::engine::"),
    ("staged overlay, record cache", r"tarde::storage::StagedKv|tarde::storage::RecentValues"),
    ("record encoding, store", r"tarde::storage::"),
    ("sessions, replies, commit loop", r"tarde::net::"),
    ("Asio", r"^asio::"),
]
RULES = [(name, re.compile(pattern)) for name, pattern in RULES]
BACKGROUND = "RocksDB flush and compaction (its threads)"


def read_results(path):
    figures = {}
    with open(path) as results:
        for line in results:
            fields = line.rstrip("\n").split("\t")
            if len(fields) >= 7 and fields[0] == "RESULT":
                figures[fields[4]] = float(fields[5])
    return figures


def read_threads(path):
    threads = {}
    with open(path) as lines:
        for line in lines:
            fields = line.split()
            if len(fields) == 5:
                threads[fields[0]] = (fields[1], int(fields[2]), int(fields[3]), int(fields[4]))
    return threads


def categorize(perf_path):
    """Counts samples by (thread name, category)."""
    counts = collections.Counter()
    comm, frames = None, []

    def flush():
        if comm is None:
            return
        if comm.startswith("rocksdb:"):
            counts[(comm, BACKGROUND)] += 1
            return
        kernel = any("[kernel" in dso for _, dso in frames[:1])
        category = "other, kernel" if kernel else "other, user space"
        for symbol, _ in frames:
            match = next((name for name, rule in RULES if rule.search(symbol)), None)
            if match:
                category = match
                break
        counts[(comm, category)] += 1

    with open(perf_path, errors="replace") as lines:
        for line in lines:
            if not line.strip():
                continue
            if not line[0].isspace():
                flush()
                comm, frames = line.split()[0], []
                continue
            parts = line.strip().split(" ", 1)
            if len(parts) < 2:
                continue
            symbol, _, dso = parts[1].rpartition(" (")
            symbol = re.sub(r"\+0x[0-9a-f]+$", "", symbol)
            frames.append((symbol, dso))
    flush()
    return counts


def main(run_dir):
    results = read_results(os.path.join(run_dir, "results.tsv"))
    cycles_per_s = results.get("cycles_per_s", 0.0)
    cpu_per_cycle = results.get("server_cpu_us_per_cycle", 0.0)
    seconds = float(open(os.path.join(run_dir, "seconds")).read())
    cycles = cycles_per_s * seconds
    print(f"W1: {cycles_per_s:.0f} cycles/s, server CPU {cpu_per_cycle:.1f} µs per cycle")

    before = read_threads(os.path.join(run_dir, "threads-0"))
    after = read_threads(os.path.join(run_dir, "threads-1"))
    tick_us = 1e6 / os.sysconf("SC_CLK_TCK")
    print("\n| thread | CPU µs per cycle | sleeps per cycle | preemptions per cycle |")
    print("|---|---:|---:|---:|")
    for tid, (name, voluntary, involuntary, ticks) in sorted(after.items()):
        _, voluntary0, involuntary0, ticks0 = before.get(tid, (name, 0, 0, 0))
        cpu = (ticks - ticks0) * tick_us / cycles if cycles else 0
        if cpu == 0 and voluntary == voluntary0:
            continue
        print(f"| {name} | {cpu:.1f} | {(voluntary - voluntary0) / cycles:.3f} "
              f"| {(involuntary - involuntary0) / cycles:.3f} |")

    syscalls_path = os.path.join(run_dir, "syscalls.txt")
    if os.path.exists(syscalls_path):
        print("\n| syscall | per cycle |")
        print("|---|---:|")
        for line in open(syscalls_path):
            fields = line.strip().split(",")
            if len(fields) >= 3 and fields[2].startswith("syscalls:sys_enter_"):
                count = float(fields[0]) if fields[0].replace(".", "").isdigit() else 0
                if count:
                    print(f"| {fields[2][len('syscalls:sys_enter_'):]} | {count / cycles:.2f} |")
            elif len(fields) >= 3 and fields[2] == "context-switches":
                print(f"| (context switches) | {float(fields[0]) / cycles:.2f} |")

    perf_path = os.path.join(run_dir, "perf.txt")
    if os.path.exists(perf_path):
        counts = categorize(perf_path)
        total = sum(counts.values())
        by_category = collections.Counter()
        for (_, category), n in counts.items():
            by_category[category] += n
        print(f"\nCPU by category ({total} samples, scaled to {cpu_per_cycle:.1f} µs per cycle):\n")
        print("| category | µs per cycle | share |")
        print("|---|---:|---:|")
        for category, n in by_category.most_common():
            print(f"| {category} | {cpu_per_cycle * n / total:.1f} | {100 * n / total:.0f} % |")

    profile_path = os.path.join(run_dir, "write-profile.txt")
    if os.path.exists(profile_path):
        profile = {}
        for line in open(profile_path):
            fields = line.split()
            if len(fields) == 2 and fields[0].startswith("write_profile."):
                profile[fields[0][len("write_profile."):]] = float(fields[1])
        profile_cycles = float(open(os.path.join(run_dir, "write-profile-cycles")).read())
        writes = profile.get("writes", 0)
        if writes and profile_cycles:
            print(f"\nRocksDB writes of a second run with --profile-writes on: "
                  f"{profile_cycles / writes:.1f} cycles per write, "
                  f"{profile.get('keys', 0) / profile_cycles:.1f} keys and "
                  f"{profile.get('bytes', 0) / profile_cycles:.0f} bytes per cycle.\n")
            print("| part of a write | µs per cycle | µs per write |")
            print("|---|---:|---:|")
            for part in ("wall", "cpu", "wal", "wal_write", "fsync", "memtable", "wait",
                         "pre_post"):
                value = profile.get(part + "_us", 0)
                print(f"| {part} | {value / profile_cycles:.1f} | {value / writes:.1f} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: profile_cycle_report.py RUN_DIR", file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1])
