#include "tools/crash/final_state.h"

#include <set>
#include <thread>

#include "clients/cpp/client.h"
#include "tools/crash/workload.h"

namespace tarde::crash {
namespace {

constexpr std::chrono::milliseconds kTimeout{5000};
// Pipelined requests in flight at once (PROTOCOL.md: keep at most a few
// hundred unread replies).
constexpr uint64_t kPipelineDepth = 200;
// Every burst entry must still be due when the burst ends, since the restart
// after it has to page them in (wheel.after_page). So each delay also covers
// the rest of the burst, estimated from the pace so far with 50 % to spare: a
// slow build (the sanitizers) enqueues several times slower. The first
// chunk, before there is a pace, gets this much instead.
constexpr int64_t kBurstFirstChunkExtraMs = 3000;
// The drain's responder client records as this client number.
constexpr int kDrainClient = 1000;
constexpr uint64_t kDeadLettersMax = 100'000;

Result<std::unique_ptr<client::Client>> connect(uint16_t port) {
  client::ClientOptions options;
  options.timeout = kTimeout;
  return client::Client::connect("127.0.0.1", port, options);
}

bool settled(const std::string& state) { return state == "SUCCEEDED" || state == "FAILED"; }

Result<std::set<std::string>> dead_lettered(client::Client& client) {
  auto letters = client.deadletters(kQueue, kDeadLettersMax);
  if (!letters.is_ok()) return letters.status();
  std::set<std::string> ids;
  for (const client::DeadLetterInfo& letter : letters.value()) ids.insert(letter.tx_id);
  return ids;
}

// GETs one transaction and records what the client saw; nullopt when the
// connection failed, a TxInfo with an empty state for NOT_FOUND.
std::optional<client::TxInfo> recorded_get(client::Client& client, Recorder& recorder,
                                           const std::string& id) {
  Op op;
  op.kind = OpKind::kGet;
  op.tx_id = id;
  op.client = kDrainClient;
  op.send_us = wall_us();
  auto got = client.get(id);
  op.recv_us = wall_us();
  if (!got.is_ok()) {
    if (got.status().code() == Status::Code::kNotFound) return client::TxInfo{};
    return std::nullopt;
  }
  const client::TxInfo& info = got.value();
  op.outcome = OpOutcome::kReplied;
  op.summary =
      client::Summary{client::ReplyKind::kOk, id, info.state, info.attempt, info.next_attempt,
                      info.next_fire_at_ms};
  recorder.op(op);
  return info;
}

void respond_success(client::Client& client, Recorder& recorder, const std::string& id,
                     uint32_t attempt) {
  Op op;
  op.kind = OpKind::kRespond;
  op.tx_id = id;
  op.attempt = attempt;
  op.word = "SUCCESS";
  op.client = kDrainClient;
  op.send_us = wall_us();
  auto got = client.respond(id, attempt, client::Answer::kSuccess);
  op.recv_us = wall_us();
  if (got.is_ok()) {
    op.outcome = OpOutcome::kReplied;
    op.summary = got.value();
  } else {
    op.outcome =
        client::server_error_code(got.status()).empty() ? OpOutcome::kPending : OpOutcome::kError;
    op.error = got.status().to_string();
  }
  recorder.op(op);
}

}  // namespace

Status configure_queue(uint16_t port) {
  auto client = connect(port);
  if (!client.is_ok()) return client.status();
  auto config = client.value()->config(kQueue, queue_settings());
  return config.is_ok() ? Status::ok() : config.status();
}

Status enqueue_burst(uint16_t port, Recorder& recorder, uint64_t seed, uint64_t burst,
                     uint64_t count, uint64_t* planned) {
  *planned = 0;
  auto connected = connect(port);
  if (!connected.is_ok()) return connected.status();
  client::Client& client = *connected.value();
  std::mt19937_64 rng(seed ^ 0xb0b5ULL ^ (burst << 20));
  std::vector<Op> sent;
  const int64_t started_us = wall_us();
  for (uint64_t done = 0; done < count;) {
    const uint64_t chunk = std::min(kPipelineDepth, count - done);
    const int64_t elapsed_ms = (wall_us() - started_us) / 1000;
    const int64_t rest_ms = done == 0 ? kBurstFirstChunkExtraMs
                                      : elapsed_ms * static_cast<int64_t>(count - done) * 3 /
                                            (2 * static_cast<int64_t>(done));
    sent.clear();
    for (uint64_t i = 0; i < chunk; ++i, ++done) {
      TxPlan plan;
      plan.queue = kQueue;
      plan.max_attempts = 3;
      // Due after the kill and restart that follow the burst (they take well
      // under a second) and after the rest of the burst is sent (slow under
      // a sanitizer): the restart must find more than a page still due.
      plan.delay_ms = 1000 + static_cast<int64_t>(rng() % 1500) + rest_ms;
      plan.payload = "burst";
      const std::string id = "burst-" + std::to_string(seed % 100'000) + "-" +
                             std::to_string(burst) + "-" + std::to_string(done);
      recorder.plan(id, plan);
      *planned += 1;
      Op op;
      op.kind = OpKind::kEnqueue;
      op.tx_id = id;
      op.client = kDrainClient;
      op.send_us = wall_us();
      const std::string line = "ENQUEUE " + plan.queue + " " + id +
                               " max_attempts=3 delay=" + std::to_string(plan.delay_ms) + "ms";
      Status status = client.send_only(line, plan.payload);
      if (!status.is_ok()) {
        recorder.op(op);  // pending
        return status;
      }
      sent.push_back(op);
    }
    for (Op& op : sent) {
      auto reply = client.read_reply();
      op.recv_us = wall_us();
      if (reply.is_ok()) {
        auto summary = client::parse_summary(reply.value().head);
        if (summary.is_ok()) {
          op.outcome = OpOutcome::kReplied;
          op.summary = summary.value();
        } else {
          op.outcome = OpOutcome::kError;
          op.error = reply.value().head;
        }
      }
      recorder.op(op);
    }
  }
  return Status::ok();
}

bool drain(uint16_t port, Recorder& recorder, std::chrono::steady_clock::time_point deadline) {
  std::set<std::string> done;
  std::unique_ptr<client::Client> client;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!client || !client->is_open()) {
      auto made = connect(port);
      if (!made.is_ok()) return false;
      client = std::move(made).value();
    }
    auto dead = dead_lettered(*client);
    if (!dead.is_ok()) continue;
    bool all = true;
    for (const std::string& id : recorder.tx_ids()) {
      if (done.count(id) != 0) continue;
      auto info = recorded_get(*client, recorder, id);
      if (!info) {
        all = false;
        break;
      }
      const bool finished = info->state.empty() || settled(info->state) ||
                            (info->state == "SENDING" && dead.value().count(id) != 0);
      if (finished) {
        if (!info->state.empty()) done.insert(id);  // NOT_FOUND may still be created
        continue;
      }
      all = false;
      if (info->state == "IN_FLIGHT") respond_success(*client, recorder, id, info->attempt);
    }
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

std::map<std::string, FinalTx> read_finals(uint16_t port, const std::vector<std::string>& ids) {
  std::map<std::string, FinalTx> finals;
  auto connected = connect(port);
  if (!connected.is_ok()) return finals;
  client::Client& client = *connected.value();
  auto dead = dead_lettered(client);
  if (!dead.is_ok()) return finals;
  for (const std::string& id : ids) {
    FinalTx& final = finals[id];
    auto got = client.get(id);
    if (!got.is_ok()) {
      final.read = got.status().code() == Status::Code::kNotFound;
      continue;
    }
    final.found = true;
    final.info = got.value();
    auto history = client.history(id);
    if (!history.is_ok()) continue;
    final.history = history.value();
    final.dead_lettered = dead.value().count(id) != 0;
    final.read = true;
  }
  return finals;
}

}  // namespace tarde::crash
