#pragma once

#include <asio.hpp>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

#include "base/status.h"
#include "engine/invariants.h"
#include "storage/rocks_kv.h"

namespace tarde::net {

// BackgroundSweep runs the start-up invariant sweep (and the counts it
// yields) on a thread of its own, over a RocksDB snapshot taken when it
// starts, so that the server serves at once whatever the store's size
// (docs/design.md "Recovery"). The result goes back to the io thread, where
// the engine re-checks each violation against the current store before
// repairing it.
//
// Owned by the Server; created, started and destroyed on the io thread. The
// durable store must outlive it. Destroying it (or starting again) cancels a
// sweep in progress and waits for its thread; a cancelled sweep reports
// nothing.
class BackgroundSweep {
 public:
  // Called on the io thread when a sweep ends (not when it was cancelled):
  // its status, what it found, and how long it took.
  using Done = std::function<void(const Status& status, engine::Sweep sweep, int64_t took_ms)>;

  BackgroundSweep(asio::io_context& io, storage::RocksKv& durable, Done done);
  ~BackgroundSweep();
  BackgroundSweep(const BackgroundSweep&) = delete;
  BackgroundSweep& operator=(const BackgroundSweep&) = delete;

  // Takes the snapshot now, on the caller's thread (so that it shows the
  // store exactly as the engine's start_recovery() read it), and sweeps it on
  // the worker. Cancels the previous sweep first.
  void start();
  // Cancels a sweep in progress (its Done is not called) and waits for it.
  void stop();
  // Between start() and the Done call.
  bool running() const { return running_; }
  // Transactions and index entries the current (or last) sweep visited.
  uint64_t scanned() const;

 private:
  // What the worker shares with the io thread; outlives the object when a
  // completion is still queued on the io_context.
  struct Shared {
    engine::SweepControl control;
    std::atomic<bool> alive{true};
  };

  asio::io_context& io_;
  storage::RocksKv& durable_;
  Done done_;
  bool running_ = false;
  std::shared_ptr<Shared> shared_;
  std::thread worker_;
};

}  // namespace tarde::net
