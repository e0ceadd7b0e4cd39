#include "net/server/read_readiness.h"

#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace tarde::net {
namespace {

// Sockets served per epoll_wait. More ready ones stay ready (level-triggered)
// and are served on the next pass, after the handlers queued meanwhile.
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
  TARDE_RETURN_IF_ERROR(
      control(EPOLL_CTL_MOD, fd, reader, wanted ? uint32_t{EPOLLIN} : uint32_t{0}));
  // Input that came while the reader wanted none is announced by this call
  // only when the set had not listed the socket as ready since: look.
  if (wanted) look_soon();
  return Status::ok();
}

void ReadReadiness::forget(int fd) {
  epoll_event ignored{};
  epoll_ctl(fd_, EPOLL_CTL_DEL, fd, &ignored);
}

// An edge of the set comes whenever a watched socket gets input or breaks.
// What it does not announce is input a pass left in a socket it served, or
// input already there when a reader starts wanting it: then a pass is
// posted, and finds it, the sockets being registered level-triggered.
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

void ReadReadiness::serve() {
  if (observer_ != nullptr) observer_->pass_started();
  // The sockets that take input are read together first, then each reader
  // handles what came, in the order epoll gave. A reader may close (and
  // forget its socket) while an earlier one is served; Sessions are released
  // only after the handler that closed them, so the pointers of this pass
  // stay valid, and a closed one ignores what it is told.
  if (!read_buffer_tried_ && ready_ > 0) {
    read_buffer_tried_ = true;
    void* mapped = mmap(nullptr, kReadBufferBytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapped != MAP_FAILED) read_buffer_ = static_cast<char*>(mapped);
  }
  in_pass_ = true;
  more_may_wait_ = ready_ == kEventsPerPass;
  reads_.clear();
  readers_.clear();
  for (int i = 0; i < ready_; ++i) {
    auto* reader = static_cast<Reader*>(events_[i].data.ptr);
    const bool broken = (events_[i].events & (EPOLLERR | EPOLLHUP)) != 0;
    const int fd = broken || read_buffer_ == nullptr ? -1 : reader->batch_read_fd();
    if (fd < 0) {
      more_may_wait_ = true;
      reader->on_readable(broken);
      continue;
    }
    reads_.push_back(SocketBatch::Op{.fd = fd,
                                     .send = false,
                                     .data = read_buffer_ + reads_.size() * kBatchReadBytes,
                                     .size = kBatchReadBytes});
    readers_.push_back(reader);
  }
  batch_.run(reads_);
  for (size_t i = 0; i < readers_.size(); ++i) {
    if (reads_[i].result == static_cast<int64_t>(kBatchReadBytes)) more_may_wait_ = true;
    readers_[i]->on_received(reads_[i].data, reads_[i].result);
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
