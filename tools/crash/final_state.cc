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

Result<std::set<std::string>> dead_lettered(client::Client& client) {
  auto letters = client.deadletters(kQueue, kDeadLettersMax);
  if (!letters.is_ok()) return letters.status();
  std::set<std::string> ids;
  for (const client::DeadLetterInfo& letter : letters.value()) ids.insert(letter.tx_id);
  return ids;
}

// Sends `count` requests, `line_of(i)` the i-th, keeping at most
// kPipelineDepth replies unread, and hands each reply in order to
// `on_reply(i, sent_us, reply)`. False when the connection failed; the
// replies read before that were handed on.
template <typename LineOf, typename OnReply>
bool pipelined(client::Client& client, size_t count, LineOf line_of, OnReply on_reply) {
  std::vector<int64_t> sent_us(count);
  size_t sent = 0;
  for (size_t read = 0; read < count; ++read) {
    for (; sent < count && sent - read < kPipelineDepth; ++sent) {
      sent_us[sent] = wall_us();
      if (!client.send_only(line_of(sent)).is_ok()) return false;
    }
    auto reply = client.read_reply();
    if (!reply.is_ok()) return false;
    on_reply(read, sent_us[read], reply.value());
  }
  return true;
}

// What a GET reply says: a TxInfo, one with an empty state for NOT_FOUND,
// nullopt for anything else.
std::optional<client::TxInfo> tx_info_of(const client::Reply& reply) {
  if (reply.kind == client::ReplyKind::kNotFound) return client::TxInfo{};
  if (reply.kind != client::ReplyKind::kTx) return std::nullopt;
  auto info = client::parse_tx_info(reply.head);
  if (!info.is_ok()) return std::nullopt;
  return std::move(info).value();
}

// Records a GET the drain made and what it saw (not a NOT_FOUND).
void record_get(Recorder& recorder, const std::string& id, int64_t sent_us,
                const client::TxInfo& info) {
  Op op;
  op.kind = OpKind::kGet;
  op.tx_id = id;
  op.client = kDrainClient;
  op.send_us = sent_us;
  op.recv_us = wall_us();
  op.outcome = OpOutcome::kReplied;
  op.summary =
      client::Summary{client::ReplyKind::kOk, id, info.state, info.attempt, info.next_attempt,
                      info.next_fire_at_ms};
  recorder.op(op);
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

bool drain(uint16_t port, Recorder& recorder, std::chrono::steady_clock::duration stall_limit) {
  std::set<std::string> done;
  std::unique_ptr<client::Client> client;
  size_t done_before = 0;
  auto progressed_at = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - progressed_at < stall_limit) {
    if (!client || !client->is_open()) {
      auto made = connect(port);
      if (!made.is_ok()) return false;
      client = std::move(made).value();
    }
    auto dead = dead_lettered(*client);
    if (!dead.is_ok()) continue;
    std::vector<std::string> open;
    for (const std::string& id : recorder.tx_ids()) {
      if (done.count(id) == 0) open.push_back(id);
    }
    std::vector<std::pair<std::string, uint32_t>> in_flight;
    bool all = true;
    const bool read = pipelined(
        *client, open.size(), [&](size_t i) { return "GET " + open[i]; },
        [&](size_t i, int64_t sent_us, const client::Reply& reply) {
          const std::optional<client::TxInfo> info = tx_info_of(reply);
          if (!info) {
            all = false;
            return;
          }
          if (info->state.empty()) return;  // NOT_FOUND: it may still be created
          record_get(recorder, open[i], sent_us, *info);
          if (detail::is_terminal(info->state) ||
              (info->state == "SENDING" && dead.value().count(open[i]))) {
            done.insert(open[i]);
            return;
          }
          all = false;
          if (info->state == "IN_FLIGHT") in_flight.emplace_back(open[i], info->attempt);
        });
    for (const auto& [id, attempt] : in_flight) respond_success(*client, recorder, id, attempt);
    if (read && all) return true;
    if (done.size() > done_before) {
      done_before = done.size();
      progressed_at = std::chrono::steady_clock::now();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

std::map<std::string, FinalTx> read_finals(uint16_t port, const std::vector<std::string>& ids) {
  std::map<std::string, FinalTx> finals;
  for (const std::string& id : ids) finals[id];  // read stays false unless it is
  auto connected = connect(port);
  if (!connected.is_ok()) return finals;
  client::Client& client = *connected.value();
  auto dead = dead_lettered(client);
  if (!dead.is_ok()) return finals;
  // A GET and a HISTORY per transaction, pipelined: a long campaign has
  // hundreds of thousands.
  pipelined(
      client, 2 * ids.size(),
      [&](size_t i) { return (i % 2 == 0 ? "GET " : "HISTORY ") + ids[i / 2]; },
      [&](size_t i, int64_t, const client::Reply& reply) {
        const std::string& id = ids[i / 2];
        FinalTx& final = finals[id];
        if (i % 2 == 0) {
          const std::optional<client::TxInfo> info = tx_info_of(reply);
          final.read = info && info->state.empty();  // NOT_FOUND is read; the HISTORY too
          if (!info || info->state.empty()) return;
          final.found = true;
          final.info = *info;
          return;
        }
        if (!final.found) return;
        auto history = client::client_detail::parse_list<client::TxEvent>(
            reply, client::ReplyKind::kEvents, client::parse_event);
        if (!history.is_ok()) return;
        final.history = std::move(history).value();
        final.dead_lettered = dead.value().count(id) != 0;
        final.read = true;
      });
  return finals;
}

}  // namespace tarde::crash
