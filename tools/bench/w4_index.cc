// W4, second half: what N fires leave at the head of the retry index.
//
// Firing a retry deletes its `due` entry and writes a `ready` one; handing
// the request out deletes that. N fires thus leave N tombstones at the head
// of `due` and of the queue's `ready` range, exactly where the server's scans
// start (docs/design.md, "Disk"): after a restart, the first page of the due
// index and the ready queue's first refill are read from the start of their
// ranges. This workload drives tarde's own store (storage/, the server's
// RocksDB options) without a server, so that ten million fires take a
// minute rather than half an hour of cycles over TCP:
//   1. writes N due retries (one per transaction, a millisecond apart);
//   2. fires them all in order, 1000 per batch like a busy commit: each
//      `due` entry deleted and a `ready` entry written, and then each ready
//      entry deleted as it would be handed out;
//   3. times the reads the server makes after a restart (the first live due
//      entry from the start of `due`, the queue's first ready entry): on the
//      store as a kill -9 right after the fires would leave it (a read-only
//      open beside the live one), on the live store, after a clean close and
//      reopen, and once compaction has settled; and the same reads on the
//      store before the fires, with its N live entries, as the control.
//      The ready head is read twice: from the start of the queue's range,
//      and from the ready floor the engine would have written after these
//      hand-outs (engine.h, kReadyFloorEvery), which is how it reads now.
// One live retry, due after all the others, is what the reads must find.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <utility>

#include "engine/engine.h"
#include "storage/rocks_kv.h"
#include "storage/store.h"
#include "tools/bench/proc_stats.h"
#include "tools/bench/samples.h"
#include "tools/bench/workloads.h"

namespace tarde::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kBatchEntries = 1000;
constexpr int64_t kFirstFireMs = 1'000'000'000'000;  // 2001, so every key is "due"
constexpr const char* kQueue = "bench";
// Reads are timed this many times each and the best is kept: one cold read
// includes the page cache, which is not what the index costs.
constexpr int kReadRepeats = 5;
constexpr int kCrashViewOpens = 5;
constexpr auto kIndexSettlePoll = std::chrono::milliseconds(500);
constexpr auto kIndexSettledFor = std::chrono::seconds(3);
constexpr auto kIndexSettleAtMost = std::chrono::seconds(120);

std::string tx_id_of(uint64_t number) { return "ix" + std::to_string(number); }

storage::DueEntry due_of(uint64_t number) {
  return storage::DueEntry{kFirstFireMs + static_cast<int64_t>(number), tx_id_of(number),
                           storage::DueKind::kRetry, 1};
}

storage::ReadyEntry ready_of(uint64_t number) {
  return storage::ReadyEntry{kQueue, kFirstFireMs + static_cast<int64_t>(number), number + 1,
                             tx_id_of(number), 1};
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Writes `count` batches' worth of changes made by `add(batch, number)`.
bool write_all(storage::Store& store, uint64_t count, const char* what,
               const std::function<void(storage::Batch&, uint64_t)>& add) {
  const auto start = Clock::now();
  auto last_report = start;
  for (uint64_t first = 0; first < count; first += kBatchEntries) {
    storage::Batch batch;
    for (uint64_t n = first; n < std::min(count, first + kBatchEntries); ++n) add(batch, n);
    const Status status = store.write(batch);
    if (!status.is_ok()) {
      std::fprintf(stderr, "w4-index: %s: %s\n", what, status.to_string().c_str());
      return false;
    }
    if (Clock::now() - last_report > std::chrono::seconds(10)) {
      last_report = Clock::now();
      std::fprintf(stderr, "[w4-index] %s: %llu of %llu\n", what,
                   static_cast<unsigned long long>(first), static_cast<unsigned long long>(count));
    }
  }
  std::fprintf(stderr, "[w4-index] %s: %llu in %.1f s\n", what,
               static_cast<unsigned long long>(count), ms_since(start) / 1000);
  return true;
}

// The two head reads, best of kReadRepeats, in ms; the tx ids found are
// returned through `due_found` and `ready_found`.
struct HeadReads {
  double due_ms = 0;
  double ready_ms = 0;
  double ready_floor_ms = 0;
  std::string due_found;
  std::string ready_found;
  std::string ready_floor_found;
};

// The floor the engine raises after every kReadyFloorEvery hand-outs: just
// past the last entry of the last whole block handed out.
storage::ReadyFloor floor_after(uint64_t handed_out) {
  const uint64_t blocks = handed_out / engine::kReadyFloorEvery;
  if (blocks == 0) return storage::ReadyFloor{0, 0};
  const storage::ReadyEntry last = ready_of(blocks * engine::kReadyFloorEvery - 1);
  return storage::ReadyFloor{last.ready_at_ms, last.seq + 1};
}

// Runs read once, lowers *best_ms to its time if faster, and reports a
// failure (then clears *found, so that the caller's check fails).
void time_read(const char* what, const std::function<Status()>& read, double* best_ms,
               std::string* found) {
  const auto start = Clock::now();
  const Status status = read();
  *best_ms = std::min(*best_ms, ms_since(start));
  if (!status.is_ok()) {
    std::fprintf(stderr, "w4-index: the %s read failed: %s\n", what, status.to_string().c_str());
    found->clear();
  }
}

HeadReads time_head_reads(storage::Store& store, const storage::ReadyFloor& floor) {
  HeadReads reads;
  reads.due_ms = reads.ready_ms = reads.ready_floor_ms = std::numeric_limits<double>::infinity();
  auto first_ready = [](std::string* found) {
    return [found](const storage::ReadyEntry& entry) {
      *found = entry.tx_id;
      return false;
    };
  };
  for (int i = 0; i < kReadRepeats; ++i) {
    time_read(
        "due head",
        [&] {
          return store.scan_due(nullptr, kFirstFireMs * 2, [&](const storage::DueEntry& entry) {
            reads.due_found = entry.tx_id;
            return false;
          });
        },
        &reads.due_ms, &reads.due_found);
    time_read(
        "ready head", [&] { return store.scan_ready(kQueue, first_ready(&reads.ready_found)); },
        &reads.ready_ms, &reads.ready_found);
    time_read(
        "ready floor",
        [&] {
          return store.scan_ready_from(kQueue, floor.ready_at_ms, floor.seq,
                                       first_ready(&reads.ready_floor_found));
        },
        &reads.ready_floor_ms, &reads.ready_floor_found);
  }
  return reads;
}

// Opens tarde's store at dir; nullptr (and a message) on failure.
std::unique_ptr<storage::RocksKv> open_store(const std::string& dir, bool read_only = false) {
  storage::RocksKv::Options kv_options;
  kv_options.read_only = read_only;
  kv_options.sync = false;  // the figures are about reads; fsync adds nothing to them
  kv_options.log_sink = [](const std::string&) {};
  auto opened = storage::RocksKv::open(dir, kv_options);
  if (!opened.is_ok()) {
    std::fprintf(stderr, "w4-index: opening %s: %s\n", dir.c_str(),
                 opened.status().to_string().c_str());
    return nullptr;
  }
  return std::move(opened.value());
}

bool found_live(const HeadReads& reads, const std::string& live_id) {
  return reads.due_found == live_id && reads.ready_found == live_id &&
         reads.ready_floor_found == live_id;
}

// The head reads on the store as a kill -9 right now would leave it: the
// table files as they are and the WAL replayed, by a second, read-only open
// beside the live one. Such an open can race a flush of the live one (it
// lists the files, the flush deletes the WAL it then reads) and see deleted
// entries again; a view whose reads miss the live retry is that, and is
// taken again. `opens` counts the opens.
std::optional<HeadReads> crash_view_reads(const std::string& dir, const std::string& live_id,
                                          const storage::ReadyFloor& floor, int* opens) {
  for (*opens = 1; *opens <= kCrashViewOpens; ++*opens) {
    const std::unique_ptr<storage::RocksKv> view = open_store(dir, true);
    if (!view) return std::nullopt;
    storage::Store store(*view);
    const HeadReads reads = time_head_reads(store, floor);
    if (found_live(reads, live_id)) return reads;
  }
  std::fprintf(stderr, "w4-index: FAILED: %d read-only opens missed the live retry\n",
               kCrashViewOpens);
  return std::nullopt;
}

}  // namespace

int run_w4_index(const Options& given) {
  const uint64_t count = given.count;
  const std::string& dir = given.data_dir;
  const ResultSink sink{"w4-index-" + count_label(count),
                        given.label.empty() ? "tarde" : given.label, 1};
  if (dir.empty() || (std::filesystem::exists(dir) && !std::filesystem::is_empty(dir))) {
    std::fprintf(stderr, "w4-index: --data-dir must name a new or empty directory\n");
    return 1;
  }
  std::unique_ptr<storage::RocksKv> kv = open_store(dir);
  if (!kv) return 1;
  auto store = std::make_unique<storage::Store>(*kv);
  const bool loaded =
      write_all(*store, count, "due retries written",
                [](storage::Batch& batch, uint64_t n) { batch.put_due(due_of(n)); }) &&
      write_all(*store, 1, "the live retry written", [count](storage::Batch& batch, uint64_t) {
        batch.put_due(due_of(count));
        batch.put_ready(ready_of(count));
      });
  if (!loaded) return 1;
  const HeadReads control = time_head_reads(*store, floor_after(0));
  const auto fire_start = Clock::now();
  const bool fired =
      write_all(*store, count, "fired (due deleted, ready written)",
                [](storage::Batch& batch, uint64_t n) {
                  const storage::DueEntry due = due_of(n);
                  batch.delete_due(due.fire_at_ms, due.tx_id);
                  batch.put_ready(ready_of(n));
                }) &&
      write_all(*store, count, "handed out (ready deleted)", [](storage::Batch& batch, uint64_t n) {
        const storage::ReadyEntry ready = ready_of(n);
        batch.delete_ready(ready.queue, ready.ready_at_ms, ready.seq);
      });
  if (!fired) return 1;
  const double fire_s = ms_since(fire_start) / 1000;
  const std::string live_id = tx_id_of(count);
  const storage::ReadyFloor floor = floor_after(count);
  int crash_view_opens = 0;
  const std::optional<HeadReads> crashed = crash_view_reads(dir, live_id, floor, &crash_view_opens);
  if (!crashed) return 1;
  const HeadReads live = time_head_reads(*store, floor);

  store.reset();
  kv.reset();
  const auto reopen_start = Clock::now();
  kv = open_store(dir);
  if (!kv) return 1;
  store = std::make_unique<storage::Store>(*kv);
  const double reopen_ms = ms_since(reopen_start);
  const HeadReads reopened = time_head_reads(*store, floor);

  std::fprintf(stderr, "[w4-index] waiting for compaction to settle\n");
  wait_until_unchanged(dir, kIndexSettlePoll, kIndexSettledFor, kIndexSettleAtMost);
  const int64_t data = data_bytes(dir);
  const HeadReads settled = time_head_reads(*store, floor);

  const std::pair<const char*, const HeadReads*> views[] = {
      {"live", &live}, {"reopened", &reopened}, {"settled", &settled}};
  for (const auto& [name, reads] : views) {
    if (!found_live(*reads, live_id)) {
      std::fprintf(stderr, "w4-index: FAILED: the %s head reads found %s, %s and %s, not %s\n",
                   name, reads->due_found.c_str(), reads->ready_found.c_str(),
                   reads->ready_floor_found.c_str(), live_id.c_str());
      return 1;
    }
  }
  sink.emit("fire_per_s", static_cast<double>(count) / fire_s, "1/s");
  sink.emit("due_head_control_us", control.due_ms * 1000, "µs");
  sink.emit("due_head_after_fires_us", live.due_ms * 1000, "µs");
  sink.emit("due_head_crash_restart_us", crashed->due_ms * 1000, "µs");
  sink.emit("due_head_after_reopen_us", reopened.due_ms * 1000, "µs");
  sink.emit("due_head_settled_us", settled.due_ms * 1000, "µs");
  sink.emit("ready_head_control_us", control.ready_ms * 1000, "µs");
  sink.emit("ready_head_after_fires_us", live.ready_ms * 1000, "µs");
  sink.emit("ready_head_crash_restart_us", crashed->ready_ms * 1000, "µs");
  sink.emit("ready_head_after_reopen_us", reopened.ready_ms * 1000, "µs");
  sink.emit("ready_head_settled_us", settled.ready_ms * 1000, "µs");
  sink.emit("ready_floor_control_us", control.ready_floor_ms * 1000, "µs");
  sink.emit("ready_floor_after_fires_us", live.ready_floor_ms * 1000, "µs");
  sink.emit("ready_floor_crash_restart_us", crashed->ready_floor_ms * 1000, "µs");
  sink.emit("ready_floor_after_reopen_us", reopened.ready_floor_ms * 1000, "µs");
  sink.emit("ready_floor_settled_us", settled.ready_floor_ms * 1000, "µs");
  sink.emit("reopen_ms", reopen_ms, "ms");
  sink.emit("crash_view_opens", crash_view_opens, "");
  sink.emit("data_settled_mb", static_cast<double>(data) / (1024.0 * 1024.0), "MiB");
  return 0;
}

}  // namespace tarde::bench
