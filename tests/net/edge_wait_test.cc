// EdgeWait over a real eventfd in Asio's reactor: the client looks when an
// edge comes and is called only when it found input; an edge that finds
// nothing leaves the wait pending; a second wait() while one is pending adds
// nothing; a pending wait dropped by forget() calls nobody.
#include "net/server/edge_wait.h"

#include <doctest/doctest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <memory>

namespace tarde::testing {
namespace {

// Counts looks and inputs; finds input while `has_input` says so.
struct CountingClient final : net::EdgeWait::Client {
  int looks = 0;
  int inputs = 0;
  bool has_input = true;
  bool look() override {
    ++looks;
    return has_input;
  }
  void on_input() override { ++inputs; }
};

// An eventfd, which becomes readable (an edge) at each write.
struct EventFd {
  int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  EventFd() { REQUIRE(fd >= 0); }
  ~EventFd() { ::close(fd); }
  void signal() const {
    const uint64_t one = 1;
    REQUIRE(::write(fd, &one, sizeof one) == static_cast<ssize_t>(sizeof one));
  }
};

// An io_context, a client and its eventfd; waits made here watch the eventfd.
struct Rig {
  asio::io_context io;
  CountingClient client;
  EventFd event;
  std::unique_ptr<net::EdgeWait> watching() {
    auto wait = std::make_unique<net::EdgeWait>(io, client);
    REQUIRE(wait->watch(event.fd).is_ok());
    return wait;
  }
  // Signals the eventfd (unless told not to) and runs what is ready.
  void run_briefly(bool signal = true) {
    if (signal) event.signal();
    io.restart();
    io.run_for(std::chrono::milliseconds(50));
  }
};

TEST_CASE("an edge makes the client look, and it is told of input only when it found some") {
  Rig rig;
  auto wait = rig.watching();
  wait->wait();
  CHECK(rig.client.looks == 0);  // arming looks at nothing
  rig.run_briefly(/*signal=*/false);
  CHECK(rig.client.looks == 0);  // no edge yet

  rig.client.has_input = false;
  rig.run_briefly();
  CHECK(rig.client.looks == 1);
  CHECK(rig.client.inputs == 0);  // nothing found: still waiting

  rig.client.has_input = true;
  rig.run_briefly();
  CHECK(rig.client.looks == 2);
  CHECK(rig.client.inputs == 1);

  rig.run_briefly();  // the wait is over: an edge now is nobody's
  CHECK(rig.client.looks == 2);
  CHECK(rig.client.inputs == 1);
}

TEST_CASE("a second wait while one is pending adds nothing") {
  Rig rig;
  auto wait = rig.watching();
  wait->wait();
  wait->wait();
  rig.run_briefly();
  CHECK(rig.client.inputs == 1);
}

TEST_CASE("a pending wait that is forgotten calls nobody, and the EdgeWait can go") {
  Rig rig;
  auto wait = rig.watching();
  wait->wait();
  wait->forget();
  wait->forget();  // once is enough
  rig.run_briefly();
  CHECK(rig.client.looks == 0);
  wait->wait();  // forgotten: waits for nothing
  rig.run_briefly();
  CHECK(rig.client.looks == 0);

  wait = rig.watching();
  wait->wait();
  wait.reset();  // destroyed with a wait pending
  rig.run_briefly();
  CHECK(rig.client.looks == 0);
}

TEST_CASE("watching a descriptor that is not open fails with a clear error") {
  asio::io_context io;
  CountingClient client;
  net::EdgeWait wait(io, client);
  const Status status = wait.watch(-1);
  CHECK(!status.is_ok());
  CHECK(status.to_string().find("reactor") != std::string::npos);
}

}  // namespace
}  // namespace tarde::testing
