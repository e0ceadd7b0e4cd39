#include "tools/crash/worker.h"

#include <thread>

namespace tarde::crash {
namespace {

// Bounds each wait for a reply; a server that stops answering for this long
// is treated like a dead connection.
constexpr std::chrono::milliseconds kReplyTimeout{3000};
// How long a dispatcher's RESERVE waits for a request.
constexpr std::chrono::milliseconds kReserveWait{100};
constexpr std::chrono::milliseconds kReconnectPause{20};
// Memory for late messages: a bounded sample is plenty.
constexpr size_t kRememberedMax = 64;

template <typename T>
void remember_bounded(std::vector<T>& list, T value, std::mt19937_64& rng) {
  if (list.size() < kRememberedMax) {
    list.push_back(std::move(value));
  } else {
    list[std::uniform_int_distribution<size_t>(0, list.size() - 1)(rng)] = std::move(value);
  }
}

}  // namespace

Worker::Worker(WorkloadState& workload, int index)
    : workload_(workload),
      index_(index),
      rng_(workload.options.seed * 1'000'003ULL + static_cast<uint64_t>(index)) {}

void Worker::run() {
  while (!workload_.stopping.load()) {
    if (!connected()) {
      std::this_thread::sleep_for(kReconnectPause);
      continue;
    }
    if (workload_.draining.load()) {
      drain_step();
    } else {
      step();
    }
  }
}

bool Worker::connected() {
  if (client_ && client_->is_open()) return true;
  client_.reset();
  const uint16_t port = workload_.endpoint.port.load();
  if (port == 0) return false;
  client::ClientOptions options;
  options.timeout = kReplyTimeout;
  auto made = client::Client::connect("127.0.0.1", port, options);
  if (!made.is_ok()) return false;
  client_ = std::move(made).value();
  return true;
}

std::optional<client::Summary> Worker::call(OpKind kind, const std::string& tx_id, uint32_t attempt,
                                            std::string word, bool deliberate, const Call& fn) {
  Op op;
  op.kind = kind;
  op.tx_id = tx_id;
  op.attempt = attempt;
  op.word = std::move(word);
  op.deliberate = deliberate;
  op.client = index_;
  op.send_us = wall_us();
  Result<client::Summary> got = fn(*client_);
  op.recv_us = wall_us();
  std::optional<client::Summary> summary;
  if (got.is_ok()) {
    op.outcome = OpOutcome::kReplied;
    op.summary = got.value();
    summary = got.value();
  } else if (!client::server_error_code(got.status()).empty()) {
    op.outcome = OpOutcome::kError;
    op.error = got.status().message();
  } else {
    op.outcome = OpOutcome::kPending;
    op.error = got.status().to_string();
    client_.reset();
  }
  workload_.recorder.op(op);
  return summary;
}

void Worker::step() {
  if (enqueue_) {
    send_enqueue();
    return;
  }
  const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
  if (r < 0.3 && workload_.take_creation()) {
    produce();
  } else if (r < 0.34 && busy_ && !answered_.empty()) {
    late_answer();
  } else if (r < 0.37 && busy_ && !scheduled_.empty()) {
    resolve_scheduled();
  } else {
    dispatch();
  }
}

void Worker::produce() {
  const CampaignOptions& o = workload_.options;
  TxPlan plan;
  plan.queue = kQueue;
  plan.max_attempts = static_cast<uint32_t>(3 + below(4));  // 3..6
  const double kind = std::uniform_real_distribution<double>(0, 1)(rng_);
  if (kind < 0.15) {
    plan.sent = true;
  } else if (kind < 0.4) {
    plan.delay_ms = static_cast<int64_t>(20 + below(300));
  }
  const std::string id = "tx-" + std::to_string(o.seed % 100'000) + "-" + std::to_string(index_) +
                         "-" + std::to_string(next_tx_++);
  plan.payload = "payload-of-" + id + std::string(below(64), 'x');
  workload_.recorder.plan(id, plan);
  enqueue_ = std::make_pair(id, plan);
  send_enqueue();
}

void Worker::send_enqueue() {
  const std::string id = enqueue_->first;
  const TxPlan plan = enqueue_->second;
  client::EnqueueOptions options;
  options.max_attempts = plan.max_attempts;
  // The base varies per transaction within the queue's millisecond scale.
  options.base = std::to_string(20 + std::hash<std::string>{}(id) % 31) + "ms";
  if (plan.sent) options.sent = true;
  if (plan.delay_ms > 0) options.delay = std::to_string(plan.delay_ms) + "ms";
  auto summary = call(OpKind::kEnqueue, id, 0, {}, false, [&](client::Client& c) {
    return c.enqueue(plan.queue, id, plan.payload, options);
  });
  if (!summary) return;  // pending: sent again once reconnected
  enqueue_.reset();
  remember(id, *summary, 0);
  if (plan.sent && summary->state == "IN_FLIGHT" && summary->attempt == 1) answer(id, 1);
}

std::optional<HandOut> Worker::reserve(std::chrono::milliseconds wait) {
  const int64_t send_us = wall_us();
  auto got = client_->reserve(kQueue, wait);
  const int64_t recv_us = wall_us();
  if (!got.is_ok()) {
    if (client::server_error_code(got.status()).empty()) client_.reset();
    return std::nullopt;
  }
  if (!got.value()) return std::nullopt;
  const client::ReservedRequest& request = *got.value();
  HandOut hand_out{request.tx_id,   request.attempt, request.handouts, request.idempotency_key,
                   request.payload, index_,          send_us,          recv_us};
  workload_.recorder.hand_out(hand_out);
  return hand_out;
}

void Worker::dispatch() {
  auto got = reserve(kReserveWait);
  busy_ = got.has_value();
  if (!got) return;
  const std::string& tx = got->tx_id;
  const uint32_t attempt = got->attempt;
  const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
  if (r < 0.06) {
    client_.reset();  // the dispatcher vanishes mid-lease
    return;
  }
  if (r < 0.13) {
    client::ReleaseOptions release;
    release.delay = std::to_string(below(30)) + "ms";
    if (chance(0.5)) release.reason = "CRASH_TEST";
    call(OpKind::kRelease, tx, attempt, {}, false,
         [&](client::Client& c) { return c.release(tx, attempt, release); });
    return;
  }
  if (r < 0.17) return;  // abandoned: the lease runs out
  if (chance(0.7)) {
    auto sent = call(OpKind::kSent, tx, attempt, {}, false,
                     [&](client::Client& c) { return c.sent(tx, attempt); });
    if (!sent) return;
    if (chance(0.1)) {
      if (!call(OpKind::kSent, tx, attempt, {}, true,
                [&](client::Client& c) { return c.sent(tx, attempt); })) {
        return;
      }
    }
  }
  answer(tx, attempt);
}

// RESPOND with a random answer, sometimes followed by a duplicate RESPOND or
// a repeated SENT for the same attempt.
void Worker::answer(const std::string& tx, uint32_t attempt) {
  const client::Answer a = random_answer();
  auto replied = call(OpKind::kRespond, tx, attempt, client::answer_name(a), false,
                      [&](client::Client& c) { return c.respond(tx, attempt, a); });
  if (!replied) return;
  remember(tx, *replied, attempt);
  if (chance(0.12)) {
    const client::Answer again = chance(0.5) ? a : random_answer();
    if (!call(OpKind::kRespond, tx, attempt, client::answer_name(again), true,
              [&](client::Client& c) { return c.respond(tx, attempt, again); })) {
      return;
    }
  }
  if (chance(0.08)) {
    call(OpKind::kSent, tx, attempt, {}, true,
         [&](client::Client& c) { return c.sent(tx, attempt); });
  }
}

void Worker::drain_step() {
  auto got = reserve(std::chrono::milliseconds(200));
  if (!got) return;
  const std::string tx = got->tx_id;
  const uint32_t attempt = got->attempt;
  call(OpKind::kRespond, tx, attempt, "SUCCESS", false,
       [&](client::Client& c) { return c.respond(tx, attempt, client::Answer::kSuccess); });
}

void Worker::late_answer() {
  const auto [tx, attempt] = answered_[below(answered_.size())];
  const client::Answer a = random_answer();
  call(OpKind::kRespond, tx, attempt, client::answer_name(a), true,
       [&, tx = tx, attempt = attempt](client::Client& c) { return c.respond(tx, attempt, a); });
}

void Worker::resolve_scheduled() {
  const size_t at = below(scheduled_.size());
  const std::string tx = scheduled_[at];
  scheduled_.erase(scheduled_.begin() + static_cast<std::ptrdiff_t>(at));
  const bool succeed = chance(0.5);
  call(OpKind::kResolve, tx, 0, succeed ? "SUCCEEDED" : "FAILED", false, [&](client::Client& c) {
    return c.resolve(tx, succeed ? client::Terminal::kSucceeded : client::Terminal::kFailed);
  });
}

client::Answer Worker::random_answer() {
  const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
  if (r < 0.3) return client::Answer::kSuccess;
  if (r < 0.65) return client::Answer::kCancelled;
  if (r < 0.9) return client::Answer::kTransient;
  return client::Answer::kRejected;
}

void Worker::remember(const std::string& tx_id, const client::Summary& summary, uint32_t attempt) {
  if (attempt != 0 && summary.status == client::ReplyKind::kOk) {
    remember_bounded(answered_, std::make_pair(tx_id, attempt), rng_);
  }
  if (summary.state == "SCHEDULED") remember_bounded(scheduled_, tx_id, rng_);
}

}  // namespace tarde::crash
