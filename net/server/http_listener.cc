#include "net/server/http_listener.h"

#include <memory>

namespace tarde::net {
namespace {

// One HTTP exchange: read the request head, answer, close.
class HttpExchange : public std::enable_shared_from_this<HttpExchange> {
 public:
  HttpExchange(asio::ip::tcp::socket socket, const Figures& figures)
      : socket_(std::move(socket)), figures_(figures) {}

  void start() {
    asio::async_read_until(
        socket_, asio::dynamic_buffer(request_, HttpListener::kRequestBytesMax), "\r\n\r\n",
        [self = shared_from_this()](const asio::error_code& ec, size_t) { self->on_read(ec); });
  }

 private:
  void on_read(const asio::error_code& ec) {
    if (ec) return;
    std::string status = "200 OK";
    std::string body;
    std::string type = "text/plain; version=0.0.4; charset=utf-8";
    if (request_.rfind("GET /metrics ", 0) == 0) {
      body = figures_.prometheus_text();
    } else if (request_.rfind("GET /healthz ", 0) == 0) {
      body = "ok\n";
    } else {
      status = "404 Not Found";
      body = "try /metrics or /healthz\n";
    }
    response_ = "HTTP/1.1 " + status + "\r\nContent-Type: " + type +
                "\r\nContent-Length: " + std::to_string(body.size()) +
                "\r\nConnection: close\r\n\r\n" + body;
    asio::async_write(socket_, asio::buffer(response_),
                      [self = shared_from_this()](const asio::error_code&, size_t) {
                        asio::error_code ignored;
                        self->socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
                      });
  }

  asio::ip::tcp::socket socket_;
  const Figures& figures_;
  std::string request_;
  std::string response_;
};

}  // namespace

HttpListener::HttpListener(asio::io_context& io, const Figures& figures)
    : figures_(figures), acceptor_(io) {}

Status HttpListener::listen(const std::string& host, uint16_t port) {
  asio::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (ec) return Status::invalid_argument("bad metrics address " + host);
  const asio::ip::tcp::endpoint endpoint(address, port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::io_error("cannot listen for metrics on " + host + ":" + std::to_string(port) +
                            ": " + ec.message());
  }
  port_ = acceptor_.local_endpoint().port();
  do_accept();
  return Status::ok();
}

void HttpListener::close() {
  asio::error_code ignored;
  acceptor_.close(ignored);
}

void HttpListener::do_accept() {
  acceptor_.async_accept([this](const asio::error_code& ec, asio::ip::tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) std::make_shared<HttpExchange>(std::move(socket), figures_)->start();
    do_accept();
  });
}

}  // namespace tarde::net
