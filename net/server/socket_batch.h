#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace tarde::net {

// SocketBatch runs the sends and receives of many sockets in one system call,
// through an io_uring of its own. Each system call has a fixed cost of
// entering and leaving the kernel, about a microsecond on the virtual
// machines tarde was measured on (docs/benchmarks.md), and the io thread
// makes two per command (a receive and a send); a pass serving thirty
// connections pays it once instead of thirty times.
//
// Each operation behaves exactly as send(2) with MSG_DONTWAIT | MSG_NOSIGNAL
// or recv(2) with MSG_DONTWAIT would on the same socket: it never waits, its
// result is the bytes moved or -errno (-EAGAIN when the socket could take or
// give nothing). Operations on different sockets are independent; two on one
// socket run in their order. Where the kernel offers no io_uring (too old, or
// a container that forbids it), or a batch holds one operation, each runs as
// its own system call, with the same results. io thread only.
class SocketBatch {
 public:
  struct Op {
    int fd = -1;
    bool send = false;  // send(2) from data, or recv(2) into it
    char* data = nullptr;
    size_t size = 0;
    int64_t result = 0;  // set by run(): bytes moved, or -errno
  };

  enum class Mode {
    kRing,   // an io_uring when the kernel allows one, else one call each
    kPlain,  // one system call per operation (tests, and the fallback)
  };

  explicit SocketBatch(Mode mode = Mode::kRing);
  ~SocketBatch();
  SocketBatch(const SocketBatch&) = delete;
  SocketBatch& operator=(const SocketBatch&) = delete;

  // Runs every operation and sets its result; returns once all have run.
  void run(std::span<Op> ops);
  // Whether batches go through an io_uring.
  bool uses_ring() const { return ring_ != nullptr; }
  // Why there is no ring (errno of its setup, or of a failed submission);
  // 0 when there is one, or when kPlain was asked for.
  int ring_error() const { return ring_error_; }

 private:
  struct Ring;
  // Runs ops through the ring; false (with ring_error_ set) when the ring
  // failed before running them all: it is then dropped, and the caller runs
  // the rest one by one.
  bool run_in_ring(std::span<Op> ops, size_t* done);
  void drop_ring();

  std::unique_ptr<Ring> ring_;
  int ring_error_ = 0;
};

}  // namespace tarde::net
