// tarde-fill: writes many transactions straight into a stopped server's data
// directory, through the Engine (so every record, index entry and event is
// exactly what ENQUEUE writes), without the network or fsync. It exists to
// build the big data sets of the scale measurements (docs/benchmarks.md: ten
// million pending retries) in minutes instead of hours.
#include <chrono>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "base/cli_flags.h"
#include "base/system_clock.h"
#include "engine/engine.h"
#include "engine/random.h"
#include "storage/rocks_kv.h"
#include "storage/staged_kv.h"
#include "storage/store.h"

namespace {

constexpr int kExitUsage = 2;
constexpr int kExitFailed = 3;
// Transitions written per RocksDB write: big enough that the write cost is
// spread, small enough that the overlay stays a few MB.
constexpr size_t kTransitionsPerWrite = 4096;

constexpr const char* kDescription = R"(usage: tarde-fill <data-dir> --count N [options]

Writes N new transactions into a data directory that no server is using.
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
  bool sent = false;
  bool dead = false;
};

// tarde-fill's flags, storing into *o.
void define_flags(CLI::App& app, FillOptions* o) {
  using tarde::add_number_flag;
  using tarde::add_text_flag;
  const FillOptions defaults;
  constexpr int64_t kMsMax = std::numeric_limits<int64_t>::max() / 2;  // now + it never overflows
  app.name("tarde-fill");
  app.description(kDescription);
  app.get_help_ptr()->group("options");
  app.option_defaults()->group("options");
  add_number_flag(app, "--count", "transactions to write (needed)", &o->count, 1, UINT64_MAX);
  add_text_flag(app, "--queue", "queue", &o->queue)->type_name("Q")->default_str(defaults.queue);
  add_text_flag(app, "--prefix", "tx_ids are P0, P1, ...", &o->prefix)
      ->type_name("P")
      ->default_str(defaults.prefix);
  add_number_flag(app, "--start", "first number after the prefix", &o->start, 0, UINT64_MAX)
      ->type_name("I")
      ->default_str(std::to_string(defaults.start));
  add_number_flag(app, "--delay-ms",
                  "each is SCHEDULED to fire D ms from now;\n"
                  "with --ready they are SENDING (ready) instead",
                  &o->delay_ms, 0, kMsMax)
      ->type_name("D")
      ->default_str(std::to_string(defaults.delay_ms));
  add_number_flag(app, "--spread-ms",
                  "fire instants spread evenly over [D, D+S); 0 = the same instant", &o->spread_ms,
                  0, kMsMax)
      ->type_name("S")
      ->default_str(std::to_string(defaults.spread_ms));
  add_number_flag(app, "--at",
                  "fire at this absolute wall-clock instant (epoch ms) instead of --delay-ms",
                  &o->at_ms, 0, kMsMax)
      ->type_name("MS");
  add_number_flag(app, "--payload-bytes", "payload size", &o->payload_bytes, 0, 64 << 20)
      ->type_name("B")
      ->default_str(std::to_string(defaults.payload_bytes));
  app.add_flag("--ready", o->ready, "enqueue as ready requests instead of scheduled retries");
  app.add_flag("--sent", o->sent, "enqueue as sent (IN_FLIGHT) instead of scheduled retries");
  app.add_flag("--dead", o->dead,
               "enqueue as ready requests and dead-letter each: handed out and\n"
               "released until the queue's max_deliveries is reached");
}

std::string usage_text() {
  FillOptions unused;  // the flags need somewhere to store; help stores nothing
  return tarde::help_text([&unused](CLI::App& app) { define_flags(app, &unused); });
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "tarde-fill: %s\n\n%s", message.c_str(), usage_text().c_str());
  return kExitUsage;
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

// Hands out the queue's first request and releases it until it is
// dead-lettered. Requires: the queue's only ready request is the one just
// enqueued.
tarde::Status bury(tarde::engine::Engine& engine, const std::string& queue) {
  constexpr uint64_t kConn = 1;
  for (;;) {
    auto handed = engine.reserve(queue, kConn);
    if (!handed.is_ok()) return handed.status();
    if (!handed.value()) return tarde::Status::invalid_argument("--dead: nothing to hand out");
    const tarde::engine::HandOut& out = *handed.value();
    auto released = engine.release(kConn, out.tx_id, out.attempt, 0, "FILL");
    if (!released.is_ok()) return released.status();
    if (released.value().outcome == tarde::engine::Outcome::kBuried) return tarde::Status::ok();
  }
}

tarde::Status fill(const FillOptions& options) {
  tarde::storage::RocksKv::Options kv_options;
  kv_options.sync = false;
  auto opened = tarde::storage::RocksKv::open(options.dir, kv_options);
  if (!opened.is_ok()) return opened.status();
  auto& durable = *opened.value();
  // A store of an older format is upgraded on the durable store first: the
  // engine's recovery would do it through the overlay, in memory.
  TARDE_RETURN_IF_ERROR(tarde::storage::Store(durable).ensure_format());
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
    if (options.sent) {
      args.sent = true;
    } else if (!options.ready && !options.dead) {
      const int64_t spread =
          options.spread_ms == 0
              ? 0
              : static_cast<int64_t>(i * static_cast<uint64_t>(options.spread_ms) / options.count);
      args.delay_ms = std::max<int64_t>(0, base_delay_ms + spread);
    }
    auto reply = engine.enqueue(args);
    if (!reply.is_ok()) return reply.status();
    if (options.dead) TARDE_RETURN_IF_ERROR(bury(engine, options.queue));
    if ((i + 1) % kTransitionsPerWrite == 0) TARDE_RETURN_IF_ERROR(commit(staged, durable));
    if ((i + 1) % 1'000'000 == 0) {
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::fprintf(stderr, "tarde-fill: %llu written in %.1f s\n",
                   static_cast<unsigned long long>(i + 1), s);
    }
  }
  TARDE_RETURN_IF_ERROR(commit(staged, durable));
  return durable.close();
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  FillOptions options;
  std::vector<std::string> words;
  auto outcome =
      tarde::parse_flags([&options](CLI::App& app) { define_flags(app, &options); }, args, &words);
  if (!outcome.is_ok()) return usage_error(outcome.status().message());
  if (outcome.value() == tarde::FlagsOutcome::kHelp) {
    std::fputs(usage_text().c_str(), stdout);
    return 0;
  }
  if (words.size() != 1) {
    return usage_error(words.empty() ? "needs a data directory"
                                     : "unexpected argument '" + words[1] + "'");
  }
  if (options.count == 0) return usage_error("--count is needed");
  if (int(options.ready) + int(options.sent) + int(options.dead) > 1) {
    return usage_error("--ready, --sent and --dead exclude each other");
  }
  options.dir = words[0];
  tarde::Status status = fill(options);
  if (!status.is_ok()) {
    std::fprintf(stderr, "tarde-fill: %s\n", status.to_string().c_str());
    return kExitFailed;
  }
  return 0;
}
