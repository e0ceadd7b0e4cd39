#include "net/server/server.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "base/crash_point.h"
#include "base/log_record.h"
#include "engine/due_timers.h"
#include "net/http/http_server.h"
#include "net/server/process_figures.h"
#include "net/server/replies.h"
#include "net/server/session.h"
#include "storage/store_open.h"

namespace tarde::net {

// --due-memory's default is the engine's own.
static_assert(kDefaultDueMemoryEntries == engine::DueTimers::Options{}.memory_limit);

namespace {

// How long a clean shutdown waits for in-flight commits and replies before
// closing connections regardless.
constexpr auto kShutdownGrace = std::chrono::seconds(5);
// How often idle connections are looked for: --idle-timeout is honoured to
// within this.
constexpr auto kIdleSweepInterval = std::chrono::seconds(1);

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
      send_queue_(io_, socket_batch_),
      read_readiness_(io_, socket_batch_, this),
      acceptor_(io_),
      signals_(io_, SIGINT, SIGTERM),
      grace_timer_(io_),
      idle_timer_(io_),
      decoder_(options_.max_payload_bytes),
      core_(io_, figures_) {
  declare_figures();
  if (options_.commit_wait) {
    core_.set_active_clients([this] { return activity_.active(std::chrono::steady_clock::now()); });
  }
  core_.set_after_commands_hook([this] {
    // The Core's handlers (firing, hand-outs to parked RESERVEs, a commit's
    // end) end here: their replies leave now, not behind the next firing.
    send_queue_.send_unless_held();
    if (shutting_down_) finish_shutdown_when_idle();
  });
}

// The server's own figures; the committer, the engine and the transition
// log declare theirs where they count them.
void Server::declare_figures() {
  figures_.sampled(
      {.name = "uptime_seconds",
       .help = "Seconds since the server started.",
       .stats_name = "uptime_ms",
       .metrics_divisor = 1000},
      [this](FigureSamples& out) {
        out.total(static_cast<double>(core_.clock().now_steady_ms() - started_steady_ms_));
      });
  figures_.sampled(
      {.name = "connections", .help = "Open client connections.", .stats_name = "connections"},
      [this](FigureSamples& out) { out.total(static_cast<double>(sessions_.size())); });
  connections_total_ = &figures_.counter({.name = "connections_total",
                                          .kind = FigureKind::kCounter,
                                          .help = "Client connections accepted since start.",
                                          .stats_name = "connections_total"});
  commands_ = &figures_.counter({.name = "commands_total",
                                 .kind = FigureKind::kCounter,
                                 .help = "Commands run since start.",
                                 .stats_name = "commands"});
  declare_process_figures(figures_);
}

void Server::begin_command(ClientActivity::Mark& activity,
                           std::chrono::steady_clock::time_point at) {
  commands_->add();
  activity_.note(activity, at);
  core_.reset_observed();
}

Server::~Server() = default;

void Server::wait_for_commit(const std::shared_ptr<Session>& session, uint64_t dep) {
  core_.wait_for_commit(session, dep);
}

Status Server::open() {
  started_steady_ms_ = core_.clock().now_steady_ms();
  if (!options_.auth_token_file.empty()) {
    auto token = read_token_file(options_.auth_token_file);
    if (!token.is_ok()) return token.status();
    auth_token_ = token.value();
  }
  TARDE_RETURN_IF_ERROR(core_.open(
      CoreOptions{.data_dir = options_.data_dir,
                  .sync = options_.sync,
                  .retry_lead_ms = options_.retry_lead_ms,
                  .backup_dir = options_.backup_dir,
                  .backup_rate_limit_bytes_per_s = options_.backup_rate_limit_bytes_per_s,
                  .reconcile_every_ms = options_.reconcile_every_ms,
                  .due_memory_entries = options_.due_memory_entries,
                  .profile_writes = options_.profile_writes,
                  .background_yields = true}));

  TARDE_RETURN_IF_ERROR(read_readiness_.open());
  if (socket_batch_.uses_ring()) {
    spdlog::info(LogRecord("io.batched")
                     .text("msg", "connections are read and written in batches through io_uring")
                     .line());
  } else {
    spdlog::info(
        LogRecord("io.unbatched")
            .text("error", std::strerror(socket_batch_.ring_error()))
            .text("msg", "no io_uring: one system call per read and per write of a connection")
            .line());
  }
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
  return open_http();
}

// The HTTP listener; at its default address a port in use is only a warning.
Status Server::open_http() {
  if (options_.http_host.empty()) return Status::ok();
  http_ = std::make_unique<http::HttpServer>(io_, core_, figures_, auth_token_);
  Status status = http_->listen(options_.http_host, options_.http_port);
  if (status.is_ok() || options_.http_explicit) return status;
  spdlog::warn(
      LogRecord("http.unavailable")
          .text("error", status.message())
          .text("msg", "serving without HTTP (set --http-listen to choose another address)")
          .line());
  http_.reset();
  return Status::ok();
}

void Server::run() {
  // Scripts and tests wait for "tarde listening on HOST:PORT" in msg.
  spdlog::info(
      LogRecord("listening")
          .text("msg", "tarde listening on " + options_.listen_host + ":" + std::to_string(port_))
          .text("host", options_.listen_host)
          .number("port", port_)
          .text("data", options_.data_dir)
          .text("sync", options_.sync ? "always" : "none")
          .number("auth", auth_token_ ? 1 : 0)
          .line());
  if (!acceptor_.local_endpoint().address().is_loopback()) {
    spdlog::warn(LogRecord("exposed")
                     .text("host", options_.listen_host)
                     .text("msg", options_.listen_host + " is reachable from other machines" +
                                      (auth_token_ ? ""
                                                   : " and no --auth-token-file is set: anyone "
                                                     "who can connect can read and change "
                                                     "every transaction"))
                     .line());
  }
  if (http_) {
    spdlog::info(LogRecord("http.listening")
                     .text("msg", "dashboard and HTTP API on http://" + options_.http_host + ":" +
                                      std::to_string(http_->port()) + "/")
                     .text("host", options_.http_host)
                     .number("port", http_->port())
                     .line());
    if (http_->reachable_from_outside() && !auth_token_) {
      spdlog::warn(LogRecord("http.exposed")
                       .text("host", options_.http_host)
                       .text("msg",
                             "the HTTP API is reachable from other machines and no "
                             "--auth-token-file is set")
                       .line());
    }
  }
  if (notify_) {
    notify_("READY=1\nSTATUS=listening on " + options_.listen_host + ":" + std::to_string(port_) +
            ", data " + options_.data_dir);
  }
  signals_.async_wait([this](const asio::error_code& ec, int signal) {
    if (ec) return;
    spdlog::info(LogRecord("stopping").number("signal", signal).line());
    stop();
  });
  do_accept();
  sweep_idle();
  asio::post(io_, [this] { after_commands(); });
  io_.run();
  spdlog::info(LogRecord("stopped").text("msg", "tarde stopped").line());
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
    spdlog::warn(LogRecord("accept.failed").text("error", ec.message()).line());
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
  core_.forget_commit_waiter(session);
  activity_.forget(session->activity());
  Status status = core_.engine().connection_closed(conn);
  if (!status.is_ok()) {
    spdlog::error(LogRecord("release_leases.failed")
                      .number("conn", conn)
                      .text("error", status.to_string())
                      .line());
  }
  after_commands();
  if (shutting_down_) finish_shutdown_when_idle();
}

void Server::after_commands() { core_.after_commands(); }

void Server::park(const std::shared_ptr<Session>& session, const std::string& queue) {
  core_.park(session, queue);
}

std::optional<std::string> Server::start_backup(const std::shared_ptr<Session>& session) {
  const uint64_t conn = session->context().conn_id;
  std::weak_ptr<Session> weak = session;
  Status started = core_.start_backup([weak, conn](const Result<storage::BackupReport>& made) {
    if (made.is_ok()) {
      const storage::BackupReport& report = made.value();
      spdlog::info(LogRecord("backup.made")
                       .number("id", report.id)
                       .number("conn", conn)
                       .number("bytes", report.size_bytes)
                       .number("files", report.files)
                       .number("took_ms", report.took_ms)
                       .line());
    } else {
      spdlog::error(LogRecord("backup.failed")
                        .number("conn", conn)
                        .text("error", made.status().to_string())
                        .line());
    }
    if (auto waiting = weak.lock()) waiting->unpark(backup_reply(made), 0);
  });
  if (!started.is_ok()) return backup_reply(started);
  spdlog::info(LogRecord("backup.started").number("conn", conn).line());
  return std::nullopt;
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
    if (session->idle_since(since) && !core_.engine().holds_leases(session->context().conn_id)) {
      idle.push_back(session);
    }
  }
  if (!idle.empty()) {
    spdlog::info(LogRecord("idle_close")
                     .number("connections", idle.size())
                     .number("idle_timeout_ms", options_.idle_timeout_ms)
                     .line());
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
  core_.stop_timers();
  grace_timer_.expires_after(kShutdownGrace);
  grace_timer_.async_wait([this](const asio::error_code& ec) {
    if (ec) return;
    spdlog::warn(
        LogRecord("shutdown.grace_over").text("msg", "closing remaining connections").line());
    io_.stop();
  });
  finish_shutdown_when_idle();
}

// Once nothing is staged or being committed, every reply can go: close the
// sessions (each flushes what it has) and let run() return.
void Server::finish_shutdown_when_idle() {
  if (!core_.idle()) return;
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
