#include "net/server/edge_wait.h"

#include <cstring>
#include <string>

namespace tarde::net {

// The reactor's operation for one wait. The reactor owns it while it waits
// and frees it through complete(): with an owner (the io thread's
// scheduler) once it is done, without one when it is dropped unperformed
// (the EdgeWait or the io_context going away).
class EdgeWait::Op final : public asio::detail::reactor_op {
 public:
  explicit Op(EdgeWait& wait)
      : reactor_op(asio::error_code(), &Op::perform, &Op::complete), wait_(wait) {}

 private:
  static status perform(reactor_op* base) {
    EdgeWait& wait = static_cast<Op*>(base)->wait_;
    if (wait.arming_ || !wait.client_.look()) return not_done;
    // "Exhausted": the next wait() is not performed at once by the reactor
    // (which would look again, in vain, before any new edge).
    return done_and_exhausted;
  }

  static void complete(void* owner, asio::detail::operation* base, const asio::error_code&,
                       std::size_t) {
    Op* op = static_cast<Op*>(base);
    EdgeWait& wait = op->wait_;
    const bool failed = static_cast<bool>(op->ec_);
    delete op;
    if (owner == nullptr) return;  // dropped: `wait` may be gone
    wait.pending_ = false;
    if (!failed) wait.client_.on_input();
  }

  EdgeWait& wait_;
};

EdgeWait::EdgeWait(asio::io_context& io, Client& client)
    : reactor_(asio::use_service<asio::detail::reactor>(io)), client_(client) {
  // Makes the reactor part of the io_context's run loop, as Asio's own I/O
  // objects do when they are made.
  reactor_.init_task();
}

EdgeWait::~EdgeWait() { forget(); }

void EdgeWait::forget() {
  if (fd_ < 0) return;
  // Drops a pending operation (freed through its complete(), unperformed).
  reactor_.deregister_internal_descriptor(fd_, data_);
  reactor_.cleanup_descriptor_data(data_);
  fd_ = -1;
  pending_ = false;
}

Status EdgeWait::watch(int fd) {
  if (const int error = reactor_.register_descriptor(fd, data_); error != 0) {
    return Status::io_error(std::string("watching a descriptor in Asio's reactor: ") +
                            std::strerror(error));
  }
  fd_ = fd;
  return Status::ok();
}

void EdgeWait::wait() {
  if (pending_ || fd_ < 0) return;
  pending_ = true;
  arming_ = true;
  // A read operation that may be performed at once: the reactor then queues
  // it without touching the registration (an async_wait would re-arm it).
  reactor_.start_op(asio::detail::reactor::read_op, fd_, data_, new Op(*this),
                    /*is_continuation=*/false, /*allow_speculative=*/true);
  arming_ = false;
}

}  // namespace tarde::net
