// tarde-fill: writes many transactions straight into a stopped server's data
// directory, through the Engine (so every record, index entry and event is
// exactly what ENQUEUE writes), without the network or fsync. It exists to
// build the big data sets of the scale measurements (docs/benchmarks.md: ten
// million pending retries) in minutes instead of hours.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/random.h"
#include "base/system_clock.h"
#include "storage/rocks_kv.h"
#include "storage/staged_kv.h"
#include "storage/store.h"

namespace {

constexpr int kExitUsage = 2;
constexpr int kExitFailed = 3;
// Transitions written per RocksDB write: big enough that the write cost is
// spread, small enough that the overlay stays a few MB.
constexpr size_t kTransitionsPerWrite = 4096;

const char* kUsage = R"(usage: tarde-fill <data-dir> --count N [options]

Writes N new transactions into a data directory that no server is using.
  --queue Q            queue (default q)
  --prefix P           tx_ids are P0, P1, ... (default t)
  --start I            first number after the prefix (default 0)
  --delay-ms D         each is SCHEDULED to fire D ms from now (default 3600000);
                       with --ready they are SENDING (ready) instead
  --spread-ms S        fire instants spread evenly over [D, D+S) (default 0: the same instant)
  --at MS              fire at this absolute wall-clock instant (epoch ms) instead of --delay-ms
  --payload-bytes B    payload size (default 128)
  --ready              enqueue as ready requests instead of scheduled retries
)";

struct FillOptions {
  std::string dir;
  uint64_t count = 0;
  std::string queue = "q";
  std::string prefix = "t";
  uint64_t start = 0;
  int64_t delay_ms = 3'600'000;
  int64_t spread_ms = 0;
  int64_t at_ms = 0;
  size_t payload_bytes = 128;
  bool ready = false;
};

bool parse(int argc, char** argv, FillOptions* out) {
  if (argc < 2) return false;
  out->dir = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--ready") {
      out->ready = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    const std::string value = argv[++i];
    if (flag == "--count") out->count = std::strtoull(value.c_str(), nullptr, 10);
    else if (flag == "--queue") out->queue = value;
    else if (flag == "--prefix") out->prefix = value;
    else if (flag == "--start") out->start = std::strtoull(value.c_str(), nullptr, 10);
    else if (flag == "--delay-ms") out->delay_ms = std::strtoll(value.c_str(), nullptr, 10);
    else if (flag == "--spread-ms") out->spread_ms = std::strtoll(value.c_str(), nullptr, 10);
    else if (flag == "--at") out->at_ms = std::strtoll(value.c_str(), nullptr, 10);
    else if (flag == "--payload-bytes") out->payload_bytes = std::strtoull(value.c_str(), nullptr, 10);
    else return false;
  }
  return out->count > 0;
}

// The engine's clock, frozen at the tool's start so that --delay-ms gives
// every transaction the same base instant.
class FrozenClock final : public tarde::Clock {
 public:
  explicit FrozenClock(int64_t wall_ms) : wall_ms_(wall_ms) {}
  int64_t now_wall_ms() const override { return wall_ms_; }
  int64_t now_steady_ms() const override { return steady_.now_steady_ms(); }

 private:
  int64_t wall_ms_;
  tarde::SystemClock steady_;
};

tarde::Status commit(tarde::storage::StagedKv& staged, tarde::storage::Kv& durable) {
  if (!staged.has_open_group()) return tarde::Status::ok();
  auto group = staged.seal();
  TARDE_RETURN_IF_ERROR(durable.write(group.batch));
  staged.committed(group.seq);
  return tarde::Status::ok();
}

tarde::Status fill(const FillOptions& options) {
  tarde::storage::RocksKv::Options kv_options;
  kv_options.sync = false;
  auto opened = tarde::storage::RocksKv::open(options.dir, kv_options);
  if (!opened.is_ok()) return opened.status();
  auto& durable = *opened.value();
  tarde::storage::StagedKv staged(durable);
  tarde::storage::Store store(staged);
  const int64_t now_ms = tarde::SystemClock().now_wall_ms();
  FrozenClock clock(now_ms);
  tarde::engine::SeededRandom random(1);
  tarde::engine::Engine engine(store, clock, random);
  tarde::engine::RecoveryReport report;
  TARDE_RETURN_IF_ERROR(engine.recover(&report));
  const int64_t base_delay_ms = options.at_ms != 0 ? options.at_ms - now_ms : options.delay_ms;
  const std::string payload(options.payload_bytes, 'x');
  const auto started = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < options.count; ++i) {
    tarde::engine::EnqueueArgs args;
    args.queue = options.queue;
    args.tx_id = options.prefix + std::to_string(options.start + i);
    args.payload = payload;
    if (!options.ready) {
      const int64_t spread = options.spread_ms == 0
                                 ? 0
                                 : static_cast<int64_t>(i * static_cast<uint64_t>(options.spread_ms) /
                                                        options.count);
      args.delay_ms = std::max<int64_t>(0, base_delay_ms + spread);
    }
    auto reply = engine.enqueue(args);
    if (!reply.is_ok()) return reply.status();
    if ((i + 1) % kTransitionsPerWrite == 0) TARDE_RETURN_IF_ERROR(commit(staged, durable));
    if ((i + 1) % 1'000'000 == 0) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::fprintf(stderr, "tarde-fill: %llu written in %.1f s\n",
                   static_cast<unsigned long long>(i + 1), s);
    }
  }
  TARDE_RETURN_IF_ERROR(commit(staged, durable));
  return durable.close();
}

}  // namespace

int main(int argc, char** argv) {
  FillOptions options;
  if (!parse(argc, argv, &options)) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  tarde::Status status = fill(options);
  if (!status.is_ok()) {
    std::fprintf(stderr, "tarde-fill: %s\n", status.to_string().c_str());
    return kExitFailed;
  }
  return 0;
}
