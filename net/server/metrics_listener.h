#pragma once

#include <asio.hpp>

#include <cstdint>
#include <string>

#include "base/status.h"

namespace tarde::net {

class Server;

// MetricsListener serves `GET /metrics` (Prometheus text format) and
// `GET /healthz` on its own port (--metrics-listen), so operators can watch
// tarde without speaking its protocol. Each request gets one response and the
// connection closes. io thread only; owned by the Server.
class MetricsListener {
 public:
  // A request head larger than this is refused: metrics requests are tiny.
  static constexpr size_t kRequestBytesMax = 8192;

  MetricsListener(asio::io_context& io, Server& server);
  [[nodiscard]] Status listen(const std::string& host, uint16_t port);
  void close();
  uint16_t port() const { return port_; }

 private:
  void do_accept();

  Server& server_;
  asio::ip::tcp::acceptor acceptor_;
  uint16_t port_ = 0;
};

// The Prometheus text exposition of a server's figures.
std::string render_metrics(Server& server);

}  // namespace tarde::net
