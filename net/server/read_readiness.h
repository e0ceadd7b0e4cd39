#pragma once

#include <asio.hpp>
#include <cstdint>

#include "base/status.h"

namespace tarde::net {

// ReadReadiness tells the sessions of the io thread when their sockets have
// input, through an epoll set of its own that Asio watches as one
// descriptor. Asio's wait for readability re-arms the socket's registration
// with an epoll_ctl on every wait, one per command, and its reads try a
// recv before waiting, a second syscall per command; here each socket is
// registered once, level-triggered, and one pass of the io thread costs one
// epoll_wait of the set and one re-arm of the set's descriptor in Asio,
// however many sockets it serves. Sessions send with a plain write and
// leave to Asio only what the socket does not take at once. io thread only;
// destroyed (its descriptor closed by Asio) after every watched socket is.
class ReadReadiness {
 public:
  // Told that its socket has input, or is broken (an error, or both
  // directions shut): either way a read returns at once.
  class Reader {
   public:
    virtual void on_readable(bool broken) = 0;

   protected:
    ~Reader() = default;
  };

  // Told when a pass over the ready sockets starts and when it is over
  // (after the set is watched again): the server holds the io thread's
  // commits for the length of a pass.
  class PassObserver {
   public:
    virtual void pass_started() = 0;
    virtual void pass_ended() = 0;

   protected:
    ~PassObserver() = default;
  };

  // `observer`, when given, outlives the ReadReadiness.
  explicit ReadReadiness(asio::io_context& io, PassObserver* observer = nullptr);
  ReadReadiness(const ReadReadiness&) = delete;
  ReadReadiness& operator=(const ReadReadiness&) = delete;

  // Creates the epoll set and starts watching it. Before anything else.
  [[nodiscard]] Status open();
  // Registers `fd` for `reader`, not yet wanting input.
  [[nodiscard]] Status watch(int fd, Reader* reader);
  // Whether `reader` wants to hear of input on `fd` (a broken socket is
  // reported either way).
  [[nodiscard]] Status want_input(int fd, Reader* reader, bool wanted);
  // Stops watching `fd`; before it is closed.
  void forget(int fd);

 private:
  void arm();
  void on_ready(const asio::error_code& ec);
  Status control(int op, int fd, Reader* reader, uint32_t events);

  asio::posix::stream_descriptor descriptor_;
  PassObserver* observer_;
};

}  // namespace tarde::net
