#pragma once

#include <functional>

#include "tools/bench/run.h"

// A closed loop on every connection of a run: while more() holds, each
// connection runs step(c, next), and the step calls next() when its reply
// chain is over. idle() turns true once every connection found more() false.
// Loop thread only; lives on the workload's stack while Run::drive runs.
namespace tarde::bench {

class Loops {
 public:
  using Step = std::function<void(int c, std::function<void()> next)>;
  Loops(Run* run, std::function<bool()> more, Step step)
      : run_(run), more_(std::move(more)), step_(std::move(step)) {}

  void start() {
    busy_ = run_->clients();
    for (int c = 0; c < run_->clients(); ++c) go(c);
  }
  bool idle() const { return busy_ == 0; }

 private:
  void go(int c) {
    if (!more_()) {
      busy_ -= 1;
      return;
    }
    step_(c, [this, c] { go(c); });
  }

  Run* run_;
  std::function<bool()> more_;
  Step step_;
  int busy_ = 0;
};

}  // namespace tarde::bench
