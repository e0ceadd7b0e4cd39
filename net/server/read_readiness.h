#pragma once

#include <sys/epoll.h>

#include <asio.hpp>
#include <cstdint>
#include <vector>

#include "base/status.h"
#include "net/server/edge_wait.h"
#include "net/server/socket_batch.h"

namespace tarde::net {

// ReadReadiness tells the sessions of the io thread when their sockets have
// input, through an epoll set of its own that Asio's reactor watches as one
// descriptor. Asio's wait for readability re-arms the socket's registration
// with an epoll_ctl on every wait, one per command, and its reads try a
// recv before waiting, a second syscall per command; here each socket is
// registered once, and one pass of the io thread costs the reactor's
// epoll_wait and one epoll_wait of the set, however many sockets it serves:
// the set is watched edge-triggered (EdgeWait), and a new edge comes with
// every socket that gets input. The sockets are edge-triggered too: the set
// lists a socket once per arrival of input, so the kernel does not poll it
// again on the next epoll_wait (and on the reactor's look at the set) only
// to find it drained. What no arrival will announce is carried over to the
// next pass: input past a receive that filled its slot, and input before
// an end of input already announced. The ready sockets of a pass are read
// together through a SocketBatch (one system call where io_uring is
// available). io thread only; destroyed after every watched socket is.
class ReadReadiness final : private EdgeWait::Client {
 public:
  // Told that its socket has input, or is broken (an error, or both
  // directions shut): either way a read returns at once.
  class Reader {
   public:
    virtual void on_readable(bool broken) = 0;
    // The socket to receive from along with the other ready ones, or -1 when
    // the reader does not take input now (on_readable is then called).
    virtual int batch_read_fd() = 0;
    // What that receive got: `result` bytes at `data` (at most
    // kBatchReadBytes; the reader reads on by itself after a full one), 0 at
    // the end of input, or -errno (-EAGAIN when nothing had come after all).
    virtual void on_received(const char* data, int64_t result) = 0;

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

  // The most a batched receive takes from one socket.
  static constexpr size_t kBatchReadBytes = 8 << 10;

  // `batch` and `observer` (when given) outlive the ReadReadiness.
  ReadReadiness(asio::io_context& io, SocketBatch& batch, PassObserver* observer = nullptr);
  ~ReadReadiness();
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
  // EdgeWait::Client: the set's epoll_wait, in the reactor; then the pass.
  bool look() override;
  void on_input() override;
  // Posts a pass, for input that no edge will announce (or, during a pass,
  // has the pass post the next one as it ends).
  void look_soon();
  void serve();
  // A reader the next pass reads with no edge: its receive filled its slot,
  // or the end of its input is announced and not yet received (to_end).
  struct Carried {
    int fd;
    Reader* reader;
    bool to_end;
  };
  // Queues a receive into the pass's next slot.
  void add_read(int fd, Reader* reader, bool to_end);
  void carry(const Carried& carried);
  Status control(int op, int fd, Reader* reader, uint32_t events);

  asio::io_context& io_;
  int fd_ = -1;  // the epoll set
  EdgeWait edge_wait_;
  SocketBatch& batch_;
  PassObserver* observer_;
  // The receives of a pass: one kBatchReadBytes slot per ready socket, in
  // pages mapped once (by open) and never cleared, so only the pages bytes
  // arrived in take memory; from the allocator, recycled pages would have
  // counted whole (about 2 MB of RSS in W4). Null when the mapping failed:
  // each reader then reads by itself, and the sockets are level-triggered,
  // since only the pass's receives know when one is left with input.
  char* read_buffer_ = nullptr;
  std::vector<SocketBatch::Op> reads_;
  std::vector<Carried> readers_;  // whose receive each of reads_ is
  std::vector<Carried> carried_;
  std::vector<Carried> carried_now_;  // those of the pass being served
  // What the set's last epoll_wait found: ready_ of events_.
  std::vector<epoll_event> events_;
  int ready_ = 0;
  // Whether the pass may leave input that no new edge will announce: as
  // many sockets as a pass serves were ready, a receive filled its slot, a
  // reader read by itself (without the buffer), or one started wanting input.
  bool more_may_wait_ = false;
  bool in_pass_ = false;
  bool pass_posted_ = false;
};

}  // namespace tarde::net
