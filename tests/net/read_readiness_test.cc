// ReadReadiness over a real socket pair: a registered socket is reported
// only while its reader wants input, reported again while input stays
// unread (level-triggered), and a broken socket is reported even to a
// reader that wants nothing.
#include "net/server/read_readiness.h"

#include <doctest/doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

namespace tarde::testing {
namespace {

// Records each report; reads nothing, so unread input stays readable.
struct RecordingReader : net::ReadReadiness::Reader {
  std::vector<bool> reports;  // the `broken` flag of each report
  void on_readable(bool broken) override { reports.push_back(broken); }
};

// A connected pair of stream sockets, closed at the end of the test.
struct SocketPair {
  int ours = -1;
  int peer = -1;
  SocketPair() {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
    ours = fds[0];
    peer = fds[1];
  }
  ~SocketPair() {
    if (ours >= 0) ::close(ours);
    if (peer >= 0) ::close(peer);
  }
  void close_peer() {
    ::close(peer);
    peer = -1;
  }
};

// Records the start and end of each pass, and the reports in between.
struct RecordingObserver : net::ReadReadiness::PassObserver {
  std::vector<std::string>* log = nullptr;
  void pass_started() override { log->push_back("start"); }
  void pass_ended() override { log->push_back("end"); }
};

// A ReadReadiness with one socket of a pair registered, not yet wanting input.
struct Watched {
  asio::io_context io;
  net::ReadReadiness readiness{io};
  SocketPair pair;
  RecordingReader reader;
  Watched() {
    REQUIRE(readiness.open().is_ok());
    REQUIRE(readiness.watch(pair.ours, &reader).is_ok());
  }
  // Runs the handlers that are ready now, and those they queue, for a short while.
  void run_briefly() {
    io.restart();
    io.run_for(std::chrono::milliseconds(50));
  }
};

TEST_CASE(
    "a watched socket is reported only while its reader wants input, as long as input waits") {
  Watched w;
  REQUIRE(::write(w.pair.peer, "PING\r\n", 6) == 6);

  w.run_briefly();
  CHECK(w.reader.reports.empty());  // input came, but nobody asked for it

  REQUIRE(w.readiness.want_input(w.pair.ours, &w.reader, true).is_ok());
  w.run_briefly();
  REQUIRE(!w.reader.reports.empty());
  CHECK(w.reader.reports.front() == false);
  // Level-triggered: the input is still unread, so every pass reports it.
  CHECK(w.reader.reports.size() >= 2);

  REQUIRE(w.readiness.want_input(w.pair.ours, &w.reader, false).is_ok());
  w.reader.reports.clear();
  w.run_briefly();
  CHECK(w.reader.reports.empty());

  w.readiness.forget(w.pair.ours);
  CHECK(!w.readiness.want_input(w.pair.ours, &w.reader, true).is_ok());  // not watched now
  w.run_briefly();
  CHECK(w.reader.reports.empty());
}

TEST_CASE("a broken socket is reported even when its reader wants no input") {
  Watched w;
  w.pair.close_peer();

  w.run_briefly();
  REQUIRE(!w.reader.reports.empty());
  CHECK(w.reader.reports.front() == true);
}

TEST_CASE("each pass over the ready sockets is framed by the observer's start and end") {
  std::vector<std::string> log;
  RecordingObserver observer;
  observer.log = &log;
  // Logs each report between the observer's calls.
  struct LoggingReader : net::ReadReadiness::Reader {
    std::vector<std::string>* log = nullptr;
    void on_readable(bool) override { log->push_back("read"); }
  } first, second;
  first.log = &log;
  second.log = &log;
  asio::io_context io;
  net::ReadReadiness readiness(io, &observer);
  REQUIRE(readiness.open().is_ok());
  SocketPair a, b;
  REQUIRE(readiness.watch(a.ours, &first).is_ok());
  REQUIRE(readiness.watch(b.ours, &second).is_ok());
  REQUIRE(readiness.want_input(a.ours, &first, true).is_ok());
  REQUIRE(readiness.want_input(b.ours, &second, true).is_ok());
  REQUIRE(::write(a.peer, "x", 1) == 1);
  REQUIRE(::write(b.peer, "y", 1) == 1);

  // One pass: both sockets are ready at once, so they share it.
  io.run_one_for(std::chrono::seconds(5));
  CHECK(log == std::vector<std::string>{"start", "read", "read", "end"});
  readiness.forget(a.ours);
  readiness.forget(b.ours);
}

TEST_CASE("registering a descriptor that is not a socket fails with a clear error") {
  asio::io_context io;
  net::ReadReadiness readiness(io);
  REQUIRE(readiness.open().is_ok());
  RecordingReader reader;
  const Status status = readiness.watch(-1, &reader);
  CHECK(!status.is_ok());
  CHECK(status.to_string().find("epoll_ctl") != std::string::npos);
}

}  // namespace
}  // namespace tarde::testing
