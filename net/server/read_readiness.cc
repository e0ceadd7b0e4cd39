#include "net/server/read_readiness.h"

#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace tarde::net {
namespace {

// Sockets served per epoll_wait. More ready ones stay listed by the set and
// are served on the next pass, after the handlers queued meanwhile.
constexpr int kEventsPerPass = 256;
constexpr size_t kReadBufferBytes = kEventsPerPass * ReadReadiness::kBatchReadBytes;

Status errno_status(const char* what) {
  return Status::io_error(std::string(what) + ": " + std::strerror(errno));
}

}  // namespace

ReadReadiness::ReadReadiness(asio::io_context& io, SocketBatch& batch, PassObserver* observer)
    : io_(io), edge_wait_(io, *this), batch_(batch), observer_(observer) {}

ReadReadiness::~ReadReadiness() {
  edge_wait_.forget();
  if (fd_ >= 0) ::close(fd_);
  if (read_buffer_ != nullptr) munmap(read_buffer_, kReadBufferBytes);
}

Status ReadReadiness::open() {
  fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (fd_ < 0) return errno_status("epoll_create1");
  events_.resize(kEventsPerPass);
  void* mapped = mmap(nullptr, kReadBufferBytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped != MAP_FAILED) read_buffer_ = static_cast<char*>(mapped);
  TARDE_RETURN_IF_ERROR(edge_wait_.watch(fd_));
  edge_wait_.wait();
  return Status::ok();
}

Status ReadReadiness::control(int op, int fd, Reader* reader, uint32_t events) {
  epoll_event event{};
  event.events = events;
  event.data.ptr = reader;
  if (epoll_ctl(fd_, op, fd, &event) != 0) return errno_status("epoll_ctl");
  return Status::ok();
}

Status ReadReadiness::watch(int fd, Reader* reader) {
  return control(EPOLL_CTL_ADD, fd, reader, 0);
}

Status ReadReadiness::want_input(int fd, Reader* reader, bool wanted) {
  const uint32_t input = read_buffer_ != nullptr ? EPOLLIN | EPOLLRDHUP | EPOLLET : EPOLLIN;
  TARDE_RETURN_IF_ERROR(control(EPOLL_CTL_MOD, fd, reader, wanted ? input : 0));
  // The change lists the socket if input is there already, but the set may
  // have been listed ready before (no new edge): look.
  if (wanted) look_soon();
  return Status::ok();
}

void ReadReadiness::forget(int fd) {
  epoll_event ignored{};
  epoll_ctl(fd_, EPOLL_CTL_DEL, fd, &ignored);
  std::erase_if(carried_, [fd](const Carried& carried) { return carried.fd == fd; });
}

// An edge of the set comes whenever a watched socket gets input or breaks.
// What it does not announce is input a pass left in a socket it served, or
// input already there when a reader starts wanting it: then a pass is
// posted. It finds the second in the set, which lists a socket when its
// registration changes and input is there; the first it does not (the
// sockets are edge-triggered), so the pass carries those readers over.
void ReadReadiness::look_soon() {
  if (in_pass_) {
    more_may_wait_ = true;  // the pass posts the next one as it ends
    return;
  }
  if (pass_posted_) return;
  pass_posted_ = true;
  asio::post(io_, [this] {
    pass_posted_ = false;
    look();
    serve();
  });
}

bool ReadReadiness::look() {
  ready_ = epoll_wait(fd_, events_.data(), kEventsPerPass, 0);
  if (ready_ < 0) ready_ = 0;  // EINTR: the next edge or pass looks again
  return ready_ > 0;
}

void ReadReadiness::on_input() { serve(); }

void ReadReadiness::add_read(int fd, Reader* reader, bool to_end) {
  reads_.push_back(SocketBatch::Op{.fd = fd,
                                   .send = false,
                                   .data = read_buffer_ + reads_.size() * kBatchReadBytes,
                                   .size = kBatchReadBytes});
  readers_.push_back(Carried{fd, reader, to_end});
}

void ReadReadiness::carry(const Carried& carried) {
  carried_.push_back(carried);
  more_may_wait_ = true;
}

void ReadReadiness::serve() {
  if (observer_ != nullptr) observer_->pass_started();
  // The sockets that take input are read together first, then each reader
  // handles what came, in the order epoll gave, then those carried over
  // from the last pass. A reader may close (and forget its socket) while an
  // earlier one is served; Sessions are released only after the handler
  // that closed them, so the pointers of this pass stay valid, and a closed
  // one ignores what it is told.
  in_pass_ = true;
  more_may_wait_ = ready_ == kEventsPerPass;
  reads_.clear();
  readers_.clear();
  carried_now_.swap(carried_);
  carried_.clear();
  for (int i = 0; i < ready_; ++i) {
    auto* reader = static_cast<Reader*>(events_[i].data.ptr);
    const bool broken = (events_[i].events & (EPOLLERR | EPOLLHUP)) != 0;
    // The peer's end of input is announced once, maybe with the last input:
    // the reader is read until a receive gives the end.
    const bool ends = broken || (events_[i].events & EPOLLRDHUP) != 0;
    const int fd = broken || read_buffer_ == nullptr ? -1 : reader->batch_read_fd();
    if (fd >= 0) {
      add_read(fd, reader, ends);
      continue;
    }
    reader->on_readable(broken);
    if (read_buffer_ == nullptr) {
      more_may_wait_ = true;  // level-triggered: input left is listed again
    } else if (const int still = reader->batch_read_fd(); ends && still >= 0) {
      carry(Carried{still, reader, true});
    }
  }
  for (const Carried& carried : carried_now_) {
    // One receive per socket and pass, or two could complete out of order.
    const auto same = [&carried](const Carried& read) { return read.reader == carried.reader; };
    if (const auto listed = std::find_if(readers_.begin(), readers_.end(), same);
        listed != readers_.end()) {
      listed->to_end = listed->to_end || carried.to_end;
      continue;
    }
    if (reads_.size() == kEventsPerPass) {  // every slot is taken: the next pass
      carry(carried);
      continue;
    }
    const int fd = carried.reader->batch_read_fd();
    if (fd >= 0) add_read(fd, carried.reader, carried.to_end);
  }
  batch_.run(reads_);
  for (size_t i = 0; i < readers_.size(); ++i) {
    const int64_t result = reads_[i].result;
    // What no edge will announce: input past a full slot, or before the end.
    const bool full = result == static_cast<int64_t>(kBatchReadBytes);
    if (full || (readers_[i].to_end && result > 0)) carry(readers_[i]);
    readers_[i].reader->on_received(reads_[i].data, result);
  }
  in_pass_ = false;
  if (more_may_wait_) {
    look_soon();
  } else {
    edge_wait_.wait();
  }
  if (observer_ != nullptr) observer_->pass_ended();
}

}  // namespace tarde::net
