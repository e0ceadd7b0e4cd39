#include "tools/crash/recorder.h"

#include <chrono>

namespace tarde::crash {

int64_t wall_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const char* op_name(OpKind kind) {
  switch (kind) {
    case OpKind::kEnqueue:
      return "ENQUEUE";
    case OpKind::kSent:
      return "SENT";
    case OpKind::kRespond:
      return "RESPOND";
    case OpKind::kRelease:
      return "RELEASE";
    case OpKind::kResolve:
      return "RESOLVE";
    case OpKind::kGet:
      return "GET";
  }
  return "?";
}

void Recorder::plan(const std::string& tx_id, const TxPlan& plan) {
  std::lock_guard<std::mutex> lock(mutex_);
  TxLog& log = logs_[tx_id];
  if (!log.plan) counts_.transactions += 1;
  log.plan = plan;
}

void Recorder::op(const Op& op) {
  std::lock_guard<std::mutex> lock(mutex_);
  logs_[op.tx_id].ops.push_back(op);
  if (op.outcome == OpOutcome::kPending) counts_.pending += 1;
  if (op.outcome == OpOutcome::kError) counts_.errors += 1;
  if (op.outcome == OpOutcome::kReplied && op.kind == OpKind::kRespond) counts_.answers += 1;
}

void Recorder::hand_out(const HandOut& hand_out) {
  std::lock_guard<std::mutex> lock(mutex_);
  logs_[hand_out.tx_id].hand_outs.push_back(hand_out);
  counts_.hand_outs += 1;
}

RecordCounts Recorder::counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

std::vector<std::string> Recorder::tx_ids() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> ids;
  for (const auto& [id, log] : logs_) {
    if (log.plan) ids.push_back(id);
  }
  return ids;
}

}  // namespace tarde::crash
