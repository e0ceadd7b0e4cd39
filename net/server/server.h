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
#include "engine/engine.h"
#include "engine/random.h"
#include "net/server/background_sweep.h"
#include "net/wire/codec.h"
#include "net/server/group_committer.h"
#include "net/server/server_options.h"
#include "net/server/session_host.h"
#include "base/system_clock.h"
#include "net/server/transition_log.h"
#include "storage/rocks_kv.h"
#include "storage/staged_kv.h"
#include "storage/store.h"
#include "storage/store_open.h"

namespace tarde::net {

class Session;
class HttpListener;

// Server is `tarde serve`: it opens the store, recovers, listens, and runs the
// one io thread that owns the engine. Sessions see it as their SessionHost:
// the engine, the commit sequence, parked RESERVEs. It owns the registry of
// figures that STATS and /metrics render. Created, run and destroyed on one
// thread.
class Server final : public SessionHost {
 public:
  explicit Server(ServerOptions options);
  ~Server();

  // Opens and recovers the store and binds the listeners. Errors name what
  // failed (lock held, unknown format, port in use).
  [[nodiscard]] Status open();
  // Why open() refused the data directory; kNone when it did not (or when
  // something else failed, such as the port or the token file).
  storage::OpenProblem open_problem() const { return open_problem_; }
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
  engine::Engine& engine() override { return *engine_; }
  const Decoder& decoder() const override { return decoder_; }
  const Figures& figures() const override { return figures_; }
  const std::optional<std::string>& auth_token() const override { return auth_token_; }
  bool shutting_down() const override { return shutting_down_; }
  void begin_command() override;
  uint64_t observed_seq() const override { return staged_->observed_seq(); }
  uint64_t committed_seq() const override { return staged_->committed_seq(); }
  void after_commands() override;
  void wait_for_commit(const std::shared_ptr<Session>& session) override {
    commit_waiters_[session.get()] = session;
  }
  void park(const std::shared_ptr<Session>& session, const std::string& queue) override;
  void session_closed(Session* session) override;

 private:
  std::function<void(const std::string& state)> notify_;
  void do_accept();
  void on_accept(const asio::error_code& ec, asio::ip::tcp::socket socket);
  void on_commit(uint64_t seq, const Status& status);
  void on_sweep_done(const Status& status, engine::Sweep sweep, int64_t took_ms);
  void arm_timer();
  void on_timer();
  void signal_ready(const std::string& queue);
  void serve_parked();
  void finish_shutdown_when_idle();
  void sweep_idle();
  void declare_figures();

  ServerOptions options_;
  Figures figures_;  // before everything that declares figures in it
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  asio::signal_set signals_;
  asio::steady_timer timer_;        // the engine's next timer
  asio::steady_timer grace_timer_;  // bounds a clean shutdown
  asio::steady_timer idle_timer_;   // the idle-connection sweep
  std::optional<int64_t> timer_at_ms_;
  SystemClock clock_;
  engine::SeededRandom random_;
  Decoder decoder_;
  std::optional<std::string> auth_token_;
  storage::OpenProblem open_problem_ = storage::OpenProblem::kNone;
  std::atomic<bool> store_open_{false};  // read by RocksDB's threads through the log sink

  std::unique_ptr<storage::RocksKv> durable_;
  std::unique_ptr<storage::StagedKv> staged_;
  std::unique_ptr<storage::Store> store_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<GroupCommitter> committer_;
  std::unique_ptr<BackgroundSweep> sweep_;
  std::unique_ptr<HttpListener> http_;
  TransitionLog transition_log_;

  // The server owns every open session; a closed one is released here.
  std::unordered_map<Session*, std::shared_ptr<Session>> sessions_;
  std::map<std::string, std::deque<std::weak_ptr<Session>>> parked_;
  std::unordered_map<Session*, std::weak_ptr<Session>> commit_waiters_;
  std::set<std::string> signaled_;
  bool serve_posted_ = false;
  bool timers_after_commit_ = false;  // firing paused until the next commit
  bool shutting_down_ = false;
  uint16_t port_ = 0;
  uint64_t next_session_id_ = 1;
  Counter* commands_ = nullptr;
  Counter* connections_total_ = nullptr;
  uint64_t failed_commits_in_a_row_ = 0;  // one error line per storage fault episode
  int64_t started_steady_ms_ = 0;
};

}  // namespace tarde::net
