#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tarde/embedded.h"
#include "tools/crash-embedded/journal.h"

namespace tarde::crash_embedded {

// The queue every transaction lives on; the harness configured it (through
// `tarde serve`, before the first life) as tarde-crash's workload does.
inline constexpr const char* kQueue = "crash";

// What the threads of one life share.
struct Life {
  Tarde& tarde;
  Journal& journal;
  uint64_t seed = 0;
  uint64_t number = 0;             // this life's number: part of every id
  int first_client = 0;            // client numbers: first_client + 64 * number + thread
  std::atomic<int64_t> budget{0};  // transactions this life may still create
};

// Worker is one thread of the embedding program, tarde-crash's Worker
// (tools/crash/worker.cc) in-process: it produces (some delayed, some
// sent=1), dispatches (RESERVE, SENT or not, a random answer, RELEASE,
// abandoned leases), sends late and duplicate answers and RESOLVEs scheduled
// transactions, and journals every call before and after it. Lives on its
// thread only.
class Worker {
 public:
  Worker(Life& life, int index);
  // Runs until the process is killed.
  void run();

 private:
  using Call = std::function<Result<Summary>()>;

  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  uint64_t below(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_); }
  std::optional<Summary> call(const char* kind, const std::string& tx, uint32_t attempt,
                              const std::string& word, bool deliberate, const Call& fn);
  void produce();
  std::optional<Request> reserve(std::chrono::milliseconds wait);
  void dispatch();
  void answer(const std::string& tx, uint32_t attempt);
  Answer random_answer();
  void remember(const std::string& tx, const Summary& summary, uint32_t attempt);

  Life& life_;
  int client_;
  std::mt19937_64 rng_;
  uint64_t next_tx_ = 0;
  uint64_t next_op_ = 0;
  bool busy_ = false;
  std::vector<std::pair<std::string, uint32_t>> answered_;
  std::vector<std::string> scheduled_;
};

}  // namespace tarde::crash_embedded
