// SocketBatch over real sockets, through an io_uring and through plain calls:
// both give each operation the result send(2) or recv(2) would, whatever
// the mix, the size of the batch, or the state of the socket. SendQueue
// sends a turn's first output at once and the rest at the turn's end, or
// everything at the last release of a hold, and skips a connection closed
// meanwhile.
#include "net/server/socket_batch.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "net/server/send_queue.h"

namespace tarde::testing {
namespace {

using net::SocketBatch;

// A connected pair of nonblocking stream sockets, closed at the end.
struct SocketPair {
  int ours = -1;
  int peer = -1;
  SocketPair() {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds) == 0);
    ours = fds[0];
    peer = fds[1];
  }
  ~SocketPair() {
    if (ours >= 0) ::close(ours);
    if (peer >= 0) ::close(peer);
  }
  SocketPair(const SocketPair&) = delete;
  SocketPair& operator=(const SocketPair&) = delete;
  std::string drain_peer() {
    std::string got;
    char buffer[4096];
    ssize_t n;
    while ((n = ::recv(peer, buffer, sizeof buffer, MSG_DONTWAIT)) > 0) got.append(buffer, n);
    return got;
  }
};

const std::vector<SocketBatch::Mode> kModes = {SocketBatch::Mode::kRing, SocketBatch::Mode::kPlain};

SocketBatch::Op send_op(int fd, std::string& bytes) {
  return SocketBatch::Op{.fd = fd, .send = true, .data = bytes.data(), .size = bytes.size()};
}

SocketBatch::Op recv_op(int fd, std::vector<char>& buffer) {
  return SocketBatch::Op{.fd = fd, .send = false, .data = buffer.data(), .size = buffer.size()};
}

TEST_CASE("socket_batch: sends and receives on many sockets give what send and recv give") {
  for (const SocketBatch::Mode mode : kModes) {
    SocketBatch batch(mode);
    CAPTURE(batch.uses_ring());
    if (mode == SocketBatch::Mode::kPlain) CHECK(!batch.uses_ring());
    if (mode == SocketBatch::Mode::kRing && !batch.uses_ring()) {
      MESSAGE("this kernel gives no io_uring: the ring mode runs plain calls");
    }
    // 300 sockets: more than one submission of the ring.
    std::vector<std::unique_ptr<SocketPair>> pairs;
    std::vector<std::string> replies;
    for (int i = 0; i < 300; ++i) {
      pairs.push_back(std::make_unique<SocketPair>());
      replies.push_back("OK " + std::to_string(i) + "\r\n");
    }
    std::vector<SocketBatch::Op> sends;
    for (int i = 0; i < 300; ++i) sends.push_back(send_op(pairs[i]->ours, replies[i]));
    batch.run(sends);
    for (int i = 0; i < 300; ++i) {
      CHECK(sends[i].result == static_cast<int64_t>(replies[i].size()));
      CHECK(pairs[i]->drain_peer() == replies[i]);
    }

    // Receives: input waiting, nothing waiting, the end of input.
    REQUIRE(::write(pairs[0]->peer, "PING\r\n", 6) == 6);
    REQUIRE(::shutdown(pairs[2]->peer, SHUT_WR) == 0);
    std::vector<std::vector<char>> buffers(3, std::vector<char>(64));
    std::vector<SocketBatch::Op> receives;
    for (int i = 0; i < 3; ++i) receives.push_back(recv_op(pairs[i]->ours, buffers[i]));
    batch.run(receives);
    CHECK(receives[0].result == 6);
    CHECK(std::string(buffers[0].data(), 6) == "PING\r\n");
    CHECK(receives[1].result == -EAGAIN);
    CHECK(receives[2].result == 0);
  }
}

TEST_CASE("socket_batch: a full socket, a closed peer and a bad descriptor are errors, not waits") {
  for (const SocketBatch::Mode mode : kModes) {
    SocketBatch batch(mode);
    CAPTURE(batch.uses_ring());
    SocketPair full, gone;
    // Fill `full` until it takes nothing more.
    std::string chunk(65536, 'x');
    while (::send(full.ours, chunk.data(), chunk.size(), MSG_DONTWAIT) > 0) {
    }
    ::close(gone.peer);
    gone.peer = -1;
    std::string reply = "OK\r\n";
    std::vector<char> buffer(16);
    std::vector<SocketBatch::Op> ops = {send_op(full.ours, reply), send_op(gone.ours, reply),
                                        send_op(-1, reply), recv_op(-1, buffer)};
    batch.run(ops);  // returns: nothing waits, and no SIGPIPE kills the test
    CHECK(ops[0].result == -EAGAIN);
    CHECK(ops[1].result == -EPIPE);
    CHECK(ops[2].result == -EBADF);
    CHECK(ops[3].result == -EBADF);
  }
}

TEST_CASE("socket_batch: one operation, and an empty batch") {
  for (const SocketBatch::Mode mode : kModes) {
    SocketBatch batch(mode);
    SocketPair pair;
    std::string reply = "CREATED t1\r\n";
    std::vector<SocketBatch::Op> one = {send_op(pair.ours, reply)};
    batch.run(one);
    CHECK(one[0].result == static_cast<int64_t>(reply.size()));
    CHECK(pair.drain_peer() == reply);
    std::vector<SocketBatch::Op> none;
    batch.run(none);
  }
}

// A connection of a SendQueue test: holds output, records each result, and
// may queue more output from on_sent.
struct FakeSender final : net::SendQueue::Sender, std::enable_shared_from_this<FakeSender> {
  std::string output;
  bool closed = false;
  std::vector<int64_t> results;
  std::function<void()> after_sent;
  std::span<char> unsent() override {
    if (closed) return {};
    return {output.data(), output.size()};
  }
  void on_sent(int64_t result) override {
    results.push_back(result);
    if (result > 0) output.erase(0, static_cast<size_t>(result));
    if (after_sent) after_sent();
  }
};

// A SendQueue over two socket pairs, with two connections.
struct Queued {
  asio::io_context io;
  SocketBatch batch;
  net::SendQueue queue{io, batch};
  SocketPair a, b;
  std::shared_ptr<FakeSender> first = std::make_shared<FakeSender>();
  std::shared_ptr<FakeSender> second = std::make_shared<FakeSender>();
};

TEST_CASE_FIXTURE(Queued,
                  "send_queue: the first output of a turn goes at once, the rest at its end") {
  first->output = "OK 1\r\n";
  second->output = "OK 2\r\n";
  auto third = std::make_shared<FakeSender>();
  third->output = "OK 3\r\n";
  SocketPair c;

  queue.add(first, a.ours);
  CHECK(first->results == std::vector<int64_t>{6});  // at once
  queue.add(second, b.ours);
  queue.add(third, c.ours);
  second->output += "OK 4\r\n";  // what it holds when the queue is sent is what goes
  CHECK(second->results.empty());
  io.run();  // the handler that ends the turn
  CHECK(second->results == std::vector<int64_t>{12});
  CHECK(third->results == std::vector<int64_t>{6});
  CHECK(a.drain_peer() == "OK 1\r\n");
  CHECK(b.drain_peer() == "OK 2\r\nOK 4\r\n");
  CHECK(c.drain_peer() == "OK 3\r\n");

  // After a send, the next first output goes at once again.
  first->output = "OK 5\r\n";
  queue.add(first, a.ours);
  CHECK(first->results.size() == 2);
  CHECK(a.drain_peer() == "OK 5\r\n");
  queue.send_unless_held();  // what a handler's end does: the turn is over
  second->output = "OK 6\r\n";
  queue.add(second, b.ours);
  CHECK(second->results.size() == 2);
}

TEST_CASE_FIXTURE(Queued, "send_queue: a held queue sends nothing until its last release") {
  first->output = "OK 1\r\n";
  second->output = "OK 2\r\n";
  queue.hold();
  queue.hold();
  queue.add(first, a.ours);
  queue.add(second, b.ours);
  queue.send_unless_held();
  queue.release();
  CHECK(first->results.empty());
  queue.release();  // no handler is needed for it
  CHECK(first->results == std::vector<int64_t>{6});
  CHECK(second->results == std::vector<int64_t>{6});
  CHECK(a.drain_peer() == "OK 1\r\n");
  CHECK(b.drain_peer() == "OK 2\r\n");
}

TEST_CASE_FIXTURE(
    Queued,
    "send_queue: a closed connection is skipped, and output queued while sending waits a turn") {
  std::shared_ptr<FakeSender>& closed = second;
  std::shared_ptr<FakeSender>& chatty = first;
  closed->output = "never\r\n";
  closed->closed = true;
  chatty->output = "OK 1\r\n";
  int turns = 0;
  chatty->after_sent = [&] {
    if (++turns == 1) {
      chatty->output = "OK 2\r\n";
      queue.add(chatty, a.ours);
    }
  };
  queue.hold();
  queue.add(closed, b.ours);
  queue.add(chatty, a.ours);
  queue.release();
  CHECK(closed->results == std::vector<int64_t>{0});
  CHECK(b.drain_peer().empty());
  CHECK(chatty->results == std::vector<int64_t>{6});
  io.run();
  CHECK(chatty->results == std::vector<int64_t>{6, 6});
  CHECK(a.drain_peer() == "OK 1\r\nOK 2\r\n");
}

}  // namespace
}  // namespace tarde::testing
