#pragma once

#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "base/figures.h"
#include "base/status.h"
#include "net/http/http_connection.h"
#include "net/http/rate_history.h"
#include "net/http/router.h"

namespace tarde::net {
class Core;
}

namespace tarde::net::http {

// HttpServer is tarde's one HTTP listener (--http-listen): /healthz,
// /metrics, the JSON API of net/HTTP_API.md and the dashboard. Each
// connection carries one request and is closed after its response (no
// keep-alive: the dashboard polls every few seconds at most, and one request
// per connection keeps the server free of idle connections to manage). It
// calls the engine through the Core on the io thread, and an action's
// response goes out only once its change is durable, as with the protocol.
// It also runs the one-second timer that fills the per-second history.
//
// Owned by the Server, which opens the Core first; io thread only. Errors of
// one connection close that connection; listen() reports what failed.
class HttpServer final : public ConnectionHost {
 public:
  // Connections at once; the next is answered 503 and closed.
  static constexpr size_t kConnectionsMax = 64;
  // The per-second history's sampling interval.
  static constexpr std::chrono::milliseconds kTickInterval{1000};

  // `core` must be open; it, `figures` and `io` outlive the HttpServer.
  // `token` set: every request but the open routes needs it as a Bearer token.
  HttpServer(asio::io_context& io, Core& core, const Figures& figures,
             std::optional<std::string> token);
  ~HttpServer();
  [[nodiscard]] Status listen(const std::string& host, uint16_t port);
  // Stops accepting, closes every connection and stops the timer.
  void close();
  uint16_t port() const { return port_; }
  // A non-loopback address: anyone on the network could connect.
  bool reachable_from_outside() const;

 private:
  // ConnectionHost, for connections.
  Core& core() override { return core_; }
  Response dispatch(const Request& request) override;
  void forget(HttpConnection* connection) override { connections_.erase(connection); }
  void do_accept();
  void tick();

  Core& core_;
  std::optional<std::string> token_;
  RateHistory rates_;
  ApiContext context_;
  asio::ip::tcp::acceptor acceptor_;
  asio::steady_timer tick_timer_;
  std::unordered_map<HttpConnection*, std::shared_ptr<HttpConnection>> connections_;
  uint16_t port_ = 0;
  bool closed_ = false;
};

}  // namespace tarde::net::http
