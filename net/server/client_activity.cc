#include "net/server/client_activity.h"

namespace tarde::net {

int64_t ClientActivity::window_of(TimePoint at) const {
  return std::chrono::duration_cast<std::chrono::microseconds>(at.time_since_epoch()).count() /
         window_us_;
}

void ClientActivity::advance_to(int64_t window) {
  if (window == current_) return;
  in_previous_ = window == current_ + 1 ? in_current_ : 0;
  in_current_ = 0;
  current_ = window;
}

void ClientActivity::note(Mark& mark, TimePoint now) {
  const int64_t window = window_of(now);
  advance_to(window);
  if (mark.window == window) return;
  if (mark.window == window - 1) in_previous_ -= 1;
  in_current_ += 1;
  mark.window = window;
}

void ClientActivity::forget(Mark& mark) {
  if (mark.window == current_) in_current_ -= 1;
  if (mark.window == current_ - 1) in_previous_ -= 1;
  mark.window = -2;
}

size_t ClientActivity::active(TimePoint now) {
  advance_to(window_of(now));
  return in_current_ + in_previous_;
}

}  // namespace tarde::net
