#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"

namespace tarde::testing {

// How long a started `tarde serve` may take to log its listening line.
inline constexpr auto kServerStartTimeout = std::chrono::seconds(10);

// ServerProcess runs the real `tarde serve` binary (TARDE_BIN_DIR "/tarde")
// for protocol tests: on 127.0.0.1 with a free port, on a data directory in
// its own TempDir, with stdout and stderr appended to a log file next to it.
// The constructor returns once the server logged its listening line (or
// throws std::runtime_error with the log text). The destructor kills the
// server with SIGKILL and reaps it.
class ServerProcess {
 public:
  // `extra_args` follow `serve --listen 127.0.0.1:0 --data <dir>`.
  explicit ServerProcess(std::vector<std::string> extra_args = {});
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // The port the running server listens on.
  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  const std::string& data_dir() const { return data_dir_; }
  // The temp dir that holds the data dir and the log; tests may put files there.
  const TempDir& dir() const { return dir_; }

  // Sends `signal` (SIGKILL, SIGTERM, ...) to the server.
  void kill(int signal);
  // Waits (at most `timeout`) for the server to exit and reaps it; returns the
  // raw wait status (use WIFEXITED/WEXITSTATUS/WIFSIGNALED). Throws on timeout.
  int wait_exit(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Starts the server again on the same data dir (a new port is fine). If it
  // is still running it is killed with SIGKILL first.
  void restart();
  // Everything the server processes wrote so far, across restarts.
  std::string log() const;

 private:
  void start();

  TempDir dir_;
  std::string data_dir_;
  std::string log_path_;
  std::vector<std::string> extra_args_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
};

}  // namespace tarde::testing
