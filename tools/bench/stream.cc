#include "tools/bench/stream.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tarde::bench {

// Bytes read per recv(): several pipelined replies at once.
constexpr size_t kReadChunkBytes = 64 * 1024;

Stream::Stream(EventLoop* loop, std::string name) : loop_(loop), name_(std::move(name)) {}

Stream::~Stream() {
  if (fd_ >= 0) {
    loop_->unwatch(fd_);
    ::close(fd_);
  }
}

bool Stream::connect(const std::string& host, uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  if (fd_ < 0 || inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1 ||
      ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    loop_->fail(name_ + ": connect to " + host + ":" + std::to_string(port) + ": " +
                std::strerror(errno));
    return false;
  }
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
  update_interest();
  return true;
}

void Stream::request(std::string_view bytes, Parser parser) {
  parsers_.push_back(std::move(parser));
  out_.append(bytes);
  flush();
  // A reply may already sit in the buffer (pipelined by the caller).
  if (in_used_ < in_.size()) parse();
}

void Stream::flush() {
  while (out_sent_ < out_.size()) {
    const ssize_t n = ::send(fd_, out_.data() + out_sent_, out_.size() - out_sent_, MSG_NOSIGNAL);
    if (n < 0 && errno == EAGAIN) break;
    if (n < 0) {
      loop_->fail(name_ + ": send: " + std::strerror(errno));
      return;
    }
    out_sent_ += static_cast<size_t>(n);
  }
  if (out_sent_ == out_.size()) {
    out_.clear();
    out_sent_ = 0;
  }
  const bool want_write = !out_.empty();
  if (want_write != want_write_) {
    want_write_ = want_write;
    update_interest();
  }
}

void Stream::update_interest() { loop_->watch(fd_, EPOLLIN | (want_write_ ? EPOLLOUT : 0u), this); }

void Stream::on_ready(uint32_t epoll_events) {
  if (epoll_events & EPOLLOUT) flush();
  if (!(epoll_events & (EPOLLIN | EPOLLHUP | EPOLLERR))) return;
  if (in_used_ > 0 && in_used_ == in_.size()) {
    in_.clear();
    in_used_ = 0;
  }
  const size_t old_size = in_.size();
  in_.resize(old_size + kReadChunkBytes);
  const ssize_t n = ::recv(fd_, in_.data() + old_size, kReadChunkBytes, 0);
  in_.resize(old_size + (n > 0 ? static_cast<size_t>(n) : 0));
  if (n == 0) {
    loop_->fail(name_ + ": the server closed the connection");
    return;
  }
  if (n < 0) {
    if (errno != EAGAIN) loop_->fail(name_ + ": recv: " + std::strerror(errno));
    return;
  }
  parse();
}

void Stream::parse() {
  if (parsing_) return;  // a reply callback issued the next request: the outer loop goes on
  parsing_ = true;
  while (!parsers_.empty() && in_used_ < in_.size() && !loop_->failed()) {
    Parser parser = std::move(parsers_.front());
    parsers_.pop_front();
    const size_t used = parser(std::string_view(in_).substr(in_used_));
    if (used == 0) {
      parsers_.push_front(std::move(parser));
      break;
    }
    in_used_ += used;
  }
  parsing_ = false;
  if (in_used_ == in_.size()) {
    in_.clear();
    in_used_ = 0;
  }
}

}  // namespace tarde::bench
