#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "embedded/host.h"
#include "tarde/embedded.h"

namespace tarde::embedded {

// The reason a handler's exception is answered TRANSIENT with: the
// exception's class name, demangled and cut to reason-safe characters
// ("std::runtime_error"); "unknown_exception" for one that is not a class.
std::string exception_reason();

// DispatchLoop is the Dispatcher that Tarde::dispatch returns: `concurrency`
// threads, each a lease holder of its own, running RESERVE, SENT, the
// handler, RESPOND. Thread-safe; stop() is graceful and idempotent. The
// Host must outlive it (the Tarde stops its loops before it closes).
class DispatchLoop final : public Dispatcher {
 public:
  DispatchLoop(Host& host, std::string queue, Handler handler, DispatchOptions options);
  ~DispatchLoop() override;
  void stop() override;
  uint64_t handled() const override { return handled_; }
  uint64_t errors() const override { return errors_; }

 private:
  void run(uint64_t holder);
  void serve(uint64_t holder, const Request& request);

  Host& host_;
  std::string queue_;
  Handler handler_;
  DispatchOptions options_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> handled_{0};
  std::atomic<uint64_t> errors_{0};
  std::vector<uint64_t> holders_;
  std::mutex stop_mutex_;
  bool stopped_ = false;              // guarded by stop_mutex_
  std::vector<std::thread> workers_;  // joined under stop_mutex_
};

}  // namespace tarde::embedded
