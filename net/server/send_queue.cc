#include "net/server/send_queue.h"

#include <cstdint>

namespace tarde::net {

void SendQueue::add(std::shared_ptr<Sender> sender, int fd) {
  queued_.push_back(Queued{std::move(sender), fd});
  if (holds_ > 0) return;
  if (!sending_now_ && !sent_this_turn_) {
    // The first output since the last send goes at once: the first of many
    // parked workers handed a request does not wait for the others'.
    send_now();
    sent_this_turn_ = true;
    return;
  }
  if (posted_) return;
  posted_ = true;
  asio::post(io_, [this] {
    posted_ = false;
    send_now();
  });
}

void SendQueue::release() {
  if (--holds_ == 0) send_now();
}

void SendQueue::send_now() {
  // What on_sent queues goes with the next send (the one posted by add).
  if (sending_now_) return;
  if (queued_.empty()) {
    sent_this_turn_ = false;
    return;
  }
  sending_now_ = true;
  sending_.swap(queued_);
  ops_.clear();
  op_of_.clear();
  for (const Queued& queued : sending_) {
    // A connection closed since it was queued has nothing left to send, and
    // its descriptor may already belong to another connection: left out.
    const std::span<char> bytes = queued.sender->unsent();
    if (bytes.empty()) {
      op_of_.push_back(SIZE_MAX);
      continue;
    }
    op_of_.push_back(ops_.size());
    ops_.push_back(
        SocketBatch::Op{.fd = queued.fd, .send = true, .data = bytes.data(), .size = bytes.size()});
  }
  batch_.run(ops_);
  for (size_t i = 0; i < sending_.size(); ++i) {
    sending_[i].sender->on_sent(op_of_[i] == SIZE_MAX ? 0 : ops_[op_of_[i]].result);
  }
  sending_.clear();
  sending_now_ = false;
  sent_this_turn_ = false;
}

}  // namespace tarde::net
