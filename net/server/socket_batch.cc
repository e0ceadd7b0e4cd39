#include "net/server/socket_batch.h"

#include <liburing.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace tarde::net {
namespace {

// Operations per submission: a pass serves at most 256 sockets
// (read_readiness.cc), and a larger batch is run in turns of this size.
constexpr unsigned kRingEntries = 256;

constexpr int kSendFlags = MSG_DONTWAIT | MSG_NOSIGNAL;
constexpr int kRecvFlags = MSG_DONTWAIT;

void run_one(SocketBatch::Op& op) {
  const ssize_t moved = op.send ? ::send(op.fd, op.data, op.size, kSendFlags)
                                : ::recv(op.fd, op.data, op.size, kRecvFlags);
  op.result = moved < 0 ? -int64_t{errno} : int64_t{moved};
}

}  // namespace

struct SocketBatch::Ring {
  io_uring ring{};
};

SocketBatch::SocketBatch(Mode mode) {
  if (mode != Mode::kRing) return;
  auto ring = std::make_unique<Ring>();
  const int error = io_uring_queue_init(kRingEntries, &ring->ring, 0);
  if (error == 0) {
    ring_ = std::move(ring);
  } else {
    ring_error_ = -error;
  }
}

SocketBatch::~SocketBatch() { drop_ring(); }

void SocketBatch::drop_ring() {
  if (ring_ == nullptr) return;
  io_uring_queue_exit(&ring_->ring);
  ring_.reset();
}

void SocketBatch::run(std::span<Op> ops) {
  size_t done = 0;
  if (ring_ != nullptr && ops.size() > 1 && !run_in_ring(ops, &done)) drop_ring();
  for (size_t i = done; i < ops.size(); ++i) run_one(ops[i]);
}

bool SocketBatch::run_in_ring(std::span<Op> ops, size_t* done) {
  io_uring* ring = &ring_->ring;
  while (*done < ops.size()) {
    const size_t first = *done;
    const unsigned count =
        static_cast<unsigned>(std::min<size_t>(ops.size() - first, kRingEntries));
    for (unsigned i = 0; i < count; ++i) {
      Op& op = ops[first + i];
      io_uring_sqe* sqe = io_uring_get_sqe(ring);
      if (op.send) {
        io_uring_prep_send(sqe, op.fd, op.data, op.size, kSendFlags);
      } else {
        io_uring_prep_recv(sqe, op.fd, op.data, op.size, kRecvFlags);
      }
      // MSG_DONTWAIT makes an operation that cannot move anything complete
      // with -EAGAIN instead of waiting in the ring for the socket.
      io_uring_sqe_set_data64(sqe, first + i);
    }
    int submitted = io_uring_submit_and_wait(ring, count);
    while (submitted == -EINTR && io_uring_sq_ready(ring) == count) {
      submitted = io_uring_submit_and_wait(ring, count);
    }
    // The kernel takes entries in order and stops at one it cannot take
    // (out of memory), without waiting then: the first `taken` are in the
    // ring, the others still queued in it.
    const unsigned taken = count - io_uring_sq_ready(ring);
    // Those taken all complete (none waits), and a result is the only
    // record of whether bytes moved, so each is waited for.
    unsigned seen = 0;
    while (seen < taken) {
      io_uring_cqe* cqe = nullptr;
      const int waited = io_uring_wait_cqe(ring, &cqe);
      if (waited == -EINTR || waited == -EAGAIN) continue;
      if (waited < 0) {
        ring_error_ = -waited;
        // Unreachable in practice; the outcome of what is left is unknown,
        // so those connections fail rather than risk bytes sent twice.
        for (size_t i = first; i < first + taken; ++i) {
          if (ops[i].result == 0) ops[i].result = -EIO;
        }
        *done = first + taken;
        return false;
      }
      ops[io_uring_cqe_get_data64(cqe)].result = cqe->res;
      io_uring_cqe_seen(ring, cqe);
      ++seen;
    }
    if (taken < count) {
      // Dropping the ring discards the entries it did not take; those
      // operations never ran, and run one by one.
      ring_error_ = submitted < 0 ? -submitted : ENOMEM;
      *done = first + taken;
      return false;
    }
    *done = first + count;
  }
  return true;
}

}  // namespace tarde::net
