#include "tools/bench/event_loop.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace tarde::bench {

int64_t wall_now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

EventLoop::EventLoop() : epoll_fd_(epoll_create1(EPOLL_CLOEXEC)) {
  if (epoll_fd_ < 0) fail(std::string("epoll_create1: ") + std::strerror(errno));
}

EventLoop::~EventLoop() {
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

void EventLoop::watch(int fd, uint32_t events, FdHandler* handler) {
  epoll_event event{};
  event.events = events;
  event.data.ptr = handler;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &event) == 0) return;
  if (errno == ENOENT && epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) == 0) return;
  fail(std::string("epoll_ctl: ") + std::strerror(errno));
}

void EventLoop::unwatch(int fd) { epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr); }

void EventLoop::after(std::chrono::microseconds delay, std::function<void()> fn) {
  timers_.push(Timer{SteadyClock::now() + delay, timer_sequence_++, std::move(fn)});
}

void EventLoop::fail(const std::string& message) {
  if (error_.empty()) error_ = message.empty() ? "unknown failure" : message;
  stopped_ = true;
}

void EventLoop::fire_due_timers() {
  const auto now = SteadyClock::now();
  while (!timers_.empty() && timers_.top().at <= now && !stopped_) {
    auto fn = std::move(const_cast<Timer&>(timers_.top()).fn);
    timers_.pop();
    fn();
  }
}

void EventLoop::run(const std::function<bool()>& done) {
  // Events handled per epoll_wait: enough for every connection of a run.
  constexpr int kEventsPerWait = 256;
  epoll_event events[kEventsPerWait];
  if (!error_.empty()) return;  // a failed loop stays failed
  stopped_ = false;
  while (!stopped_ && !done()) {
    // Microsecond timeouts (epoll_pwait2), so a timer-driven poller of a
    // peer is not made up to 1 ms late by the generator itself.
    int64_t wait_us = 100'000;
    if (!timers_.empty()) {
      const auto wait = timers_.top().at - SteadyClock::now();
      wait_us = std::clamp<int64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(wait).count(), 0, 100'000);
    }
    timespec timeout{};
    timeout.tv_sec = wait_us / 1'000'000;
    timeout.tv_nsec = (wait_us % 1'000'000) * 1000;
    const int count = epoll_pwait2(epoll_fd_, events, kEventsPerWait, &timeout, nullptr);
    if (count < 0 && errno != EINTR) {
      fail(std::string("epoll_wait: ") + std::strerror(errno));
      break;
    }
    for (int i = 0; i < count && !stopped_; ++i) {
      static_cast<FdHandler*>(events[i].data.ptr)->on_ready(events[i].events);
    }
    fire_due_timers();
  }
  if (!error_.empty()) stopped_ = true;
}

}  // namespace tarde::bench
