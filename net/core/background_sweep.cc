#include "net/core/background_sweep.h"

#include <chrono>

#include "base/thread_name.h"
#include "storage/store.h"

namespace tarde::net {

BackgroundSweep::BackgroundSweep(asio::io_context& io, storage::RocksKv& durable, Done done)
    : io_(io), durable_(durable), done_(std::move(done)) {}

BackgroundSweep::~BackgroundSweep() { stop(); }

void BackgroundSweep::stop() {
  if (shared_) {
    shared_->alive = false;
    shared_->control.cancel = true;
  }
  if (worker_.joinable()) worker_.join();
  running_ = false;
}

uint64_t BackgroundSweep::scanned() const {
  return shared_ ? shared_->control.scanned.load(std::memory_order_relaxed) : 0;
}

void BackgroundSweep::start() {
  stop();
  shared_ = std::make_shared<Shared>();
  running_ = true;
  std::shared_ptr<storage::Kv> snapshot = durable_.snapshot();
  worker_ = std::thread([this, shared = shared_, snapshot] {
    name_this_thread("tarde-sweep");
    const auto started = std::chrono::steady_clock::now();
    // Each record is read once per index: remembering them would only cost.
    storage::Store store(*snapshot, storage::Store::ReadCache::kNone);
    engine::Sweep sweep;
    Status status = engine::sweep_invariants(store, &sweep, &shared->control);
    const int64_t took_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - started)
                                .count();
    if (!shared->alive) return;
    // `this` is only touched on the io thread, and only while shared->alive.
    asio::post(io_, [this, shared, status, sweep = std::move(sweep), took_ms]() mutable {
      if (!shared->alive) return;
      running_ = false;
      done_(status, std::move(sweep), took_ms);
    });
  });
}

}  // namespace tarde::net
