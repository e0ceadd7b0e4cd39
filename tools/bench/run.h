#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tools/bench/event_loop.h"
#include "tools/bench/ledger.h"
#include "tools/bench/queue_client.h"
#include "tools/bench/samples.h"

// The parts every workload shares: the parsed command line, the open
// connections, the ledger, the latency samples of each operation, and
// timed wrappers around the client calls so that every workload measures
// operations the same way. One Run per workload invocation; loop thread.
namespace tarde::bench {

struct Options {
  std::string workload;
  Target target;
  std::string label;  // how the system is named in the table (redis-always, ...)
  int connections = 16;
  double seconds = 10;         // measured duration
  int server_pid = 0;          // for CPU and memory figures; 0 = not measured
  std::string data_dir;        // for disk figures; empty = not measured
  double rate = 0;             // W2: offered retries per second; 0 = closed loop (overload)
  uint64_t count = 100'000;    // W3 burst size, W4 backlog, W5 transaction set
  int64_t delay_ms = 1000;     // W2/W5 wait before the retry
  double sample_seconds = 60;  // W5: disk size sampled this often
  int64_t since_ns = 0;        // W4 restart: when the server process was started (epoch ns)
};

// The operations whose latency a run records, one sample list each.
enum class Op { kEnqueue, kReserve, kComplete, kDefer };

class Run {
 public:
  explicit Run(const Options& options);
  ~Run();

  // Opens `connections` clients (the first one alone, since it creates what
  // the run needs) and starts the system's background work. False on failure.
  bool open(int connections);

  EventLoop& loop() { return loop_; }
  Ledger& ledger() { return ledger_; }
  const Options& options() const { return options_; }
  ResultSink sink() const;
  int clients() const { return static_cast<int>(clients_.size()); }

  // Timed calls on client `c`; each records its latency under its Op.
  void enqueue(int c, uint64_t number, int64_t due_us, QueueClient::Announced done);
  void reserve(int c, int wait_ms, QueueClient::Reserved done);
  void complete(int c, const Job& job, QueueClient::Done done);
  void defer(int c, const Job& job, int64_t delay_ms, bool transient, QueueClient::Announced done);
  QueueClient& client(int c) { return *clients_[static_cast<size_t>(c)]; }

  // Runs the loop until done() or `timeout`; false (and a message) on
  // failure or timeout.
  bool drive(const std::function<bool()>& done, std::chrono::milliseconds timeout,
             const char* what);
  // Jobs the server still holds, asked on client 0; -1 on failure.
  int64_t pending();

  std::vector<int64_t>& samples(Op op) { return samples_[static_cast<size_t>(op)]; }
  // Emits p50/p99 of the four operations (those with samples).
  void emit_latencies();

  // Failures of drive() are not printed (a restart probe expects some).
  void set_quiet(bool quiet) { quiet_ = quiet; }

  // Prints a progress line on stderr.
  void progress(const std::string& line) const;

 private:
  static int64_t micros_since(SteadyClock::time_point start);

  Options options_;
  bool quiet_ = false;
  EventLoop loop_;
  Ledger ledger_;
  std::vector<std::unique_ptr<QueueClient>> clients_;
  std::unique_ptr<Background> background_;
  std::vector<int64_t> samples_[4];
};

}  // namespace tarde::bench
