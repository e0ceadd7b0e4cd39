#pragma once

#include <asio.hpp>
#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include "base/figures.h"
#include "base/status.h"
#include "net/core/core.h"
#include "tarde/embedded.h"

namespace tarde::embedded {

class CallWaiters;
class ParkedReserve;

// Host runs a net::Core on one io thread for callers on other threads: it
// owns the io thread (or borrows the application's io_context), opens and
// closes the Core there, and turns each blocking call into a lambda posted
// to the io thread whose reply is handed back once the commit it depends on
// is durable, the way a Session's replies wait (docs/design.md "Group commit
// and the overlay"). Concurrent callers therefore share group commits.
//
// Owned by the embedded Tarde. Every public method is thread-safe and
// blocks, except from the io thread itself, where it answers busy.
class Host {
 public:
  static Result<std::unique_ptr<Host>> open(const Options& options);
  ~Host();
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  // Runs `op` on the io thread, then waits for the commit its writes (and
  // reads of staged writes) depend on. io_error when that commit failed.
  template <typename T>
  Result<T> call(std::function<Result<T>(net::Core&)> op);
  // RESERVE for the lease holder `conn`, parked up to `wait_ms` (0: no wait).
  Result<std::optional<engine::HandOut>> reserve(const std::string& queue, uint64_t conn,
                                                 int64_t wait_ms);
  // Ends the waits of `conn`'s parked RESERVEs now (they answer nullopt).
  void cancel_waits(uint64_t conn);
  // A lease holder that will not come back: its leases end as failed
  // deliveries (DISCONNECTED), as a closed connection's do.
  Status holder_gone(uint64_t conn);
  // A new lease holder id.
  uint64_t new_holder();
  // The figures STATS shows; read them on the io thread only (in a call()).
  const Figures& figures() const { return figures_; }
  // Gives back every lease, waits for the last commit, closes the store and
  // stops the io thread (when it is ours). Idempotent.
  void close();

 private:
  explicit Host(const Options& options);
  bool on_io_thread() const;
  // Runs `fn` on the io thread and waits for it to return.
  void run_on_io(std::function<void()> fn);
  // io thread: calls `done(ok)` once group `dep` is durable (or failed).
  void when_durable(uint64_t dep, std::function<void(bool ok)> done);
  void on_hook();

  // Counts a call from its check of accepting_ until its reply, so that
  // close() stops the io thread only once no caller waits on it.
  class InFlight {
   public:
    explicit InFlight(Host& host) : host_(host) { host_.in_flight_++; }
    ~InFlight() { host_.in_flight_--; }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;

   private:
    Host& host_;
  };

  friend class ParkedReserve;

  std::unique_ptr<asio::io_context> own_io_;
  asio::io_context* io_ = nullptr;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::thread thread_;
  Figures figures_;
  std::unique_ptr<net::Core> core_;  // io thread only, like everything below
  std::shared_ptr<CallWaiters> waiters_;
  std::unordered_map<ParkedReserve*, std::weak_ptr<ParkedReserve>> parked_;
  bool closed_ = false;
  std::optional<std::promise<void>> idle_;  // close() waits for the core to go idle
  std::atomic<uint64_t> next_holder_{1};
  std::atomic<bool> accepting_{true};  // false once close() began
  std::atomic<int> in_flight_{0};
  std::mutex close_mutex_;
  bool close_done_ = false;  // guarded by close_mutex_
};

// Group commits some calls wait for: the Host's CommitWaiter. io thread only.
class CallWaiters final : public net::CommitWaiter,
                          public std::enable_shared_from_this<CallWaiters> {
 public:
  explicit CallWaiters(net::Core& core) : core_(core) {}
  void add(uint64_t dep, std::function<void(bool ok)> done);
  void on_commit(uint64_t seq, bool ok) override;

 private:
  net::Core& core_;
  std::multimap<uint64_t, std::function<void(bool)>> waiting_;
};

inline constexpr const char* kNotAcknowledged = "the store refused the write; not acknowledged";

template <typename T>
Result<T> Host::call(std::function<Result<T>(net::Core&)> op) {
  if (on_io_thread()) {
    return Status::busy("a blocking tarde call on its own io thread would wait for itself");
  }
  InFlight counted(*this);
  if (!accepting_) return Status::shutting_down("tarde is closed");
  std::promise<Result<T>> promise;
  std::future<Result<T>> future = promise.get_future();
  asio::post(*io_, [this, &op, &promise] {
    if (closed_ || !core_) {
      promise.set_value(Status::shutting_down("tarde is closed"));
      return;
    }
    core_->reset_observed();
    auto result = std::make_shared<Result<T>>(op(*core_));
    const uint64_t dep = core_->observed_seq();
    when_durable(dep, [&promise, result](bool ok) {
      if (ok) {
        promise.set_value(std::move(*result));
      } else {
        promise.set_value(Status::io_error(kNotAcknowledged));
      }
    });
    core_->after_commands();
  });
  return future.get();
}

}  // namespace tarde::embedded
