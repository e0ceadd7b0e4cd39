#pragma once

#include <asio.hpp>
#include <cstdint>
#include <functional>
#include <memory>

#include "base/figures.h"
#include "engine/reconciler.h"

namespace tarde::net {

// ReconcileLoop drives the engine's periodic reconciler (engine/reconciler.h)
// on the io thread: a pass starts `every` after the previous one ended, and
// runs one bounded slice per io turn, posting the next slice behind whatever
// the io_context has queued, so that commands are served between two slices
// however big the store (docs/design.md "Reconciler"). Repairs and alerts
// are logged here; the Core commits the repairs (after_slice).
//
// Owned by the Core; created, started and destroyed on the io thread. The
// engine and the store must outlive it. A store error ends the current
// attempt with an error line; the pass resumes at the next period.
class ReconcileLoop {
 public:
  // may_run: whether a pass may start now (not while the start-up sweep
  // runs or commits fail); after_slice: called after every slice.
  ReconcileLoop(asio::io_context& io, engine::Engine& engine, storage::Store& store, Clock& clock,
                std::function<bool()> may_run, std::function<void()> after_slice);
  ~ReconcileLoop();
  ReconcileLoop(const ReconcileLoop&) = delete;
  ReconcileLoop& operator=(const ReconcileLoop&) = delete;

  // Starts the periods; every_ms 0 leaves the reconciler off.
  void start(int64_t every_ms);
  // Stops for good (a shutdown): no slice runs after it returns.
  void stop();
  engine::Reconciler& reconciler() { return reconciler_; }

 private:
  void arm(int64_t delay_ms);
  void run_slice();

  asio::io_context& io_;
  asio::steady_timer timer_;
  engine::Reconciler reconciler_;
  std::function<bool()> may_run_;
  std::function<void()> after_slice_;
  int64_t every_ms_ = 0;
  // Shared with posted slices: false once stopped or destroyed.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace tarde::net
