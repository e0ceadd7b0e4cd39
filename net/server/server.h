#pragma once

#include <asio.hpp>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/figures.h"
#include "net/core/core.h"
#include "net/server/client_activity.h"
#include "net/server/send_queue.h"
#include "net/server/server_options.h"
#include "net/server/session_host.h"
#include "net/server/socket_batch.h"
#include "net/wire/codec.h"
#include "storage/store_open.h"

namespace tarde::net {

class Session;
namespace http {
class HttpServer;
}

// Server is `tarde serve`: its Core (net/core/core.h) opens the store,
// recovers and drives the engine; the Server listens, runs the one io thread
// that owns the engine, and serves connections. Sessions see it as their
// SessionHost: the engine, the commit sequence, parked RESERVEs. It owns the
// registry of figures that STATS and /metrics render. Created, run and
// destroyed on one thread.
class Server final : public SessionHost, private ReadReadiness::PassObserver {
 public:
  explicit Server(ServerOptions options);
  ~Server();

  // Opens and recovers the store and binds the listeners. Errors name what
  // failed (lock held, unknown format, port in use).
  [[nodiscard]] Status open();
  // Why open() refused the data directory; kNone when it did not (or when
  // something else failed, such as the port or the token file).
  storage::OpenProblem open_problem() const { return core_.open_problem(); }
  // Serves until SIGINT/SIGTERM (or stop()), then shuts down cleanly.
  void run();
  // Called with a service manager's state line (sd_notify's format):
  // "READY=1\nSTATUS=..." once run() has the store recovered and the
  // listeners open, "STOPPING=1\n..." when the shutdown begins. Set before run().
  void set_notifier(std::function<void(const std::string& state)> notify) {
    notify_ = std::move(notify);
  }
  // Begins a clean shutdown from the io thread.
  void stop();
  uint16_t port() const { return port_; }

  // SessionHost, for sessions (io thread only).
  engine::Engine& engine() override { return core_.engine(); }
  const Decoder& decoder() const override { return decoder_; }
  const Figures& figures() const override { return figures_; }
  const std::optional<std::string>& auth_token() const override { return auth_token_; }
  bool shutting_down() const override { return shutting_down_; }
  void begin_command(ClientActivity::Mark& activity,
                     std::chrono::steady_clock::time_point at) override;
  uint64_t observed_seq() const override { return core_.observed_seq(); }
  uint64_t hand_out_seq() const override { return core_.hand_out_seq(); }
  uint64_t committed_seq() const override { return core_.committed_seq(); }
  void after_commands() override;
  void wait_for_commit(const std::shared_ptr<Session>& session, uint64_t dep) override;
  void park(const std::shared_ptr<Session>& session, const std::string& queue) override;
  std::optional<std::string> start_backup(const std::shared_ptr<Session>& session) override;
  bool backups_enabled() const override { return !options_.backup_dir.empty(); }
  ReadReadiness& read_readiness() override { return read_readiness_; }
  SendQueue& send_queue() override { return send_queue_; }
  void session_closed(Session* session) override;

 private:
  // ReadReadiness::PassObserver: a pass's commit runs at its end.
  // The replies of the pass and of its commit leave together at its end.
  void pass_started() override {
    send_queue_.hold();
    core_.hold_commits();
  }
  void pass_ended() override {
    core_.release_commits();
    send_queue_.release();
  }

  std::function<void(const std::string& state)> notify_;
  [[nodiscard]] Status open_http();
  void do_accept();
  void on_accept(const asio::error_code& ec, asio::ip::tcp::socket socket);
  void finish_shutdown_when_idle();
  void sweep_idle();
  void declare_figures();

  ServerOptions options_;
  Figures figures_;  // before everything that declares figures in it
  asio::io_context io_;
  SocketBatch socket_batch_;      // the io thread's batched sends and receives
  SendQueue send_queue_;          // before sessions_, like read_readiness_
  ReadReadiness read_readiness_;  // before sessions_: they use it until closed
  asio::ip::tcp::acceptor acceptor_;
  asio::signal_set signals_;
  asio::steady_timer grace_timer_;  // bounds a clean shutdown
  asio::steady_timer idle_timer_;   // the idle-connection sweep
  Decoder decoder_;
  std::optional<std::string> auth_token_;
  // Connections that sent a command lately (Core::set_active_clients).
  ClientActivity activity_{std::chrono::milliseconds(10)};
  Core core_;                               // the store, the engine and what drives it
  std::unique_ptr<http::HttpServer> http_;  // after core_: it calls the Core

  // The server owns every open session; a closed one is released here.
  std::unordered_map<Session*, std::shared_ptr<Session>> sessions_;
  bool shutting_down_ = false;
  uint16_t port_ = 0;
  uint64_t next_session_id_ = 1;
  Counter* commands_ = nullptr;
  Counter* connections_total_ = nullptr;
  int64_t started_steady_ms_ = 0;
};

}  // namespace tarde::net
