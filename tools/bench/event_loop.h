#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <vector>

// The load generator's only thread of control: one epoll instance driving
// every connection of a run, plus one-shot timers. It exists so that N
// connections cost N sockets, not N threads: the generator shares the
// machine's two cores with the server under test and must stay cheap.
// Owned by the workload for the length of one run; single-threaded.
// A protocol or I/O error anywhere calls fail(), which stops run() and makes
// the run report failure instead of figures.
namespace tarde::bench {

using SteadyClock = std::chrono::steady_clock;

// Wall-clock microseconds since the Unix epoch: the unit in which due times
// (tarde's next_fire_at, Redis scores, PostgreSQL's next_fire_at) are
// compared with hand-out times.
int64_t wall_now_us();

// Something registered for readiness events on one file descriptor.
class FdHandler {
 public:
  virtual ~FdHandler() = default;
  virtual void on_ready(uint32_t epoll_events) = 0;
};

class EventLoop {
 public:
  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Registers (or re-registers) fd for the given epoll events.
  void watch(int fd, uint32_t events, FdHandler* handler);
  void unwatch(int fd);

  // Calls fn once, after delay, from run().
  void after(std::chrono::microseconds delay, std::function<void()> fn);

  // Runs until stop() or fail() is called, or done() turns true (checked
  // after every batch of events).
  void run(const std::function<bool()>& done);
  void stop() { stopped_ = true; }

  // Records the first error and stops the loop.
  void fail(const std::string& message);
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  struct Timer {
    SteadyClock::time_point at;
    uint64_t sequence;
    std::function<void()> fn;
    bool operator>(const Timer& other) const {
      return at != other.at ? at > other.at : sequence > other.sequence;
    }
  };
  void fire_due_timers();

  int epoll_fd_ = -1;
  bool stopped_ = false;
  std::string error_;
  uint64_t timer_sequence_ = 0;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
};

}  // namespace tarde::bench
