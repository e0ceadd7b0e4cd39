#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "engine/engine.h"
#include "engine/random.h"
#include "storage/kv.h"
#include "storage/store.h"

namespace tarde::testing {

// EngineFixture wires an Engine to a store on a ManualClock and a FixedRandom
// (draw 0.5: no jitter) so that engine tests run without threads or sleeps.
// `reopen()` drops the engine and builds a new one over the same Kv, running
// recovery, as a restart would.
struct EngineFixture {
  explicit EngineFixture(storage::Kv& kv_in, int64_t wall_ms = 1'700'000'000'000,
                         engine::Engine::Options options = {});
  void reopen();
  // Every key and value of every column family, for before/after comparisons.
  std::vector<std::string> dump();
  storage::TxRecord tx(const std::string& tx_id);

  storage::Kv& kv;
  ::tarde::ManualClock clock;  // set before the first recovery
  engine::FixedRandom random{0.5};
  engine::Engine::Options options;  // used by every reopen()
  std::unique_ptr<storage::Store> store;
  std::unique_ptr<engine::Engine> engine;
  std::vector<std::string> woken;  // queues the ready listener was called for
};

// Shortcuts for the arguments tests repeat.
engine::EnqueueArgs enqueue_args(const std::string& queue, const std::string& tx_id,
                                 const std::string& payload = "payload");

}  // namespace tarde::testing
