#pragma once

#include <array>
#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "net/core/waiters.h"
#include "net/http/response.h"

namespace tarde::net {
class Core;
}

namespace tarde::net::http {

class HttpConnection;
struct Request;

// What a connection needs from the server that accepted it (HttpServer):
// the Core, the dispatch of a request, and to be forgotten once closed.
class ConnectionHost {
 public:
  virtual Core& core() = 0;
  virtual Response dispatch(const Request& request) = 0;
  virtual void forget(HttpConnection* connection) = 0;

 protected:
  ~ConnectionHost() = default;
};

// A request must arrive whole within this (slow-loris defence); its
// response, once computed, must be taken within it too.
inline constexpr std::chrono::seconds kRequestDeadline{10};

// One HTTP connection: reads one request (within kRequestDeadline and the
// size limits of request.h), dispatches it, waits for the commit its
// response depends on, writes the response and closes. Held by the
// HttpServer while open and by its pending asynchronous operations; io
// thread only. Any socket error just closes it.
class HttpConnection final : public std::enable_shared_from_this<HttpConnection>,
                             public CommitWaiter {
 public:
  HttpConnection(ConnectionHost& host, asio::ip::tcp::socket socket);
  void start();
  // Answers 503 at once: too many connections.
  void refuse();
  // Closes the socket now; the response in progress, if any, is dropped.
  void close();
  void on_commit(uint64_t seq, bool ok) override;

 private:
  void do_read();
  void on_read(const asio::error_code& ec, size_t bytes);
  void handle();
  void respond(const Response& response);
  void on_write();

  ConnectionHost& host_;
  asio::ip::tcp::socket socket_;
  asio::steady_timer deadline_;
  std::string input_;
  std::array<char, 8192> chunk_{};
  std::string output_;
  std::optional<Response> waiting_;  // computed, waiting for its commit
  uint64_t dep_ = 0;                 // the staged commit it depends on
  bool head_only_ = false;
  bool closed_ = false;
};

}  // namespace tarde::net::http
