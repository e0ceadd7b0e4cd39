// libFuzzer target for the whole command path: the bytes of several clients,
// interleaved, go through the server's own Session (net/server/session.cc:
// framing, pipelining, replies held until their commit, parked RESERVEs) and
// its command handlers (net/server/commands.cc) into the engine, over an
// in-memory store, on a ManualClock. The input format is command_input.h:
// client bytes, clock steps that fire timers, group commits (some refused by
// the store), hang-ups and restarts.
//
// FuzzHost stands in for the Server and its Core (net/core/core.cc) with the
// same rules (a change to the Core's commit, recount, timer or parked-RESERVE
// rules belongs here too), made deterministic: a group commit happens when
// the input says so and writes the StagedKv's sealed group into a MemKv (the
// durable store); timers fire when the input moves the clock. Each connection is a socket
// pair: the Session owns one end (as a TCP socket; it sets TCP_NODELAY and
// ignores the error), the fuzzer writes the client's bytes into the other
// and reads the replies. The io_context is polled until nothing is left to
// run after every operation, so the only real time involved is a RESERVE's
// wait= timer, which an input that runs in microseconds does not reach.
//
// Checked after every operation: each reply is well framed (a known first
// word, printable lines ended by CRLF, counted lines and payloads as
// announced) and nothing follows a reply that closes the connection. After
// every commit: the invariant sweep (engine/invariants.h) finds no violation
// in the durable store. At the end, once everything is committed: no
// violation in the store, the engine's counts agree with the sweep's, every
// connection that is not waiting in RESERVE got one reply per request, and
// every connection that was told it closes is closed.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <asio.hpp>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/figures.h"
#include "engine/engine.h"
#include "engine/invariants.h"
#include "engine/random.h"
#include "net/server/send_queue.h"
#include "net/server/session.h"
#include "net/server/session_host.h"
#include "net/server/socket_batch.h"
#include "net/wire/codec.h"
#include "storage/mem_kv.h"
#include "storage/staged_kv.h"
#include "storage/store.h"
#include "tests/fuzz/command_input.h"
#include "tests/fuzz/fuzz_check.h"

namespace tarde::fuzz {
namespace {

using net::Session;

// Timer calls per clock step: each fires at most 32 due retries, and an
// input of at most 20 kB creates far fewer transactions than this covers.
constexpr int kTimerTurnsMax = 10'000;

// Sweeps the store for broken invariants; every one is a finding.
engine::Sweep sweep_clean(storage::Kv& kv) {
  storage::Store store(kv);
  engine::Sweep sweep;
  const Status status = engine::sweep_invariants(store, &sweep);
  FUZZ_CHECK(status.is_ok());
  for (const engine::Violation& violation : sweep.violations) {
    std::fprintf(stderr, "invariant violation: %s\n", violation.text.c_str());
  }
  FUZZ_CHECK(sweep.violations.empty());
  return sweep;
}

// The server side of the fuzzer: a SessionHost over an engine on a MemKv,
// with the Core's group commit, timers and parked RESERVEs driven by the
// input instead of threads and real time. Everything runs on the fuzzer's
// thread, inside io.poll() or between two polls.
class FuzzHost final : public net::SessionHost {
 public:
  FuzzHost(asio::io_context& io, uint8_t setup)
      : io_(io),
        decoder_((setup & kSetupSmallPayload) ? kSmallPayloadBytesMax
                                              : net::kDefaultPayloadBytesMax),
        random_(setup >> 3),
        readiness_(io, batch_) {
    FUZZ_CHECK(readiness_.open().is_ok());
    if (setup & kSetupAuth) auth_token_ = std::string(kAuthToken);
    engine_options_.retry_lead_ms = (setup & kSetupRetryLead) ? kRetryLeadMs : 0;
    start();
  }

  // A crash: what was staged and not committed is lost; the engine recovers
  // from the durable store. Requires: every session is closed.
  void restart() {
    parked_.clear();
    commit_waiters_.clear();
    signaled_.clear();
    durable_.fail_writes_for_test(false);
    failed_commits_ = 0;
    recount_pending_ = false;
    start();
  }

  // The group commit (GroupCommitter::commit_inline and finish, then
  // Core::on_commit), when the input says the disk got to it.
  void commit(bool refused) {
    if (!staged_->has_open_group()) return;
    const storage::StagedKv::Group group = staged_->seal();
    durable_.fail_writes_for_test(refused);
    const bool ok = durable_.write(group.batch).is_ok();
    durable_.fail_writes_for_test(false);
    FUZZ_CHECK(ok == !refused);
    if (ok) {
      staged_->committed(group.seq);
      sweep_clean(durable_);
      if (failed_commits_ > 0) recount_pending_ = true;
      failed_commits_ = 0;
    } else {
      staged_->discard_from(group.seq);
      failed_commits_ += 1;
      recount_pending_ = false;
      engine::RecoveryReport report;
      FUZZ_CHECK(engine_->start_recovery(&report).is_ok());
    }
    auto waiters = std::move(commit_waiters_);
    commit_waiters_.clear();
    for (auto& [raw, weak] : waiters) {
      if (auto waiter = weak.lock()) waiter->on_commit(group.seq, ok);
    }
    // Core::start_recount_when_idle: once writes work again and nothing is
    // staged, counting restarts and a sweep of the store completes it (the
    // Core's runs in the background; here it ends at once).
    if (recount_pending_ && !staged_->has_open_group()) {
      recount_pending_ = false;
      engine_->restart_counting();
      finish_recovery();
    }
  }

  // The clock moved: fire what is due, as Core::on_timer does.
  void fire_timers() {
    for (int turn = 0; turn < kTimerTurnsMax; ++turn) {
      auto more = engine_->run_timers(true);
      FUZZ_CHECK(more.is_ok());
      if (!more.value()) break;
      FUZZ_CHECK(turn + 1 < kTimerTurnsMax);
    }
    after_commands();
  }

  // Commits until nothing is staged (repairs may stage more), then checks
  // that the engine counts what the store holds.
  void settle() {
    for (int round = 0; round < 8 && staged_->has_open_group(); ++round) commit(false);
    FUZZ_CHECK(!staged_->has_open_group());
    const engine::Sweep sweep = sweep_clean(durable_);
    const engine::EngineStats stats = engine_->stats();
    if (stats.counting) return;
    if (stats.transactions != sweep.transactions) {
      std::fprintf(stderr, "counts: the engine has %llu transactions, the store %llu\n",
                   static_cast<unsigned long long>(stats.transactions),
                   static_cast<unsigned long long>(sweep.transactions));
    }
    FUZZ_CHECK(stats.transactions == sweep.transactions);
    FUZZ_CHECK(stats.by_state == sweep.by_state);
    uint64_t dead = 0;
    for (const auto& [queue, counts] : sweep.queues) dead += counts.dead;
    FUZZ_CHECK(stats.dead_letters == dead);
  }

  ManualClock& clock() { return clock_; }
  uint64_t next_conn_id() { return next_conn_id_++; }

  // SessionHost.
  engine::Engine& engine() override { return *engine_; }
  const net::Decoder& decoder() const override { return decoder_; }
  const Figures& figures() const override { return *figures_; }
  const std::optional<std::string>& auth_token() const override { return auth_token_; }
  bool shutting_down() const override { return false; }
  // No backup directory: BACKUP answers NOT_CONFIGURED before it asks.
  bool backups_enabled() const override { return false; }
  net::ReadReadiness& read_readiness() override { return readiness_; }
  net::SendQueue& send_queue() override { return send_queue_; }
  std::optional<std::string> start_backup(const std::shared_ptr<net::Session>&) override {
    std::abort();  // unreachable while backups_enabled() is false
  }
  void begin_command(net::ClientActivity::Mark&, std::chrono::steady_clock::time_point) override {
    staged_->reset_observed();
  }
  uint64_t observed_seq() const override { return staged_->observed_seq(); }
  uint64_t hand_out_seq() const override { return staged_->hand_out_seq(); }
  uint64_t committed_seq() const override { return staged_->committed_seq(); }
  void after_commands() override {}
  void wait_for_commit(const std::shared_ptr<Session>& session, uint64_t) override {
    commit_waiters_[session.get()] = session;
  }
  void park(const std::shared_ptr<Session>& session, const std::string& queue) override {
    parked_[queue].push_back(session);
  }
  void session_closed(Session* session) override {
    commit_waiters_.erase(session);
    const Status status = engine_->connection_closed(session->context().conn_id);
    FUZZ_CHECK(status.is_ok());
  }

 private:
  void start() {
    engine_.reset();
    store_.reset();
    staged_ = std::make_unique<storage::StagedKv>(durable_);
    store_ = std::make_unique<storage::Store>(*staged_);
    engine_ = std::make_unique<engine::Engine>(*store_, clock_, random_, engine_options_);
    figures_ = std::make_unique<Figures>();
    engine::RecoveryReport report;
    FUZZ_CHECK(engine_->recover(&report).is_ok());
    engine_->declare_figures(*figures_);
    engine_->set_ready_listener([this](const std::string& queue) { signal_ready(queue); });
  }

  void finish_recovery() {
    storage::Store durable_store(durable_);
    engine::Sweep sweep;
    FUZZ_CHECK(engine::sweep_invariants(durable_store, &sweep).is_ok());
    std::vector<std::string> repairs;
    FUZZ_CHECK(engine_->finish_recovery(sweep, &repairs).is_ok());
  }

  // Core::signal_ready and serve_parked: hand ready requests to parked
  // RESERVEs, oldest first, after the current handler.
  void signal_ready(const std::string& queue) {
    if (parked_.find(queue) == parked_.end()) return;
    signaled_.insert(queue);
    if (serve_posted_) return;
    serve_posted_ = true;
    asio::post(io_, [this] { serve_parked(); });
  }

  void serve_parked() {
    serve_posted_ = false;
    const std::set<std::string> queues = std::move(signaled_);
    signaled_.clear();
    for (const std::string& queue : queues) {
      auto it = parked_.find(queue);
      if (it == parked_.end()) continue;
      auto& line = it->second;
      while (!line.empty()) {
        auto waiter = line.front().lock();
        if (!waiter || !waiter->waits_on(queue)) {
          line.pop_front();
          continue;
        }
        staged_->reset_observed();
        if (!waiter->try_take(queue)) break;
        line.pop_front();
        waiter->deliver();
      }
      if (line.empty()) parked_.erase(it);
    }
  }

  asio::io_context& io_;
  net::Decoder decoder_;
  std::optional<std::string> auth_token_;
  ManualClock clock_;
  engine::SeededRandom random_;
  net::SocketBatch batch_;  // sessions' receives and sends, as in the server
  net::SendQueue send_queue_{io_, batch_};
  net::ReadReadiness readiness_;  // sessions' input, through an epoll set of its own
  engine::Engine::Options engine_options_;
  storage::MemKv durable_;
  std::unique_ptr<storage::StagedKv> staged_;
  std::unique_ptr<storage::Store> store_;
  std::unique_ptr<Figures> figures_;
  std::unique_ptr<engine::Engine> engine_;
  std::map<std::string, std::deque<std::weak_ptr<Session>>> parked_;
  std::unordered_map<Session*, std::weak_ptr<Session>> commit_waiters_;
  std::set<std::string> signaled_;
  bool serve_posted_ = false;
  uint64_t failed_commits_ = 0;
  bool recount_pending_ = false;
  uint64_t next_conn_id_ = 1;
};

bool is_printable(std::string_view text) {
  for (const char c : text) {
    if (c < 0x20 || c > 0x7E) return false;
  }
  return true;
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= line.size()) {
    const size_t end = std::min(line.find(' ', start), line.size());
    out.push_back(line.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

uint64_t count_of(std::string_view token) {
  FUZZ_CHECK(!token.empty() && token.size() <= 9);
  uint64_t value = 0;
  for (const char c : token) {
    FUZZ_CHECK(c >= '0' && c <= '9');
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  return value;
}

// Reads one CRLF-ended, printable line at `at`; nullopt when it has not all
// arrived yet.
std::optional<std::string_view> line_at(std::string_view text, size_t at, size_t* next) {
  const size_t end = text.find("\r\n", at);
  if (end == std::string_view::npos) {
    FUZZ_CHECK(is_printable(text.substr(at)));
    return std::nullopt;
  }
  const std::string_view line = text.substr(at, end - at);
  FUZZ_CHECK(!line.empty());
  FUZZ_CHECK(is_printable(line));
  *next = end + 2;
  return line;
}

// One reply, as a client reads it.
struct Reply {
  size_t bytes = 0;  // 0: not complete yet
  bool closes = false;
};

// A payload of `bytes` then CRLF at `*next` (PROTOCOL.md): whether all of
// it has arrived; `*next` then moves past it.
bool payload_after(std::string_view text, uint64_t bytes, size_t* next) {
  if (text.size() < *next + bytes + 2) return false;
  FUZZ_CHECK(text.substr(*next + bytes, 2) == "\r\n");
  *next += bytes + 2;
  return true;
}

// The size a TX or LETTER line read with payload=1 announces.
uint64_t announced_payload(const std::vector<std::string_view>& line) {
  std::optional<uint64_t> bytes;
  for (const std::string_view token : line) {
    if (token.rfind("payload_bytes=", 0) == 0) bytes = count_of(token.substr(14));
  }
  FUZZ_CHECK(bytes.has_value());
  return *bytes;
}

// Parses the reply at the start of `text` (PROTOCOL.md), checking its
// framing; Reply::bytes is 0 while it is incomplete. `with_payload`: the
// request asked for payloads (GET or DEADLETTERS with payload=1).
Reply parse_reply(std::string_view text, bool with_payload) {
  static const std::set<std::string_view> kOneLine = {
      "OK",       "PONG",   "EMPTY",  "NOT_FOUND", "CREATED",  "EXISTS",   "BURIED", "STALE",
      "CONFLICT", "CONFIG", "PAUSED", "RESUMED",   "REDRIVEN", "RESOLVED", "BACKUP"};
  size_t next = 0;
  const auto first = line_at(text, 0, &next);
  if (!first) return {};
  const std::vector<std::string_view> head = words(*first);
  const std::string_view word = head[0];
  if (kOneLine.count(word) != 0) return {next, false};
  if (word == "TX") {
    if (with_payload && !payload_after(text, announced_payload(head), &next)) return {};
    return {next, false};
  }
  if (word == "BYE") {
    FUZZ_CHECK(head.size() == 1);
    return {next, true};
  }
  if (word == "ERR") {
    FUZZ_CHECK(head.size() >= 3);
    for (int code = 0; code <= static_cast<int>(net::kLastErrorCode); ++code) {
      const auto error = static_cast<net::ErrorCode>(code);
      if (head[1] == net::error_code_name(error)) return {next, net::closes_connection(error)};
    }
    FUZZ_CHECK(!"an ERR reply with an unknown code");
  }
  if (word == "REQUEST") {
    FUZZ_CHECK(head.size() == 6);
    if (!payload_after(text, count_of(head[5]), &next)) return {};
    return {next, false};
  }
  // Listings: the head's count, then that many lines (each LETTER followed
  // by its payload when asked for).
  const std::map<std::string_view, std::string_view> kListed = {
      {"EVENTS", "EVENT"}, {"LETTERS", "LETTER"}, {"ITEMS", "ITEM"}, {"STATS", ""}};
  const auto listed = kListed.find(word);
  if (listed == kListed.end()) {
    std::fprintf(stderr, "a reply this checker does not know: %.*s\n",
                 static_cast<int>(first->size()), first->data());
  }
  FUZZ_CHECK(listed != kListed.end());
  FUZZ_CHECK(head.size() == (word == "ITEMS" ? 3 : 2));
  if (word == "ITEMS") FUZZ_CHECK(head[2].rfind("next=", 0) == 0);
  for (uint64_t i = count_of(head[1]); i > 0; --i) {
    const auto line = line_at(text, next, &next);
    if (!line) return {};
    const std::vector<std::string_view> item = words(*line);
    if (listed->second.empty()) {
      FUZZ_CHECK(item.size() == 2);
    } else {
      FUZZ_CHECK(item[0] == listed->second);
    }
    if (word == "LETTERS" && with_payload && !payload_after(text, announced_payload(item), &next)) {
      return {};
    }
  }
  return {next, false};
}

// One client: its end of the socket pair, the requests it sent (counted by
// the same decoder the server uses) and the replies it read.
struct Client {
  int fd = -1;
  std::shared_ptr<Session> session;
  std::string sent;
  size_t answered_bytes = 0;  // the prefix of `sent` whose requests were answered
  std::string received;
  size_t replies = 0;
  bool told_close = false;  // a reply said the connection closes
  bool eof = false;
  bool hung_up = false;
};

// The fuzzer's world for one input: the io_context, the host and the clients.
class World {
 public:
  explicit World(uint8_t setup) : host_(io_, setup) {
    for (size_t i = 0; i < kConnections; ++i) connect(i);
  }
  ~World() {
    for (size_t i = 0; i < kConnections; ++i) hang_up(i);
    run();
  }

  void send(size_t conn, std::string_view bytes) {
    Client& client = clients_[conn];
    if (client.hung_up) return;
    // The server may have closed its end already; the client's bytes then go nowhere.
    const ssize_t written = ::send(client.fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (written > 0) client.sent.append(bytes.substr(0, static_cast<size_t>(written)));
    run();
  }
  void advance(int64_t ms) {
    host_.clock().advance_ms(ms);
    host_.fire_timers();
    run();
  }
  void commit(bool refused) {
    host_.commit(refused);
    run();
  }
  void reconnect(size_t conn) {
    hang_up(conn);
    run();
    connect(conn);
  }
  void restart() {
    for (size_t i = 0; i < kConnections; ++i) hang_up(i);
    run();
    host_.restart();
    for (size_t i = 0; i < kConnections; ++i) connect(i);
  }

  // The end of the input: commit everything, then check every client.
  void finish() {
    host_.settle();
    run();
    for (size_t i = 0; i < kConnections; ++i) check_finished(clients_[i]);
  }

 private:
  void connect(size_t conn) {
    int fds[2];
    FUZZ_CHECK(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
    FUZZ_CHECK(::fcntl(fds[1], F_SETFL, O_NONBLOCK) == 0);
    asio::ip::tcp::socket socket(io_);
    asio::error_code ec;
    socket.assign(asio::ip::tcp::v4(), fds[0], ec);
    FUZZ_CHECK(!ec);
    clients_[conn] = Client{};
    clients_[conn].fd = fds[1];
    clients_[conn].session =
        std::make_shared<Session>(host_, std::move(socket), host_.next_conn_id());
    clients_[conn].session->start();
    run();
  }

  void hang_up(size_t conn) {
    Client& client = clients_[conn];
    if (client.hung_up) return;
    client.hung_up = true;
    ::close(client.fd);
    client.fd = -1;
    // The session sees the end of its input and closes; the server drops it.
    run();
    client.session.reset();
  }

  // Polls until nothing is left to run, reading every client's replies.
  void run() {
    for (int round = 0; round < 1000; ++round) {
      io_.restart();
      const size_t ran = io_.poll();
      bool read_any = false;
      for (Client& client : clients_) read_any = read_replies(client) || read_any;
      if (ran == 0 && !read_any) return;
    }
    FUZZ_CHECK(!"the server never went quiet");
  }

  bool read_replies(Client& client) {
    if (client.fd < 0 || client.eof) return false;
    char buffer[65536];
    bool read_any = false;
    for (;;) {
      const ssize_t got = ::recv(client.fd, buffer, sizeof buffer, 0);
      if (got == 0) {
        client.eof = true;
        break;
      }
      if (got < 0) {
        FUZZ_CHECK(errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNRESET);
        break;
      }
      FUZZ_CHECK(!client.told_close);  // nothing after the reply that closes
      client.received.append(buffer, static_cast<size_t>(got));
      read_any = true;
    }
    for (;;) {
      if (client.received.empty()) break;
      FUZZ_CHECK(!client.told_close);
      const NextRequest request = next_request(client);
      const Reply reply = parse_reply(client.received, request.wants_payload);
      if (reply.bytes == 0) break;
      client.answered_bytes += request.bytes;
      if (trace_) {
        std::fprintf(stderr, "conn %zu: %.*s", static_cast<size_t>(&client - clients_),
                     static_cast<int>(reply.bytes), client.received.data());
      }
      client.received.erase(0, reply.bytes);
      client.replies += 1;
      client.told_close = reply.closes;
    }
    return read_any;
  }

  // The request the client's next reply answers (replies come in request
  // order, one each): its bytes in `sent`, and whether it asked for payloads.
  struct NextRequest {
    size_t bytes = 0;
    bool wants_payload = false;
  };
  NextRequest next_request(const Client& client) const {
    const net::DecodeResult decoded =
        host_.decoder().decode(std::string_view(client.sent).substr(client.answered_bytes));
    NextRequest request{decoded.consumed, false};
    if (decoded.kind != net::DecodeResult::Kind::kCommand) return request;
    const net::Command& command = decoded.command;
    if (command.verb != "GET" && command.verb != "DEADLETTERS") return request;
    for (const std::string& arg : command.args) request.wants_payload |= arg == "payload=1";
    return request;
  }

  // The requests a client's bytes frame, counted up to the first one that
  // closes the connection (decode errors that keep it open count: each gets
  // an ERR reply).
  size_t requests_framed(const Client& client) const {
    std::string_view rest = client.sent;
    size_t requests = 0;
    while (!rest.empty()) {
      const net::DecodeResult decoded = host_.decoder().decode(rest);
      if (decoded.kind == net::DecodeResult::Kind::kNeedMore) break;
      requests += 1;
      if (decoded.kind == net::DecodeResult::Kind::kError && decoded.consumed == 0) break;
      rest.remove_prefix(decoded.consumed);
    }
    return requests;
  }

  void check_finished(const Client& client) {
    if (client.hung_up) return;
    FUZZ_CHECK(client.received.empty());  // no reply left half-sent
    if (client.told_close) {
      FUZZ_CHECK(client.eof);
      return;
    }
    const size_t requests = requests_framed(client);
    FUZZ_CHECK(client.replies <= requests);
    // A session that waits for nothing (no parked RESERVE, no reply queued)
    // has answered every request it framed.
    const auto far_future = std::chrono::steady_clock::now() + std::chrono::hours(1);
    if (client.session->idle_since(far_future)) FUZZ_CHECK(client.replies == requests);
  }

  // TARDE_FUZZ_TRACE=1 prints every reply, to read what an input does.
  const bool trace_ = std::getenv("TARDE_FUZZ_TRACE") != nullptr;
  asio::io_context io_;
  FuzzHost host_;
  Client clients_[kConnections];
};

// Runs the operation at data[*at]; false when the input ends inside it.
bool run_op(World& world, const uint8_t* data, size_t size, size_t* at) {
  const uint8_t op = data[(*at)++];
  const uint8_t arg = op_arg(op);
  switch (op_kind(op)) {
    case OpKind::kSend: {
      if (*at >= size) return false;
      const size_t length = std::min<size_t>(data[(*at)++], size - *at);
      world.send(arg % kConnections,
                 std::string_view(reinterpret_cast<const char*>(data) + *at, length));
      *at += length;
      return true;
    }
    case OpKind::kAdvance:
      if (*at >= size) return false;
      world.advance(int64_t{data[(*at)++]} * kAdvanceUnitsMs[arg % 4]);
      return true;
    case OpKind::kCommit:
      world.commit(arg % 2 == 1);
      return true;
    case OpKind::kClose:
      world.reconnect(arg % kConnections);
      return true;
    case OpKind::kRestart:
      world.restart();
      return true;
  }
  return true;
}

void run_input(const uint8_t* data, size_t size) {
  World world(data[0]);
  size_t at = 1;
  while (at < size && run_op(world, data, size, &at)) {
  }
  world.finish();
}

}  // namespace
}  // namespace tarde::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The session's log lines (a paused client, a closed connection) are not
  // findings; a client that hung up must not kill the fuzzer with SIGPIPE.
  spdlog::set_level(spdlog::level::off);
  std::signal(SIGPIPE, SIG_IGN);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  tarde::fuzz::run_input(data, size);
  return 0;
}
