// sd_notify: under a Type=notify unit the server says READY=1 only once the
// store is recovered and the listener is open (a PING is answered at once),
// STOPPING=1 when a SIGTERM begins the shutdown, and nothing at all when it
// refuses to start. The test plays systemd: a unix datagram socket named by
// NOTIFY_SOCKET in the real server's environment.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/raw_client.h"
#include "tests/support/temp_dir.h"

extern char** environ;

using namespace tarde;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The socket systemd would listen on for the service's notifications.
class NotifySocket {
 public:
  explicit NotifySocket(std::string path) : path_(std::move(path)) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    REQUIRE(path_.size() < sizeof(address.sun_path));
    std::memcpy(address.sun_path, path_.c_str(), path_.size() + 1);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  }
  ~NotifySocket() { ::close(fd_); }
  const std::string& path() const { return path_; }

  // The next datagram, or "" when none comes within `timeout`.
  std::string receive(std::chrono::milliseconds timeout) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return "";
    char buffer[4096];
    const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
    return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : "";
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// `tarde serve <args>` with NOTIFY_SOCKET=socket_path, output to log_path.
pid_t spawn_server(const std::vector<std::string>& serve_args, const std::string& socket_path,
                   const std::string& log_path) {
  std::vector<std::string> args = {std::string(TARDE_BIN_DIR) + "/tarde", "serve"};
  args.insert(args.end(), serve_args.begin(), serve_args.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "NOTIFY_SOCKET=", 14) != 0) env_text.emplace_back(*e);
  }
  env_text.push_back("NOTIFY_SOCKET=" + socket_path);
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  REQUIRE(log_fd >= 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(log_fd);
  return child;
}

int wait_exit(pid_t pid) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  FAIL("the server did not exit within 10 s");
  return status;
}

uint16_t listening_port(const std::string& log) {
  constexpr std::string_view kListening = "tarde listening on 127.0.0.1:";
  const size_t at = log.find(kListening);
  if (at == std::string::npos) return 0;
  return static_cast<uint16_t>(std::stoul(log.substr(at + kListening.size())));
}

}  // namespace

TEST_CASE("READY=1 comes after recovery with the listener open; STOPPING=1 on SIGTERM") {
  testing::TempDir dir;
  NotifySocket notify(dir.sub("notify"));
  const std::string log_path = dir.sub("server.log");
  const std::vector<std::string> args = {"--listen", "127.0.0.1:0", "--data", dir.sub("data")};

  // Twice: on a new store, then on the same store with a transaction to recover.
  for (int start = 0; start < 2; ++start) {
    CAPTURE(start);
    const size_t log_offset = read_file(log_path).size();
    const pid_t pid = spawn_server(args, notify.path(), log_path);
    const std::string ready = notify.receive(std::chrono::seconds(10));
    // The moment READY arrives, recovery has been logged, the listener is
    // open and a client is answered.
    const std::string log = read_file(log_path).substr(log_offset);
    CHECK(ready.rfind("READY=1\n", 0) == 0);
    CHECK(ready.find("STATUS=listening on 127.0.0.1:") != std::string::npos);
    CHECK(log.find("recovered ") != std::string::npos);
    const uint16_t port = listening_port(log);
    REQUIRE(port != 0);
    CHECK(ready.find("127.0.0.1:" + std::to_string(port)) != std::string::npos);
    testing::RawClient client(port);
    CHECK(client.command("PING") == "PONG");
    if (start == 0) {
      CHECK(client.enqueue("q TX-1").rfind("CREATED TX-1 SENDING", 0) == 0);
    } else {
      CHECK(client.command("GET TX-1").find("state=SENDING") != std::string::npos);
    }
    CHECK(notify.receive(std::chrono::milliseconds(100)).empty());  // READY once

    ::kill(pid, SIGTERM);
    const std::string stopping = notify.receive(std::chrono::seconds(10));
    CHECK(stopping.rfind("STOPPING=1\n", 0) == 0);
    const int status = wait_exit(pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}

TEST_CASE("a server that refuses to start sends no READY") {
  testing::TempDir dir;
  NotifySocket notify(dir.sub("notify"));
  const std::string not_a_dir = dir.sub("file");
  std::ofstream(not_a_dir) << "not a data directory\n";
  const pid_t pid = spawn_server({"--listen", "127.0.0.1:0", "--data", not_a_dir}, notify.path(),
                                 dir.sub("server.log"));
  const int status = wait_exit(pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 8);
  CHECK(notify.receive(std::chrono::milliseconds(200)).empty());
}
