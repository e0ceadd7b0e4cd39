#pragma once

#include <asio.hpp>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "net/server/socket_batch.h"

namespace tarde::net {

// SendQueue gathers the connections that have output during one turn of the
// io thread and sends it all at once through a SocketBatch, when the turn's
// handler is over: the replies released by a commit, or answered during a
// pass over the ready sockets, leave in one system call rather than one
// each. Outside a pass, the first output of a turn goes at once, so that the
// first worker handed a request does not wait for the rest of the turn. A
// connection is queued once however often it asks; what it holds when the
// queue is sent is what goes. io thread only.
class SendQueue {
 public:
  // A connection with output.
  class Sender {
   public:
    // The bytes to send now, which stay in place until on_sent; empty once
    // the connection is closed (on_sent then gets 0).
    virtual std::span<char> unsent() = 0;
    // What the send did: bytes sent (perhaps fewer than all), or -errno
    // (-EAGAIN when the socket took nothing).
    virtual void on_sent(int64_t result) = 0;

   protected:
    ~Sender() = default;
  };

  SendQueue(asio::io_context& io, SocketBatch& batch) : io_(io), batch_(batch) {}
  SendQueue(const SendQueue&) = delete;
  SendQueue& operator=(const SendQueue&) = delete;

  // Sends the output of `sender` (on socket `fd`): when the queue is
  // released if it is held; otherwise at once if nothing was queued since
  // the last send, else with the next send (at the latest after the current
  // handler). `sender` must not be queued already.
  void add(std::shared_ptr<Sender> sender, int fd);
  // Between hold() and release() nothing is sent; the last release() sends
  // what came meanwhile. The server holds the queue for a pass over the
  // ready sockets and its commit, which would otherwise cost a turn of the
  // scheduler (an epoll_wait) before the sends.
  void hold() { ++holds_; }
  void release();
  // Sends everything queued now.
  void send_now();
  // The same, unless the queue is held: for the end of a handler that
  // hands out requests or finishes a commit, whose replies should not wait
  // for the handlers queued behind it.
  void send_unless_held() {
    if (holds_ == 0) send_now();
  }

 private:
  struct Queued {
    std::shared_ptr<Sender> sender;
    int fd;
  };

  asio::io_context& io_;
  SocketBatch& batch_;
  std::vector<Queued> queued_;
  std::vector<Queued> sending_;  // kept between turns for its capacity
  std::vector<SocketBatch::Op> ops_;
  std::vector<size_t> op_of_;  // sending_[i]'s index in ops_, or SIZE_MAX
  int holds_ = 0;
  bool posted_ = false;
  bool sent_this_turn_ = false;  // output went at once since the last send_now
  bool sending_now_ = false;     // inside send_now, whose on_sent may queue more
};

}  // namespace tarde::net
