#pragma once

#include <asio.hpp>

#include "base/status.h"

namespace tarde::net {

// EdgeWait waits, in Asio's reactor, for input on a descriptor that the
// reactor watches edge-triggered, and is armed again without a system call.
//
// Asio's own wait for readability (`async_wait`) re-arms the descriptor's
// registration with an epoll_ctl each time, so that input already there is
// seen: the io thread paid that call on every pass over its sockets, about
// 3 µs on our virtual machines, and at 16 connections a pass serves fewer
// than two commands. Here the client looks for input itself, in the reactor,
// when an edge comes (ReadReadiness: an epoll_wait of its set, which it
// needs anyway), so an edge that finds nothing costs nothing more and the
// wait is armed again as it was. The price is the client's: input that was
// already there when it armed, with no new edge since, must be looked for
// by the client (ReadReadiness posts a pass when one may have left input
// behind). Built on Asio's reactor interface (`asio::detail`), as Asio's own
// I/O objects are; Debian's Asio is the one it is built and tested with.
// io thread only.
class EdgeWait {
 public:
  // What the wait is for.
  class Client {
   public:
    // In the reactor, when the descriptor had an edge: looks for input
    // without blocking; true when there is some (on_input then follows).
    virtual bool look() = 0;
    // A handler of the io thread, after look() found input.
    virtual void on_input() = 0;

   protected:
    ~Client() = default;
  };

  EdgeWait(asio::io_context& io, Client& client);
  // Stops watching (forget()).
  ~EdgeWait();
  EdgeWait(const EdgeWait&) = delete;
  EdgeWait& operator=(const EdgeWait&) = delete;

  // Registers `fd` (readable when the client has input) with the reactor.
  // Once, before wait(); `fd` stays open until the EdgeWait is destroyed.
  [[nodiscard]] Status watch(int fd);
  // Waits for the next edge; nothing more while a wait is pending, or once
  // forgotten.
  void wait();
  // Stops watching, before the descriptor is closed; a pending wait ends
  // without calling the client. Once is enough; later calls do nothing.
  void forget();

 private:
  class Op;

  asio::detail::reactor& reactor_;
  Client& client_;
  int fd_ = -1;
  asio::detail::reactor::per_descriptor_data data_ = nullptr;
  // Set while wait() hands its operation to the reactor, which may perform
  // it at once: the client is then not asked to look (the caller knows
  // whether it left input behind, and looking would be one more call).
  bool arming_ = false;
  bool pending_ = false;  // a wait is with the reactor
};

}  // namespace tarde::net
