#pragma once

#include <asio.hpp>
#include <cstdint>
#include <string>

#include "base/figures.h"
#include "base/status.h"

namespace tarde::net {

// HttpListener serves `GET /metrics` (the figure registry in the Prometheus
// text format) and `GET /healthz` on its own port (--metrics-listen), so
// operators can watch tarde without speaking its protocol. Each request gets
// one response and the connection closes. io thread only; owned by the
// Server, and the registry outlives it.
class HttpListener {
 public:
  // A request head larger than this is refused: metrics requests are tiny.
  static constexpr size_t kRequestBytesMax = 8192;

  HttpListener(asio::io_context& io, const Figures& figures);
  [[nodiscard]] Status listen(const std::string& host, uint16_t port);
  void close();
  uint16_t port() const { return port_; }

 private:
  void do_accept();

  const Figures& figures_;
  asio::ip::tcp::acceptor acceptor_;
  uint16_t port_ = 0;
};

}  // namespace tarde::net
