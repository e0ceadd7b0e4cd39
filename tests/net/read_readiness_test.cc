// ReadReadiness over real socket pairs: a registered socket is reported
// only while its reader wants input, once per arrival of input
// (edge-triggered), and a broken socket is reported even to a reader that
// wants nothing. What no arrival announces (input past a full slot, input
// before the end) is read by the next pass. Readers that take input get it
// from one batched receive per pass, through an io_uring and through plain
// calls alike.
#include "net/server/read_readiness.h"

#include <doctest/doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "net/server/socket_batch.h"

namespace tarde::testing {
namespace {

// Records each report; reads nothing, so unread input stays readable.
struct RecordingReader final : net::ReadReadiness::Reader {
  std::vector<bool> reports;  // the `broken` flag of each report
  void on_readable(bool broken) override { reports.push_back(broken); }
  int batch_read_fd() override { return -1; }
  void on_received(const char*, int64_t) override { FAIL("not batched"); }
};

// Takes its input in the pass's batched receive, and records each result.
struct BatchReader final : net::ReadReadiness::Reader {
  int fd = -1;
  std::vector<int64_t> results;
  std::string input;
  std::vector<std::string>* log = nullptr;
  void on_readable(bool broken) override {
    results.push_back(broken ? -1000 : -2000);  // not expected for a live socket
  }
  int batch_read_fd() override { return fd; }
  void on_received(const char* data, int64_t result) override {
    results.push_back(result);
    if (result > 0) input.append(data, static_cast<size_t>(result));
    if (log != nullptr) log->push_back("received");
  }
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
struct RecordingObserver final : net::ReadReadiness::PassObserver {
  std::vector<std::string>* log = nullptr;
  void pass_started() override { log->push_back("start"); }
  void pass_ended() override { log->push_back("end"); }
};

// A ReadReadiness with one socket of a pair registered, not yet wanting input.
struct Watched {
  asio::io_context io;
  net::SocketBatch batch;
  net::ReadReadiness readiness{io, batch};
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

TEST_CASE("a watched socket is reported only while its reader wants input, once per arrival") {
  Watched w;
  REQUIRE(::write(w.pair.peer, "PING\r\n", 6) == 6);

  w.run_briefly();
  CHECK(w.reader.reports.empty());  // input came, but nobody asked for it

  REQUIRE(w.readiness.want_input(w.pair.ours, &w.reader, true).is_ok());
  w.run_briefly();
  // Edge-triggered: the input is still unread, but it is reported once.
  CHECK(w.reader.reports == std::vector<bool>{false});
  REQUIRE(::write(w.pair.peer, "PING\r\n", 6) == 6);
  w.run_briefly();
  CHECK(w.reader.reports == std::vector<bool>{false, false});

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
  struct LoggingReader final : net::ReadReadiness::Reader {
    std::vector<std::string>* log = nullptr;
    void on_readable(bool) override { log->push_back("read"); }
    int batch_read_fd() override { return -1; }
    void on_received(const char*, int64_t) override {}
  } first, second;
  first.log = &log;
  second.log = &log;
  asio::io_context io;
  net::SocketBatch batch;
  net::ReadReadiness readiness(io, batch, &observer);
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
  net::SocketBatch batch;
  net::ReadReadiness readiness(io, batch);
  REQUIRE(readiness.open().is_ok());
  RecordingReader reader;
  const Status status = readiness.watch(-1, &reader);
  CHECK(!status.is_ok());
  CHECK(status.to_string().find("epoll_ctl") != std::string::npos);
}

TEST_CASE("the ready sockets of a pass are received from together, then handed to their readers") {
  for (const auto mode : {net::SocketBatch::Mode::kRing, net::SocketBatch::Mode::kPlain}) {
    CAPTURE(mode == net::SocketBatch::Mode::kRing);
    std::vector<std::string> log;
    RecordingObserver observer;
    observer.log = &log;
    asio::io_context io;
    net::SocketBatch batch(mode);
    net::ReadReadiness readiness(io, batch, &observer);
    REQUIRE(readiness.open().is_ok());
    SocketPair a, b, big;
    BatchReader first, second, third;
    first.fd = a.ours;
    second.fd = b.ours;
    third.fd = big.ours;
    first.log = second.log = third.log = &log;
    for (auto [pair, reader] : {std::pair{&a, &first}, {&b, &second}, {&big, &third}}) {
      REQUIRE(readiness.watch(pair->ours, reader).is_ok());
      REQUIRE(readiness.want_input(pair->ours, reader, true).is_ok());
    }
    REQUIRE(::write(a.peer, "ENQUEUE", 7) == 7);
    REQUIRE(::write(b.peer, "PING\r\n", 6) == 6);
    // More than a slot holds: the reader gets a full slot and reads on itself.
    const std::string large(net::ReadReadiness::kBatchReadBytes + 100, 'z');
    REQUIRE(::write(big.peer, large.data(), large.size()) == static_cast<ssize_t>(large.size()));

    io.run_one_for(std::chrono::seconds(5));
    CHECK(log == std::vector<std::string>{"start", "received", "received", "received", "end"});
    CHECK(first.results == std::vector<int64_t>{7});
    CHECK(first.input == "ENQUEUE");
    CHECK(second.input == "PING\r\n");
    CHECK(third.results == std::vector<int64_t>{int64_t{net::ReadReadiness::kBatchReadBytes}});
    CHECK(third.input == large.substr(0, net::ReadReadiness::kBatchReadBytes));

    // The end of input is a receive of 0 bytes, as recv(2) gives; a socket
    // broken both ways is reported to on_readable instead.
    REQUIRE(::shutdown(a.peer, SHUT_WR) == 0);
    b.close_peer();
    first.results.clear();
    second.results.clear();
    readiness.forget(big.ours);
    io.restart();
    io.run_one_for(std::chrono::seconds(5));
    CHECK(first.results == std::vector<int64_t>{0});
    CHECK(second.results == std::vector<int64_t>{-1000});
    readiness.forget(a.ours);
    readiness.forget(b.ours);
  }
}

// Takes one full slot and no more by itself, as if it stopped there: what
// stays in the socket has no new edge to announce it.
struct SlotReader final : net::ReadReadiness::Reader {
  int fd = -1;
  std::vector<int64_t> results;
  void on_readable(bool) override { results.push_back(-1000); }
  int batch_read_fd() override { return fd; }
  void on_received(const char*, int64_t result) override { results.push_back(result); }
};

// An opened ReadReadiness on an io_context of its own.
struct Opened {
  asio::io_context io;
  net::SocketBatch batch;
  net::ReadReadiness readiness;
  explicit Opened(net::SocketBatch::Mode mode = net::SocketBatch::Mode::kRing)
      : batch(mode), readiness(io, batch) {
    REQUIRE(readiness.open().is_ok());
  }
  // Registers `fd` for `reader`, wanting input.
  void watch_wanting(int fd, net::ReadReadiness::Reader* reader) {
    REQUIRE(readiness.watch(fd, reader).is_ok());
    REQUIRE(readiness.want_input(fd, reader, true).is_ok());
  }
  // Runs what is ready, and what that queues, for `ms` milliseconds.
  void run_for(int ms) {
    io.restart();
    io.run_for(std::chrono::milliseconds(ms));
  }
};

TEST_CASE("input a pass leaves in a socket is served by the next pass, with no new input") {
  for (const auto mode : {net::SocketBatch::Mode::kRing, net::SocketBatch::Mode::kPlain}) {
    CAPTURE(mode == net::SocketBatch::Mode::kRing);
    Opened o(mode);
    SocketPair pair;
    SlotReader reader;
    reader.fd = pair.ours;
    o.watch_wanting(pair.ours, &reader);
    o.run_for(20);  // the pass for wanting input finds nothing
    REQUIRE(reader.results.empty());
    const std::string large(net::ReadReadiness::kBatchReadBytes + 100, 'z');
    REQUIRE(::write(pair.peer, large.data(), large.size()) == static_cast<ssize_t>(large.size()));

    o.run_for(100);
    CHECK(reader.results ==
          std::vector<int64_t>{int64_t{net::ReadReadiness::kBatchReadBytes}, 100});
    o.readiness.forget(pair.ours);
  }
}

// Takes its input in the pass's receive and stops wanting more.
struct PausingReader final : net::ReadReadiness::Reader {
  net::ReadReadiness* readiness = nullptr;
  int fd = -1;
  std::string input;
  void on_readable(bool) override { input += "<reported>"; }
  int batch_read_fd() override { return fd; }
  void on_received(const char* data, int64_t result) override {
    if (result > 0) input.append(data, static_cast<size_t>(result));
    REQUIRE(readiness->want_input(fd, this, false).is_ok());
  }
};

TEST_CASE("more ready sockets than a pass serves are all served, with no new input") {
  Opened o;
  constexpr int kSockets = 300;  // a pass serves 256
  std::vector<SocketPair> pairs(kSockets);
  std::vector<BatchReader> readers(kSockets);
  for (int i = 0; i < kSockets; ++i) {
    readers[i].fd = pairs[i].ours;
    o.watch_wanting(pairs[i].ours, &readers[i]);
  }
  o.run_for(20);  // the pass for wanting input finds nothing
  for (auto& pair : pairs) REQUIRE(::write(pair.peer, "x", 1) == 1);

  o.run_for(200);
  int served = 0;
  for (const auto& reader : readers) served += reader.input == "x" ? 1 : 0;
  CHECK(served == kSockets);
  for (auto& pair : pairs) o.readiness.forget(pair.ours);
}

TEST_CASE("input that came while its reader wanted none is served once it wants it") {
  Opened o;
  SocketPair pair;
  PausingReader reader;
  reader.readiness = &o.readiness;
  reader.fd = pair.ours;
  o.watch_wanting(pair.ours, &reader);
  REQUIRE(::write(pair.peer, "ENQUEUE", 7) == 7);
  o.run_for(50);
  REQUIRE(reader.input == "ENQUEUE");

  // More comes while the reader wants none: the set does not list the
  // socket for it. Wanting input again lists it (the registration's change
  // finds the input) but may bring no edge of the set, and the input is
  // served all the same.
  REQUIRE(::write(pair.peer, " q", 2) == 2);
  REQUIRE(o.readiness.want_input(pair.ours, &reader, true).is_ok());
  o.run_for(50);
  CHECK(reader.input == "ENQUEUE q");
  o.readiness.forget(pair.ours);
}

TEST_CASE("a socket that gets input while the set is waited on is served at once") {
  Watched w;
  REQUIRE(w.readiness.want_input(w.pair.ours, &w.reader, true).is_ok());
  w.run_briefly();  // nothing yet: the set is waited on
  REQUIRE(w.reader.reports.empty());
  std::thread writer([&w] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    REQUIRE(::write(w.pair.peer, "x", 1) == 1);
  });
  w.io.restart();
  w.io.run_one_for(std::chrono::seconds(5));
  writer.join();
  CHECK(!w.reader.reports.empty());
  w.readiness.forget(w.pair.ours);
}

// Takes each pass's receive, records it, and keeps what came, in order.
struct KeepingReader final : net::ReadReadiness::Reader {
  int fd = -1;
  std::vector<int64_t> results;
  std::string input;
  int reports = 0;
  void on_readable(bool) override { ++reports; }
  int batch_read_fd() override { return fd; }
  void on_received(const char* data, int64_t result) override {
    results.push_back(result);
    if (result > 0) input.append(data, static_cast<size_t>(result));
  }
};

// One socket of a pair watched by a KeepingReader that wants input, after
// the pass for wanting it (which finds nothing).
struct Kept {
  Opened o;
  SocketPair pair;
  KeepingReader reader;
  explicit Kept(net::SocketBatch::Mode mode = net::SocketBatch::Mode::kRing) : o(mode) {
    reader.fd = pair.ours;
    o.watch_wanting(pair.ours, &reader);
    o.run_for(20);
    REQUIRE(reader.results.empty());
  }
  ~Kept() { o.readiness.forget(pair.ours); }
  void send(const std::string& bytes) {
    REQUIRE(::write(pair.peer, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  }
  // Runs the one pass of the edge that input made.
  void run_one_pass() {
    o.io.restart();
    REQUIRE(o.io.run_one_for(std::chrono::seconds(5)) == 1);
  }
};

const std::string kMoreThanASlot(net::ReadReadiness::kBatchReadBytes + 100, 'z');
constexpr int64_t kSlot = net::ReadReadiness::kBatchReadBytes;

TEST_CASE("a reader carried over that gets new input too is received from once, in order") {
  for (const auto mode : {net::SocketBatch::Mode::kRing, net::SocketBatch::Mode::kPlain}) {
    CAPTURE(mode == net::SocketBatch::Mode::kRing);
    Kept k(mode);
    k.send(kMoreThanASlot);
    k.run_one_pass();
    REQUIRE(k.reader.results == std::vector<int64_t>{kSlot});

    // The next pass finds the socket both carried over and listed anew.
    k.send("abc");
    k.o.run_for(100);
    CHECK(k.reader.results == std::vector<int64_t>{kSlot, 103});
    CHECK(k.reader.input == kMoreThanASlot + "abc");
  }
}

TEST_CASE("a forgotten reader is not carried over to the next pass") {
  Kept k;
  k.send(kMoreThanASlot);
  k.run_one_pass();
  REQUIRE(k.reader.results.size() == 1);

  k.o.readiness.forget(k.pair.ours);
  k.o.run_for(50);
  CHECK(k.reader.results.size() == 1);
  CHECK(k.reader.reports == 0);
}

TEST_CASE("input before the end of a socket's input is read to the end, with no new edge") {
  for (const auto mode : {net::SocketBatch::Mode::kRing, net::SocketBatch::Mode::kPlain}) {
    CAPTURE(mode == net::SocketBatch::Mode::kRing);
    Kept k(mode);
    // The input and its end come before the set is looked at: one edge.
    k.send("QUIT\r\n");
    REQUIRE(::shutdown(k.pair.peer, SHUT_WR) == 0);

    k.o.run_for(100);
    CHECK(k.reader.input == "QUIT\r\n");
    CHECK(k.reader.results == std::vector<int64_t>{6, 0});
  }
}

TEST_CASE("a broken socket's reader that stays reading is read to the end by the next passes") {
  Kept k;  // its reader reads nothing when told the socket broke
  k.send(kMoreThanASlot);
  k.pair.close_peer();

  k.o.run_for(100);
  CHECK(k.reader.reports == 1);
  CHECK(k.reader.results == std::vector<int64_t>{kSlot, 100, 0});
  CHECK(k.reader.input == kMoreThanASlot);
}

}  // namespace
}  // namespace tarde::testing
