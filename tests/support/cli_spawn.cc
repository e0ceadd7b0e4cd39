#include "tests/support/cli_spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/server_process.h"

namespace tarde::testing {
namespace {

// How long a server may take to stop after SIGTERM.
constexpr auto kStopTimeout = std::chrono::seconds(5);

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

// Forks and execs `argv`, with stdin from `in_path` and stdout/stderr to the
// given files (the same file twice is fine). Returns the child's pid or -1.
pid_t spawn(const std::vector<std::string>& argv, const std::string& in_path,
            const std::string& out_path, const std::string& err_path) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const int in = open(in_path.c_str(), O_RDONLY | O_CLOEXEC);
  const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const pid_t pid = (in < 0 || out < 0 || err < 0) ? -1 : fork();
  if (pid == 0) {
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    execv(args[0], args.data());
    _exit(127);
  }
  for (int fd : {in, out, err}) {
    if (fd >= 0) close(fd);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

CliTestServer::CliTestServer(const std::vector<std::string>& extra_args)
    : log_path_(dir_.sub("server.log")) {
  std::vector<std::string> argv = {std::string(TARDE_BIN_DIR) + "/tarde",
                                   "serve",
                                   "--listen",
                                   "127.0.0.1:0",
                                   "--data",
                                   dir_.sub("data")};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  // spdlog's default logger writes to stdout: capture both streams.
  pid_ = spawn(argv, "/dev/null", log_path_, log_path_);
  if (pid_ < 0) return;
  const std::string marker = "tarde listening on 127.0.0.1:";
  const auto give_up = std::chrono::steady_clock::now() + kServerStartTimeout;
  while (std::chrono::steady_clock::now() < give_up) {
    const std::string text = read_all(log_path_);
    const size_t at = text.find(marker);
    if (at != std::string::npos) {
      port_ = static_cast<uint16_t>(std::stoi(text.substr(at + marker.size())));
      return;
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

CliTestServer::~CliTestServer() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  const auto give_up = std::chrono::steady_clock::now() + kStopTimeout;
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > give_up) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string CliTestServer::log() const { return read_all(log_path_); }

CliRun run_program(const std::string& program, const std::vector<std::string>& args,
                   const std::string& stdin_text) {
  TempDir io;
  {
    std::ofstream in(io.sub("stdin"), std::ios::binary);
    in << stdin_text;
  }
  std::vector<std::string> argv = {program};
  argv.insert(argv.end(), args.begin(), args.end());
  CliRun run;
  const pid_t pid = spawn(argv, io.sub("stdin"), io.sub("stdout"), io.sub("stderr"));
  if (pid < 0) return run;
  run.exit_code = wait_exit(pid);
  run.out = read_all(io.sub("stdout"));
  run.err = read_all(io.sub("stderr"));
  return run;
}

CliRun run_cli(uint16_t port, const std::vector<std::string>& args, const std::string& stdin_text) {
  std::vector<std::string> all = {"--port", std::to_string(port), "--timeout", "10s"};
  all.insert(all.end(), args.begin(), args.end());
  return run_program(std::string(TARDE_BIN_DIR) + "/tarde-cli", all, stdin_text);
}

}  // namespace tarde::testing
