#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>

#include "tools/bench/event_loop.h"

// A non-blocking TCP connection to 127.0.0.1 with an outbound and an inbound
// buffer: the transport of the three text-protocol adapters (tarde,
// beanstalkd, Redis). Bytes written go out as soon as the socket takes them;
// bytes read are offered to the current parser, which returns how many it
// consumed (0: a reply is not complete yet). Owned by its adapter client;
// loop thread only. Any socket error or EOF calls EventLoop::fail().
namespace tarde::bench {

class Stream : public FdHandler {
 public:
  // Returns the bytes of one complete reply at the front of `input`, or 0.
  using Parser = std::function<size_t(std::string_view input)>;

  Stream(EventLoop* loop, std::string name);
  ~Stream() override;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Connects (blocking: loopback connects at once) and sets TCP_NODELAY.
  bool connect(const std::string& host, uint16_t port);

  // Queues bytes and expects one reply, handed to `parser` once complete.
  // Requests may be pipelined: replies go to parsers in request order.
  void request(std::string_view bytes, Parser parser);

  void on_ready(uint32_t epoll_events) override;

 private:
  void flush();
  void parse();
  void update_interest();

  EventLoop* loop_;
  std::string name_;
  int fd_ = -1;
  std::string out_;
  size_t out_sent_ = 0;
  std::string in_;
  size_t in_used_ = 0;
  std::deque<Parser> parsers_;  // one per request awaiting its reply, in order
  bool parsing_ = false;
  bool want_write_ = false;
};

}  // namespace tarde::bench
