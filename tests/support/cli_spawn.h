#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"

// Subprocess helpers for the client and tarde-cli tests: a real `tarde serve`
// on a free port with its own data directory, and one run of tarde-cli with
// its output captured. POSIX only (fork/exec); used from one test thread.
namespace tarde::testing {

// CliTestServer is a `tarde serve --listen 127.0.0.1:0` child process with a
// fresh data directory, started by the constructor and stopped (SIGTERM, then
// SIGKILL after 5 s) by the destructor. The constructor waits up to 10 s for
// the "tarde listening on" log line; when it does not come, ok() is false and
// log() tells why.
class CliTestServer {
 public:
  explicit CliTestServer(const std::vector<std::string>& extra_args = {});
  ~CliTestServer();
  CliTestServer(const CliTestServer&) = delete;
  CliTestServer& operator=(const CliTestServer&) = delete;

  bool ok() const { return port_ != 0; }
  uint16_t port() const { return port_; }
  // Everything the server wrote to stdout and stderr so far.
  std::string log() const;
  const TempDir& dir() const { return dir_; }

 private:
  TempDir dir_;
  std::string log_path_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
};

// What one run of a program printed and how it exited.
struct CliRun {
  int exit_code = -1;  // -1 when it did not exit normally
  std::string out;
  std::string err;
};

// Runs `program` with `args`, `stdin_text` on its standard input, and waits
// for it to exit.
CliRun run_program(const std::string& program, const std::vector<std::string>& args,
                   const std::string& stdin_text = "");

// Runs TARDE_BIN_DIR/tarde-cli --port <port> --timeout 10s <args...>.
CliRun run_cli(uint16_t port, const std::vector<std::string>& args,
               const std::string& stdin_text = "");

}  // namespace tarde::testing
