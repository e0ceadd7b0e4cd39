#include "net/server/read_readiness.h"

#include <sys/epoll.h>
#include <sys/mman.h>

#include <array>
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
    : descriptor_(io), batch_(batch), observer_(observer) {}

ReadReadiness::~ReadReadiness() {
  if (read_buffer_ != nullptr) munmap(read_buffer_, kReadBufferBytes);
}

Status ReadReadiness::open() {
  const int fd = epoll_create1(EPOLL_CLOEXEC);
  if (fd < 0) return errno_status("epoll_create1");
  asio::error_code ec;
  descriptor_.assign(fd, ec);
  if (ec) return Status::io_error("watching the read epoll set: " + ec.message());
  arm();
  return Status::ok();
}

Status ReadReadiness::control(int op, int fd, Reader* reader, uint32_t events) {
  epoll_event event{};
  event.events = events;
  event.data.ptr = reader;
  if (epoll_ctl(descriptor_.native_handle(), op, fd, &event) != 0) {
    return errno_status("epoll_ctl");
  }
  return Status::ok();
}

Status ReadReadiness::watch(int fd, Reader* reader) {
  return control(EPOLL_CTL_ADD, fd, reader, 0);
}

Status ReadReadiness::want_input(int fd, Reader* reader, bool wanted) {
  return control(EPOLL_CTL_MOD, fd, reader, wanted ? uint32_t{EPOLLIN} : uint32_t{0});
}

void ReadReadiness::forget(int fd) {
  epoll_event ignored{};
  epoll_ctl(descriptor_.native_handle(), EPOLL_CTL_DEL, fd, &ignored);
}

void ReadReadiness::arm() {
  descriptor_.async_wait(asio::posix::stream_descriptor::wait_read,
                         [this](const asio::error_code& ec) { on_ready(ec); });
}

void ReadReadiness::on_ready(const asio::error_code& ec) {
  if (ec) return;  // closed: the server is going away
  std::array<epoll_event, kEventsPerPass> events;
  const int ready = epoll_wait(descriptor_.native_handle(), events.data(), kEventsPerPass, 0);
  if (observer_ != nullptr) observer_->pass_started();
  // The sockets that take input are read together first, then each reader
  // handles what came, in the order epoll gave. A reader may close (and
  // forget its socket) while an earlier one is served; Sessions are released
  // only after the handler that closed them, so the pointers of this pass
  // stay valid, and a closed one ignores what it is told.
  if (!read_buffer_tried_ && ready > 0) {
    read_buffer_tried_ = true;
    void* mapped = mmap(nullptr, kReadBufferBytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapped != MAP_FAILED) read_buffer_ = static_cast<char*>(mapped);
  }
  reads_.clear();
  readers_.clear();
  for (int i = 0; i < ready; ++i) {
    auto* reader = static_cast<Reader*>(events[i].data.ptr);
    const bool broken = (events[i].events & (EPOLLERR | EPOLLHUP)) != 0;
    const int fd = broken || read_buffer_ == nullptr ? -1 : reader->batch_read_fd();
    if (fd < 0) {
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
  for (size_t i = 0; i < readers_.size(); ++i)
    readers_[i]->on_received(reads_[i].data, reads_[i].result);
  arm();
  if (observer_ != nullptr) observer_->pass_ended();
}

}  // namespace tarde::net
