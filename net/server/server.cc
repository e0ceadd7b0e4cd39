#include "net/server/server.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "net/server/http_listener.h"
#include "net/server/replies.h"
#include "net/server/session.h"
#include "base/crash_point.h"
#include "storage/store_open.h"

namespace tarde::net {
namespace {

// How long a clean shutdown waits for in-flight commits and replies before
// closing connections regardless.
constexpr auto kShutdownGrace = std::chrono::seconds(5);
// How often idle connections are looked for: --idle-timeout is honoured to
// within this.
constexpr auto kIdleSweepInterval = std::chrono::seconds(1);
// Fired retries live in the overlay (memory) until their group commits. A
// burst of due retries fires faster than the disk commits, so above this
// many uncommitted keys (about 3,000 fires, a few MB) firing waits for the
// next commit: memory stays flat however many retries fall due at once.
constexpr size_t kTimerStagedKeysMax = 16384;

Result<std::string> read_token_file(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    return Status::invalid_argument("cannot read auth token file " + path);
  }
  if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return Status::invalid_argument("auth token file " + path +
                                    " is readable by others; chmod 600 it");
  }
  std::ifstream in(path);
  if (!in) return Status::invalid_argument("cannot read auth token file " + path);
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty()) return Status::invalid_argument("auth token file " + path + " is empty");
  return token;
}

}  // namespace

Server::Server(ServerOptions options)
    : options_(std::move(options)),
      acceptor_(io_),
      signals_(io_, SIGINT, SIGTERM),
      timer_(io_),
      grace_timer_(io_),
      idle_timer_(io_),
      random_(static_cast<uint64_t>(clock_.now_steady_ms()) ^ 0x7461726465ULL),
      decoder_(options_.max_payload_bytes),
      transition_log_(figures_) {
  declare_figures();
}

// The server's own figures; the committer, the engine and the transition
// log declare theirs where they count them.
void Server::declare_figures() {
  figures_.sampled({.name = "uptime_ms", .help = "Milliseconds since the server started.",
                    .stats_name = "uptime_ms"},
                   [this](FigureSamples& out) {
                     out.total(static_cast<double>(clock_.now_steady_ms() - started_steady_ms_));
                   });
  figures_.sampled({.name = "connections", .help = "Open client connections.",
                    .stats_name = "connections"},
                   [this](FigureSamples& out) { out.total(static_cast<double>(sessions_.size())); });
  connections_total_ = &figures_.counter({.name = "connections_total",
                                          .kind = FigureKind::kCounter,
                                          .help = "Client connections accepted since start.",
                                          .stats_name = "connections_total"});
  commands_ = &figures_.counter({.name = "commands_total",
                                 .kind = FigureKind::kCounter,
                                 .help = "Commands run since start.",
                                 .stats_name = "commands"});
}

void Server::begin_command() {
  commands_->add();
  staged_->reset_observed();
}

Server::~Server() {
  sweep_.reset();      // cancels a sweep in progress; it reads the store
  committer_.reset();  // finishes the commit in flight, if any
  engine_.reset();
  store_.reset();
  staged_.reset();
  if (durable_) {
    Status status = durable_->close();
    if (!status.is_ok()) spdlog::error("closing the store: {}", status.to_string());
  }
}

Status Server::open() {
  started_steady_ms_ = clock_.now_steady_ms();
  if (!options_.auth_token_file.empty()) {
    auto token = read_token_file(options_.auth_token_file);
    if (!token.is_ok()) return token.status();
    auth_token_ = token.value();
  }
  storage::RocksKv::Options kv_options;
  kv_options.sync = options_.sync;
  // Muted until the store is open: a refused start logs its one line only.
  kv_options.log_sink = [this](const std::string& line) {
    if (store_open_) spdlog::warn("rocksdb: {}", line);
  };
  storage::OpenedStore opened = storage::open_for_serving(options_.data_dir, kv_options);
  open_problem_ = opened.problem;
  if (!opened.status.is_ok()) return opened.status;
  if (!opened.warning.empty()) spdlog::warn("{}", opened.warning);
  durable_ = std::move(opened.kv);
  store_open_ = true;
  staged_ = std::make_unique<storage::StagedKv>(*durable_);
  store_ = std::make_unique<storage::Store>(*staged_);
  engine::Engine::Options engine_options;
  engine_options.retry_lead_ms = options_.retry_lead_ms;
  engine_ = std::make_unique<engine::Engine>(*store_, clock_, random_, engine_options);
  engine::RecoveryReport report;
  TARDE_RETURN_IF_ERROR(engine_->start_recovery(&report));
  committer_ = std::make_unique<GroupCommitter>(
      io_, *staged_, *durable_, figures_,
      [this](uint64_t seq, const Status& s) { on_commit(seq, s); });
  // Counting and the invariant sweep run on a snapshot in the background;
  // their repairs are committed like any other change.
  sweep_ = std::make_unique<BackgroundSweep>(
      io_, *durable_, [this](const Status& status, engine::Sweep sweep, int64_t took_ms) {
        on_sweep_done(status, std::move(sweep), took_ms);
      });
  sweep_->start();
  figures_.sampled({.name = "sweep_running",
                    .help = "1 while the background count and invariant sweep runs.",
                    .stats_name = "sweep_running"},
                   [this](FigureSamples& out) { out.total(sweep_->running() ? 1 : 0); });
  figures_.sampled({.name = "sweep_scanned",
                    .help = "Records and index entries the background sweep has visited.",
                    .stats_name = "sweep_scanned"},
                   [this](FigureSamples& out) { out.total(static_cast<double>(sweep_->scanned())); });
  engine_->declare_figures(figures_);
  spdlog::info(
      "recovered {} in {} ms: {} timers in memory; counting and checking invariants in "
      "the background",
      options_.data_dir, report.took_ms, report.due_in_memory);
  engine_->set_ready_listener([this](const std::string& queue) { signal_ready(queue); });
  engine_->set_breaker_listener([](const std::string& queue, engine::Breaker::State state) {
    if (state == engine::Breaker::State::kOpen) {
      spdlog::warn("alert: circuit breaker of queue {} opened: most answers were TRANSIENT", queue);
    } else {
      spdlog::info("circuit breaker of queue {} is {}", queue,
                   state == engine::Breaker::State::kHalfOpen ? "half-open (probing)" : "closed");
    }
  });
  engine_->set_transition_listener(
      [this](const engine::TransitionNote& note) { transition_log_.on_transition(note); });

  asio::error_code ec;
  const auto address = asio::ip::make_address(options_.listen_host, ec);
  if (ec) return Status::invalid_argument("bad listen address " + options_.listen_host);
  const asio::ip::tcp::endpoint endpoint(address, options_.listen_port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::io_error("cannot listen on " + options_.listen_host + ":" +
                            std::to_string(options_.listen_port) + ": " + ec.message());
  }
  port_ = acceptor_.local_endpoint().port();
  if (!options_.metrics_host.empty()) {
    http_ = std::make_unique<HttpListener>(io_, figures_);
    TARDE_RETURN_IF_ERROR(http_->listen(options_.metrics_host, options_.metrics_port));
  }
  return Status::ok();
}

void Server::run() {
  spdlog::info("tarde listening on {}:{} (data {}, sync={}{})", options_.listen_host, port_,
               options_.data_dir, options_.sync ? "always" : "none",
               auth_token_ ? ", AUTH required" : "");
  if (!acceptor_.local_endpoint().address().is_loopback()) {
    spdlog::warn("{} is reachable from other machines{}", options_.listen_host,
                 auth_token_ ? ""
                             : " and no --auth-token-file is set: anyone who can connect "
                               "can read and change every transaction");
  }
  if (notify_) {
    notify_("READY=1\nSTATUS=listening on " + options_.listen_host + ":" + std::to_string(port_) +
            ", data " + options_.data_dir);
  }
  signals_.async_wait([this](const asio::error_code& ec, int signal) {
    if (ec) return;
    spdlog::info("signal {}: stopping", signal);
    stop();
  });
  do_accept();
  sweep_idle();
  asio::post(io_, [this] { after_commands(); });
  io_.run();
  spdlog::info("tarde stopped");
}

void Server::do_accept() {
  acceptor_.async_accept([this](const asio::error_code& ec, asio::ip::tcp::socket socket) {
    on_accept(ec, std::move(socket));
  });
}

void Server::on_accept(const asio::error_code& ec, asio::ip::tcp::socket socket) {
  if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
  if (!ec) {
    auto session = std::make_shared<Session>(*this, std::move(socket), next_session_id_++);
    if (sessions_.size() >= options_.max_connections) {
      session->refuse(
          error_reply(ErrorCode::kOverloaded, "too many connections (--max-connections " +
                                                  std::to_string(options_.max_connections) + ")"));
    } else {
      sessions_[session.get()] = session;
      connections_total_->add();
      session->start();
    }
  } else {
    spdlog::warn("accept: {}", ec.message());
  }
  do_accept();
}

void Server::session_closed(Session* session) {
  const uint64_t conn = session->context().conn_id;
  auto it = sessions_.find(session);
  if (it != sessions_.end()) {
    // Released after this call returns: the session may be running close().
    asio::post(io_, [released = std::move(it->second)] {});
    sessions_.erase(it);
  }
  commit_waiters_.erase(session);
  Status status = engine_->connection_closed(conn);
  if (!status.is_ok())
    spdlog::error("releasing leases of a closed connection: {}", status.to_string());
  after_commands();
  if (shutting_down_) finish_shutdown_when_idle();
}

void Server::after_commands() {
  committer_->kick();
  arm_timer();
  if (shutting_down_) finish_shutdown_when_idle();
}

void Server::on_commit(uint64_t seq, const Status& status) {
  if (!status.is_ok()) {
    // The group and everything staged after it were dropped: memory goes
    // back to what the disk holds. The store retries the write path with the
    // next commit, so writes resume by themselves once the fault is gone.
    failed_commits_in_a_row_ += 1;
    if (failed_commits_in_a_row_ == 1) {
      spdlog::error(
          "storage refused a write: commit of group {} failed: {}; its commands answer ERR "
          "INTERNAL, reads go on, writes are retried with each new command",
          seq, status.to_string());
    } else {
      spdlog::debug("commit of group {} failed again: {}", seq, status.to_string());
    }
    engine::RecoveryReport report;
    Status reloaded = engine_->start_recovery(&report);
    if (!reloaded.is_ok())
      spdlog::error("reloading after a failed commit: {}", reloaded.to_string());
    // The reload restarted the counts; the sweep that completes them starts
    // once writes work again (a reopen of the store drops its snapshot).
    sweep_->stop();
  } else if (failed_commits_in_a_row_ > 0) {
    spdlog::warn("storage accepts writes again after {} failed commits", failed_commits_in_a_row_);
    failed_commits_in_a_row_ = 0;
    sweep_->start();
  }
  if (timers_after_commit_ && !shutting_down_) {
    timers_after_commit_ = false;
    asio::post(io_, [this] { on_timer(); });
  }
  auto waiters = std::move(commit_waiters_);
  commit_waiters_.clear();
  for (auto& [raw, weak] : waiters) {
    if (auto session = weak.lock()) session->on_commit(seq, status.is_ok());
  }
  if (shutting_down_) finish_shutdown_when_idle();
}

// The background sweep ended: the engine adds its counts and repairs what
// still needs it (the repairs go out with the next commit).
void Server::on_sweep_done(const Status& status, engine::Sweep sweep, int64_t took_ms) {
  if (!status.is_ok()) {
    spdlog::error("background invariant sweep failed after {} ms: {}; counts stay partial", took_ms,
                  status.to_string());
    return;
  }
  std::vector<std::string> repairs;
  Status finished = engine_->finish_recovery(sweep, &repairs);
  for (const std::string& repair : repairs) spdlog::warn("recovery: {}", repair);
  if (!finished.is_ok()) {
    spdlog::error("applying the background sweep: {}", finished.to_string());
    return;
  }
  uint64_t ready = 0;
  uint64_t dead = 0;
  for (const auto& [queue, counts] : sweep.queues) {
    ready += counts.ready;
    dead += counts.dead;
  }
  spdlog::info(
      "background sweep done in {} ms: {} entries visited, {} transactions, {} ready, {} dead "
      "letters at start, {} violations, {} repairs",
      took_ms, sweep_->scanned(), sweep.transactions, ready, dead, sweep.violations.size(),
      repairs.size());
  after_commands();
}

void Server::arm_timer() {
  if (shutting_down_) return;
  const std::optional<int64_t> next = engine_->next_timer_ms(!timers_after_commit_);
  if (!next) return;
  if (timer_at_ms_ && *timer_at_ms_ <= *next) return;  // already armed early enough
  timer_at_ms_ = *next;
  // To the microsecond: a whole-millisecond delay from a rounded-down now
  // would wake up to a millisecond late, and that is a retry's lateness.
  const int64_t delay_us = std::max<int64_t>(0, *next * 1000 - clock_.now_wall_us());
  timer_.expires_after(std::chrono::microseconds(delay_us));
  timer_.async_wait([this](const asio::error_code& ec) {
    if (ec == asio::error::operation_aborted) return;
    on_timer();
  });
}

// Firing pauses while too much is uncommitted (on_commit resumes it); the
// memory timers, wakes of waiting RESERVEs among them, run regardless.
void Server::on_timer() {
  timer_at_ms_.reset();
  if (shutting_down_) return;
  const bool fire = staged_->overlay_size() <= kTimerStagedKeysMax;
  timers_after_commit_ = !fire;
  auto more = engine_->run_timers(fire);
  TARDE_CRASH_POINT("timer.after_fire");
  if (!more.is_ok()) {
    spdlog::error("timers: {}", more.status().to_string());
  } else if (more.value()) {
    asio::post(io_, [this] { on_timer(); });  // more due: after serving connections
  }
  after_commands();
}

void Server::park(const std::shared_ptr<Session>& session, const std::string& queue) {
  auto& line = parked_[queue];
  // Drop connections that stopped waiting (timed out, answered, closed), so
  // that a queue that never gets work does not collect them forever.
  std::erase_if(line, [&](const std::weak_ptr<Session>& weak) {
    auto parked = weak.lock();
    return !parked || !parked->parked_on(queue);
  });
  line.push_back(session);
}

void Server::signal_ready(const std::string& queue) {
  if (parked_.find(queue) == parked_.end()) return;
  signaled_.insert(queue);
  if (serve_posted_) return;
  serve_posted_ = true;
  asio::post(io_, [this] { serve_parked(); });
}

// Hands ready requests to parked RESERVEs, oldest first, until a queue has
// nothing left to give.
void Server::serve_parked() {
  serve_posted_ = false;
  std::set<std::string> queues = std::move(signaled_);
  signaled_.clear();
  for (const std::string& queue : queues) {
    auto it = parked_.find(queue);
    if (it == parked_.end()) continue;
    auto& line = it->second;
    while (!line.empty()) {
      auto session = line.front().lock();
      if (!session || !session->parked_on(queue)) {
        line.pop_front();
        continue;
      }
      staged_->reset_observed();
      std::optional<std::string> got = try_reserve(session->context(), queue);
      if (!got) break;
      line.pop_front();
      session->unpark(std::move(*got), staged_->observed_seq());
    }
    if (line.empty()) parked_.erase(it);
  }
  after_commands();
}

// Closes connections that completed no command within --idle-timeout, once a
// second; a connection waiting in RESERVE, receiving replies or holding a
// lease (a dispatcher calling the external service) is not idle.
void Server::sweep_idle() {
  if (options_.idle_timeout_ms <= 0 || shutting_down_) return;
  const auto since =
      std::chrono::steady_clock::now() - std::chrono::milliseconds(options_.idle_timeout_ms);
  std::vector<std::shared_ptr<Session>> idle;
  for (auto& [raw, session] : sessions_) {
    if (session->idle_since(since) && !engine_->holds_leases(session->context().conn_id)) {
      idle.push_back(session);
    }
  }
  if (!idle.empty()) {
    spdlog::info("closing {} connections idle for over {} ms", idle.size(),
                 options_.idle_timeout_ms);
  }
  for (auto& session : idle) session->close();
  idle_timer_.expires_after(kIdleSweepInterval);
  idle_timer_.async_wait([this](const asio::error_code& ec) {
    if (!ec) sweep_idle();
  });
}

void Server::stop() {
  if (shutting_down_) return;
  shutting_down_ = true;
  if (notify_) notify_("STOPPING=1\nSTATUS=stopping: finishing commits and replies");
  idle_timer_.cancel();
  asio::error_code ignored;
  acceptor_.close(ignored);
  signals_.cancel(ignored);
  if (http_) http_->close();
  timer_.cancel();  // and arm_timer arms no more while stopping
  grace_timer_.expires_after(kShutdownGrace);
  grace_timer_.async_wait([this](const asio::error_code& ec) {
    if (ec) return;
    spdlog::warn("shutdown grace period over; closing remaining connections");
    io_.stop();
  });
  finish_shutdown_when_idle();
}

// Once nothing is staged or being committed, every reply can go: close the
// sessions (each flushes what it has) and let run() return.
void Server::finish_shutdown_when_idle() {
  if (!committer_->idle()) return;
  std::vector<std::shared_ptr<Session>> open;
  for (auto& [raw, session] : sessions_) open.push_back(session);
  for (auto& session : open) session->begin_close();
  if (sessions_.empty()) {
    asio::error_code ignored;
    grace_timer_.cancel();
    io_.stop();
  }
}

}  // namespace tarde::net
