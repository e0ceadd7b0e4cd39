#include "tools/bench/ledger.h"

#include <algorithm>
#include <cstdio>

namespace tarde::bench {

uint64_t Ledger::add() {
  records_.emplace_back();
  return records_.size() - 1;
}

void Ledger::announce(uint64_t number, int64_t due_us) {
  if (number < records_.size()) records_[number].due_us = due_us;
}

int64_t Ledger::earliest_due_us(uint64_t first) const {
  int64_t earliest = 0;
  for (uint64_t n = std::max<uint64_t>(first, 1); n < records_.size(); ++n) {
    const int64_t due = records_[n].due_us;
    if (due != 0 && (earliest == 0 || due < earliest)) earliest = due;
  }
  return earliest;
}

bool Ledger::handed_out(const Job& job, std::string* problem) {
  if (job.number == 0 || job.number >= records_.size()) {
    *problem = "hand-out of unknown job " + std::to_string(job.number);
    return false;
  }
  Record& record = records_[job.number];
  if (record.completed || record.held) {
    *problem = "job " + std::to_string(job.number) +
               (record.completed ? " handed out after completion" : " handed out twice");
    return false;
  }
  const int64_t now_us = wall_now_us();
  if (record.due_us > 0) {
    const int64_t lateness = now_us - record.due_us;
    lateness_us_.push_back(lateness);
    if (lateness < 0) early_ += 1;
    record.due_us = 0;
  }
  if (first_handout_us_ == 0) first_handout_us_ = now_us;
  record.handouts += 1;
  record.held = true;
  handouts_ += 1;
  return true;
}

bool Ledger::deferred(uint64_t number) {
  Record& record = records_[number];
  if (!record.held) return false;
  record.held = false;
  record.defers += 1;
  return true;
}

bool Ledger::completed(uint64_t number) {
  Record& record = records_[number];
  if (!record.held) return false;
  record.held = false;
  record.completed = true;
  completions_ += 1;
  if (record.defers > 0) retry_completions_ += 1;
  last_completion_us_ = wall_now_us();
  return true;
}

bool Ledger::check(const char* workload, uint32_t handouts, uint32_t defers, bool completed) const {
  uint64_t wrong = 0;
  uint64_t first_wrong = 0;
  for (uint64_t n = 1; n < records_.size(); ++n) {
    const Record& r = records_[n];
    const bool ok = (handouts == kAnyCount || r.handouts == handouts) &&
                    (defers == kAnyCount || r.defers == defers) && r.completed == completed &&
                    !r.held;
    if (!ok && wrong++ == 0) first_wrong = n;
  }
  std::fprintf(stderr,
               "check %s: %llu jobs, %llu hand-outs, %llu completed, %llu early hand-outs; "
               "%llu jobs not as expected%s\n",
               workload, static_cast<unsigned long long>(jobs()),
               static_cast<unsigned long long>(handouts_),
               static_cast<unsigned long long>(completions_),
               static_cast<unsigned long long>(early_), static_cast<unsigned long long>(wrong),
               wrong ? (" (first: job " + std::to_string(first_wrong) + ")").c_str() : "");
  return wrong == 0;
}

}  // namespace tarde::bench
