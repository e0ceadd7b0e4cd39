#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "clients/cpp/client.h"

namespace tarde::crash {

// Wall-clock microseconds since the epoch. The server measures time in wall
// milliseconds on this same machine's clock, so `us / 1000` compares with
// its instants; the extra precision orders what different clients saw.
int64_t wall_us();

// What a producer asked for when it created a transaction (every re-send of a
// pending ENQUEUE sends exactly this).
struct TxPlan {
  std::string queue;
  uint32_t max_attempts = 0;
  bool sent = false;     // sent=1: attempt 1 went out through the producer
  int64_t delay_ms = 0;  // 0: no delay= option
  std::string payload;
};

enum class OpKind { kEnqueue, kSent, kRespond, kRelease, kResolve, kGet };
const char* op_name(OpKind kind);

// How a request ended as the client saw it.
enum class OpOutcome {
  kReplied,  // a summary reply came back (CREATED, OK, STALE, ...)
  kPending,  // the connection failed first: it may or may not have happened
  kError,    // an ERR reply
};

// One request a client sent about one transaction, with its client times.
struct Op {
  OpKind kind = OpKind::kGet;
  std::string tx_id;
  uint32_t attempt = 0;     // SENT, RESPOND, RELEASE
  std::string word;         // RESPOND's answer, RESOLVE's terminal state
  bool deliberate = false;  // a deliberately late or duplicate message
  int client = 0;
  int64_t send_us = 0;  // just before the request was written
  int64_t recv_us = 0;  // just after its reply was read (or the failure seen)
  OpOutcome outcome = OpOutcome::kPending;
  client::Summary summary;  // kReplied only
  std::string error;        // kError: the reply; kPending: the transport error
};

// One request RESERVE handed out, as a client received it.
struct HandOut {
  std::string tx_id;
  uint32_t attempt = 0;
  uint32_t deliveries = 0;
  std::string key;
  std::string payload;
  int client = 0;
  int64_t reserve_send_us = 0;  // when that RESERVE was written
  int64_t recv_us = 0;          // when the REQUEST was read
};

// Everything the clients saw of one transaction.
struct TxLog {
  std::optional<TxPlan> plan;
  std::vector<Op> ops;
  std::vector<HandOut> hand_outs;
};

// Counters for the progress line and the summary.
struct RecordCounts {
  uint64_t transactions = 0;
  uint64_t hand_outs = 0;
  uint64_t answers = 0;  // RESPONDs that got a reply
  uint64_t pending = 0;
  uint64_t errors = 0;
};

// Recorder is the campaign's log of what clients saw, per transaction. Every
// client thread appends to it; the checks read it once the clients stopped.
// Thread-safe (one mutex); entries are never removed.
class Recorder {
 public:
  void plan(const std::string& tx_id, const TxPlan& plan);
  void op(const Op& op);
  void hand_out(const HandOut& hand_out);
  RecordCounts counts() const;
  // Requires: no client thread still records.
  const std::map<std::string, TxLog>& logs() const { return logs_; }
  std::vector<std::string> tx_ids() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, TxLog> logs_;
  RecordCounts counts_;
};

}  // namespace tarde::crash
