#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace tarde::net {

// ClientActivity counts the connections that sent a command lately: within
// the last one to two windows. A commit may wait a little for company only
// while more of these clients are active than wait for commits (the Core's
// GroupCommitter::ExpectsCompany): a client that is waiting for the commit
// being held cannot send the command that would share it. Constant time per command;
// io thread only.
class ClientActivity {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  // What ClientActivity keeps of one connection.
  struct Mark {
    int64_t window = -2;  // the window of its last command
  };

  explicit ClientActivity(std::chrono::microseconds window) : window_us_(window.count()) {}

  // The connection of `mark` sent a command at `now`.
  void note(Mark& mark, TimePoint now);
  // The connection of `mark` closed.
  void forget(Mark& mark);
  // Connections that sent a command in the window of `now` or the one before.
  size_t active(TimePoint now);

 private:
  int64_t window_of(TimePoint at) const;
  void advance_to(int64_t window);

  int64_t window_us_;
  int64_t current_ = 0;     // the window the counts below are of
  size_t in_current_ = 0;   // connections whose last command is in current_
  size_t in_previous_ = 0;  // ... in current_ - 1
};

}  // namespace tarde::net
