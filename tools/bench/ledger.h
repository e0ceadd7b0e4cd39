#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/bench/queue_client.h"

// The generator's record of every job of a run, so that a run can say at
// its end that nothing was lost, nothing was handed out twice, and every job
// went exactly the way the workload says. It also measures fire lateness:
// a hand-out of a job with an announced due time records hand-out time −
// due time. Owned by the run; loop thread only.
namespace tarde::bench {

class Ledger {
 public:
  // A new job number (numbers start at 1 and are dense).
  uint64_t add();
  void announce(uint64_t number, int64_t due_us);
  // The earliest due time announced for jobs numbered from `first` on that
  // are not handed out yet (0 when none): the instant a burst is really due
  // at, for systems that take a delay rather than an absolute time.
  int64_t earliest_due_us(uint64_t first) const;

  // Records a hand-out; fails (returns false) for an unknown job or one that
  // was already completed, or one handed out while still held.
  bool handed_out(const Job& job, std::string* problem);
  bool deferred(uint64_t number);
  bool completed(uint64_t number);

  uint32_t handouts_of(uint64_t number) const { return records_[number].handouts; }
  uint64_t jobs() const { return records_.size() - 1; }
  uint64_t completions() const { return completions_; }
  uint64_t retry_completions() const { return retry_completions_; }
  uint64_t handouts() const { return handouts_; }
  uint64_t early_handouts() const { return early_; }
  int64_t first_handout_us() const { return first_handout_us_; }
  int64_t last_completion_us() const { return last_completion_us_; }
  // Lateness of every hand-out that had a due time, in µs (may be negative
  // when a system hands out early by our estimate).
  std::vector<int64_t>& lateness_us() { return lateness_us_; }

  // Checks every job: handed out `handouts` times (any number if
  // kAnyCount), deferred `defers` times (any if kAnyCount), completed or
  // not; prints one line and returns whether all matched.
  static constexpr uint32_t kAnyCount = UINT32_MAX;
  bool check(const char* workload, uint32_t handouts, uint32_t defers, bool completed) const;

 private:
  struct Record {
    int64_t due_us = 0;
    uint32_t handouts = 0;
    uint16_t defers = 0;
    bool held = false;
    bool completed = false;
  };
  std::vector<Record> records_{1};  // number 0 is never used
  uint64_t completions_ = 0;
  uint64_t retry_completions_ = 0;
  uint64_t handouts_ = 0;
  uint64_t early_ = 0;
  int64_t first_handout_us_ = 0;
  int64_t last_completion_us_ = 0;
  std::vector<int64_t> lateness_us_;
};

}  // namespace tarde::bench
