#include "tools/crash/server_control.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <asio.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/crash_point.h"
#include "clients/cpp/client.h"

namespace tarde::crash {
namespace {

constexpr auto kStartTimeout = std::chrono::seconds(15);
constexpr auto kStopTimeout = std::chrono::seconds(10);
constexpr auto kPollInterval = std::chrono::milliseconds(2);
constexpr std::string_view kListening = "tarde listening on 127.0.0.1:";

std::string read_from(const std::string& path, size_t offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(in.tellg());
  if (offset >= size) return {};
  in.seekg(static_cast<std::streamoff>(offset));
  std::string text(size - offset, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return text;
}

size_t file_size(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  return in ? static_cast<size_t>(in.tellg()) : 0;
}

// The port of the listening line in `text`, once the whole number is there.
std::optional<uint16_t> listening_port(const std::string& text) {
  const size_t at = text.find(kListening);
  if (at == std::string::npos) return std::nullopt;
  size_t pos = at + kListening.size();
  unsigned value = 0;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    value = value * 10 + static_cast<unsigned>(text[pos] - '0');
    ++pos;
  }
  if (pos >= text.size() || value == 0 || value > 65535) return std::nullopt;
  return static_cast<uint16_t>(value);
}

// A port that was free a moment ago, from the kernel. The server binds it
// with SO_REUSEADDR, so the same port serves every restart.
uint16_t free_port() {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io);
  asio::error_code ec;
  acceptor.open(asio::ip::tcp::v4(), ec);
  if (!ec) acceptor.bind(asio::ip::tcp::endpoint(asio::ip::make_address_v4("127.0.0.1"), 0), ec);
  return ec ? 0 : acceptor.local_endpoint().port();
}

// Whether the server answers PING on `port`.
bool answers_ping(uint16_t port) {
  client::ClientOptions options;
  options.timeout = std::chrono::milliseconds(500);
  auto client = client::Client::connect("127.0.0.1", port, options);
  return client.is_ok() && client.value()->ping().is_ok();
}

Death death_of(int raw_status, bool killed) {
  Death death;
  death.raw_status = raw_status;
  death.crash_point = WIFEXITED(raw_status) && WEXITSTATUS(raw_status) == kCrashExitStatus;
  death.killed = killed && WIFSIGNALED(raw_status) && WTERMSIG(raw_status) == SIGKILL;
  return death;
}

}  // namespace

std::string Death::describe() const {
  if (WIFEXITED(raw_status)) return "exited with status " + std::to_string(WEXITSTATUS(raw_status));
  if (WIFSIGNALED(raw_status)) return "killed by signal " + std::to_string(WTERMSIG(raw_status));
  return "ended with wait status " + std::to_string(raw_status);
}

ServerControl::ServerControl(std::string server_path, std::string dump_path, std::string data_dir,
                             std::string log_path)
    : server_path_(std::move(server_path)),
      dump_path_(std::move(dump_path)),
      data_dir_(std::move(data_dir)),
      log_path_(std::move(log_path)) {}

ServerControl::~ServerControl() {
  if (pid_ > 0) kill_now();
}

Result<uint16_t> ServerControl::start(const std::optional<std::string>& crash_at) {
  if (pid_ > 0) kill_now();
  if (port_ == 0) port_ = free_port();
  if (port_ == 0) return Status::io_error("no free port on 127.0.0.1");
  std::vector<std::string> args = {server_path_,
                                   "serve",
                                   "--listen",
                                   "127.0.0.1:" + std::to_string(port_),
                                   "--data",
                                   data_dir_,
                                   "--sync",
                                   "always",
                                   "--log-level",
                                   "warn",
                                   "--retry-lead",
                                   std::to_string(kRetryLeadMs) + "ms",
                                   "--reconcile-every",
                                   std::to_string(kReconcileEveryMs) + "ms",
                                   "--due-memory",
                                   std::to_string(kDueMemoryEntries)};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  // The environment is built before fork: the child may only make
  // async-signal-safe calls, and the campaign's client threads are running.
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "TARDE_CRASH_AT=", 15) != 0) env_text.emplace_back(*e);
  }
  if (crash_at) env_text.push_back("TARDE_CRASH_AT=" + *crash_at);
  std::vector<char*> envp;
  for (std::string& entry : env_text) envp.push_back(entry.data());
  envp.push_back(nullptr);
  const size_t log_offset = file_size(log_path_);
  const int log_fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return Status::io_error("cannot open " + log_path_ + ": " + std::strerror(errno));
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(log_fd);
    return Status::io_error(std::string("fork: ") + std::strerror(errno));
  }
  if (child == 0) {
    // Only async-signal-safe calls between fork and exec.
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(log_fd);
  pid_ = child;
  last_death_.reset();
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (true) {
    // With --log-level warn the listening line is not logged; a PING tells.
    if (auto port = listening_port(read_from(log_path_, log_offset))) return *port;
    if (auto death = poll_exit()) {
      last_death_ = death;
      const std::string log = read_from(log_path_, log_offset);
      if (log.find("cannot listen") != std::string::npos) port_ = 0;  // taken: pick another
      return Status::shutting_down("the server " + death->describe() + " before listening");
    }
    if (answers_ping(port_)) return port_;
    if (std::chrono::steady_clock::now() > deadline) {
      kill_now();
      return Status::io_error("the server did not listen within 15 s");
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

std::optional<Death> ServerControl::poll_exit() {
  if (pid_ <= 0) return last_death_;
  int status = 0;
  const pid_t got = ::waitpid(pid_, &status, WNOHANG);
  if (got != pid_) return std::nullopt;
  pid_ = -1;
  last_death_ = death_of(status, false);
  return last_death_;
}

Death ServerControl::reap_blocking() {
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  return death_of(status, true);
}

Death ServerControl::kill_now() {
  if (pid_ <= 0) return last_death_.value_or(Death{});
  ::kill(pid_, SIGKILL);
  last_death_ = reap_blocking();
  return *last_death_;
}

Death ServerControl::stop() {
  if (pid_ <= 0) return last_death_.value_or(Death{});
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + kStopTimeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto death = poll_exit()) return *death;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return kill_now();
}

std::vector<std::string> ServerControl::dump_check() const {
  const std::string command = "'" + dump_path_ + "' '" + data_dir_ + "' check 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {"could not run " + dump_path_};
  std::string out;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  const int raw = ::pclose(pipe);
  const int code = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  if (code == 0) return {};
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  if (code != 1 || lines.empty()) {
    lines.insert(lines.begin(), "tarde-dump check exited with status " + std::to_string(code));
  }
  return lines;
}

std::string ServerControl::log_tail(size_t bytes) const {
  const size_t size = file_size(log_path_);
  return read_from(log_path_, size > bytes ? size - bytes : 0);
}

}  // namespace tarde::crash
