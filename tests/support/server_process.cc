#include "tests/support/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace tarde::testing {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(5);
constexpr std::string_view kListening = "tarde listening on 127.0.0.1:";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

ServerProcess::ServerProcess(std::vector<std::string> extra_args)
    : data_dir_(dir_.sub("data")),
      log_path_(dir_.sub("server.log")),
      extra_args_(std::move(extra_args)) {
  start();
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
}

void ServerProcess::start() {
  const std::string binary = std::string(TARDE_BIN_DIR) + "/tarde";
  std::vector<std::string> args = {binary, "serve", "--listen", "127.0.0.1:0", "--data", data_dir_};
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  // What this start logs begins here: earlier starts' lines stay in the file.
  const size_t log_offset = read_file(log_path_).size();
  const int log_fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0)
    throw std::runtime_error("cannot open " + log_path_ + ": " + std::strerror(errno));

  const pid_t child = ::fork();
  if (child < 0) {
    ::close(log_fd);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (child == 0) {
    // Only async-signal-safe calls between fork and exec.
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log_fd);
  pid_ = child;
  port_ = 0;

  const auto deadline = std::chrono::steady_clock::now() + kServerStartTimeout;
  while (true) {
    const std::string text = read_file(log_path_).substr(log_offset);
    const size_t at = text.find(kListening);
    if (at != std::string::npos) {
      size_t pos = at + kListening.size();
      unsigned value = 0;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        value = value * 10 + static_cast<unsigned>(text[pos] - '0');
        ++pos;
      }
      if (pos < text.size() && value > 0 && value <= 65535) {  // the whole number is there
        port_ = static_cast<uint16_t>(value);
        return;
      }
    }
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("tarde serve exited (status " + std::to_string(status) +
                               ") before listening; log:\n" + log());
    }
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("tarde serve did not log its listening line within 10 s; log:\n" +
                               log());
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

void ServerProcess::kill(int signal) {
  if (pid_ <= 0) throw std::runtime_error("kill: the server is not running");
  ::kill(pid_, signal);
}

int ServerProcess::wait_exit(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) throw std::runtime_error("wait_exit: the server is not running");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int status = 0;
    const pid_t got = ::waitpid(pid_, &status, WNOHANG);
    if (got == pid_) {
      pid_ = -1;
      return status;
    }
    if (got < 0 && errno != EINTR) {
      throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("the server did not exit within " + std::to_string(timeout.count()) +
                               " ms; log:\n" + log());
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

void ServerProcess::restart() {
  if (pid_ > 0) {
    kill(SIGKILL);
    wait_exit();
  }
  start();
}

std::string ServerProcess::log() const { return read_file(log_path_); }

}  // namespace tarde::testing
