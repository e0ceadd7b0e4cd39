#include "tools/crash-embedded/worker.h"

namespace tarde::crash_embedded {
namespace {

constexpr std::chrono::milliseconds kReserveWait{100};
constexpr size_t kRememberedMax = 64;

template <typename T>
void remember_bounded(std::vector<T>& list, T value, std::mt19937_64& rng) {
  if (list.size() < kRememberedMax) {
    list.push_back(std::move(value));
  } else {
    list[std::uniform_int_distribution<size_t>(0, list.size() - 1)(rng)] = std::move(value);
  }
}

// The summary as the protocol writes it, which the harness parses back.
std::string wire(const Summary& s) {
  std::string out = std::string(outcome_name(s.outcome)) + ' ' + s.tx_id;
  if (s.outcome == Outcome::kNotFound) return out;
  return out + ' ' + state_name(s.state) + ' ' + std::to_string(s.attempt) + ' ' +
         std::to_string(s.next_attempt) + ' ' + std::to_string(s.next_fire_at_ms);
}

}  // namespace

Worker::Worker(Life& life, int index)
    : life_(life),
      client_(life.first_client + static_cast<int>(life.number) * 64 + index),
      rng_(life.seed * 1'000'003ULL + life.number * 131ULL + static_cast<uint64_t>(index)) {}

void Worker::run() {
  for (;;) {
    const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
    if (r < 0.3 && life_.budget.fetch_sub(1) > 0) {
      produce();
    } else if (r < 0.34 && busy_ && !answered_.empty()) {
      const auto [tx, attempt] = answered_[below(answered_.size())];
      const Answer a = random_answer();
      call("RESPOND", tx, attempt, answer_name(a), true, [&, tx = tx, attempt = attempt] {
        return life_.tarde.respond(tx, attempt, {a, {}, {}});
      });
    } else if (r < 0.37 && busy_ && !scheduled_.empty()) {
      const size_t at = below(scheduled_.size());
      const std::string tx = scheduled_[at];
      scheduled_.erase(scheduled_.begin() + static_cast<std::ptrdiff_t>(at));
      const bool succeed = chance(0.5);
      call("RESOLVE", tx, 0, succeed ? "SUCCEEDED" : "FAILED", false, [&] {
        return life_.tarde.resolve(tx, succeed ? TxState::kSucceeded : TxState::kFailed);
      });
    } else {
      dispatch();
    }
  }
}

std::optional<Summary> Worker::call(const char* kind, const std::string& tx, uint32_t attempt,
                                    const std::string& word, bool deliberate, const Call& fn) {
  const std::string op = std::to_string(life_.number) + "." + std::to_string(client_) + "." +
                         std::to_string(next_op_++);
  life_.journal.append({"B", op, kind, tx, std::to_string(attempt), word.empty() ? "-" : word,
                        deliberate ? "1" : "0", std::to_string(client_),
                        std::to_string(wall_us())});
  Result<Summary> got = fn();
  const std::string recv = std::to_string(wall_us());
  if (!got.is_ok()) {
    life_.journal.append({"E", op, "E", recv, got.status().to_string()});
    return std::nullopt;
  }
  life_.journal.append({"E", op, "R", recv, wire(got.value())});
  return got.value();
}

void Worker::produce() {
  const uint32_t max_attempts = static_cast<uint32_t>(3 + below(4));  // 3..6
  bool sent = false;
  int64_t delay_ms = 0;
  const double kind = std::uniform_real_distribution<double>(0, 1)(rng_);
  if (kind < 0.15) {
    sent = true;
  } else if (kind < 0.4) {
    delay_ms = static_cast<int64_t>(20 + below(300));
  }
  const std::string id = "etx-" + std::to_string(life_.seed % 100'000) + "-" +
                         std::to_string(life_.number) + "-" + std::to_string(client_) + "-" +
                         std::to_string(next_tx_++);
  const std::string payload = "payload-of-" + id + std::string(below(64), 'x');
  life_.journal.append({"P", id, kQueue, std::to_string(max_attempts), sent ? "1" : "0",
                        std::to_string(delay_ms), payload});
  EnqueueOptions options;
  options.max_attempts = max_attempts;
  options.base = std::chrono::milliseconds(20 + std::hash<std::string>{}(id) % 31);
  options.sent = sent;
  if (delay_ms > 0) options.delay = std::chrono::milliseconds(delay_ms);
  auto summary = call("ENQUEUE", id, 0, {}, false,
                      [&] { return life_.tarde.enqueue(kQueue, id, payload, options); });
  if (!summary) return;
  remember(id, *summary, 0);
  if (sent && summary->state == TxState::kInFlight && summary->attempt == 1) answer(id, 1);
}

std::optional<Request> Worker::reserve(std::chrono::milliseconds wait) {
  const int64_t send_us = wall_us();
  auto got = life_.tarde.reserve(kQueue, wait);
  const int64_t recv_us = wall_us();
  if (!got.is_ok() || !got.value()) return std::nullopt;
  const Request& r = *got.value();
  life_.journal.append({"H", r.tx_id, std::to_string(r.attempt), std::to_string(r.deliveries),
                        r.key, std::to_string(client_), std::to_string(send_us),
                        std::to_string(recv_us), r.payload});
  return r;
}

void Worker::dispatch() {
  auto got = reserve(kReserveWait);
  busy_ = got.has_value();
  if (!got) return;
  const std::string tx = got->tx_id;
  const uint32_t attempt = got->attempt;
  const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
  if (r < 0.07) {
    const auto delay = std::chrono::milliseconds(below(30));
    const std::string reason = chance(0.5) ? "CRASH_TEST" : "";
    call("RELEASE", tx, attempt, {}, false,
         [&] { return life_.tarde.release(tx, attempt, delay, reason); });
    return;
  }
  if (r < 0.11) return;  // abandoned: the lease runs out
  if (chance(0.7)) {
    if (!call("SENT", tx, attempt, {}, false, [&] { return life_.tarde.sent(tx, attempt); })) {
      return;
    }
    if (chance(0.1) &&
        !call("SENT", tx, attempt, {}, true, [&] { return life_.tarde.sent(tx, attempt); })) {
      return;
    }
  }
  answer(tx, attempt);
}

void Worker::answer(const std::string& tx, uint32_t attempt) {
  const Answer a = random_answer();
  auto replied = call("RESPOND", tx, attempt, answer_name(a), false, [&] {
    return life_.tarde.respond(tx, attempt, {a, {}, {}});
  });
  if (!replied) return;
  remember(tx, *replied, attempt);
  if (chance(0.12)) {
    const Answer again = chance(0.5) ? a : random_answer();
    if (!call("RESPOND", tx, attempt, answer_name(again), true, [&] {
          return life_.tarde.respond(tx, attempt, {again, {}, {}});
        })) {
      return;
    }
  }
  if (chance(0.08)) {
    call("SENT", tx, attempt, {}, true, [&] { return life_.tarde.sent(tx, attempt); });
  }
}

Answer Worker::random_answer() {
  const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
  if (r < 0.3) return Answer::kSuccess;
  if (r < 0.65) return Answer::kCancelled;
  if (r < 0.9) return Answer::kTransient;
  return Answer::kRejected;
}

void Worker::remember(const std::string& tx, const Summary& summary, uint32_t attempt) {
  if (attempt != 0 && summary.outcome == Outcome::kOk) {
    remember_bounded(answered_, std::make_pair(tx, attempt), rng_);
  }
  if (summary.state == TxState::kScheduled) remember_bounded(scheduled_, tx, rng_);
}

}  // namespace tarde::crash_embedded
