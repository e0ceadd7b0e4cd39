#include "net/http/http_server.h"

#include <spdlog/spdlog.h>

#include <vector>

#include "base/log_record.h"
#include "net/core/core.h"
#include "net/http/api.h"

namespace tarde::net::http {

HttpServer::HttpServer(asio::io_context& io, Core& core, const Figures& figures,
                       std::optional<std::string> token)
    : core_(core),
      token_(std::move(token)),
      context_{&core, &figures, &rates_},
      acceptor_(io),
      tick_timer_(io) {
  core_.set_transition_observer(
      [this](const engine::TransitionNote& note) { rates_.on_transition(note); });
}

HttpServer::~HttpServer() {
  core_.set_transition_observer(nullptr);
  close();
}

Status HttpServer::listen(const std::string& host, uint16_t port) {
  asio::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (ec) return Status::invalid_argument("bad HTTP address " + host);
  const asio::ip::tcp::endpoint endpoint(address, port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::io_error("cannot listen for HTTP on " + host + ":" + std::to_string(port) +
                            ": " + ec.message());
  }
  port_ = acceptor_.local_endpoint().port();
  do_accept();
  tick_timer_.expires_after(kTickInterval);
  tick_timer_.async_wait([this](const asio::error_code& ec) {
    if (!ec) tick();
  });
  return Status::ok();
}

bool HttpServer::reachable_from_outside() const {
  asio::error_code ec;
  const auto endpoint = acceptor_.local_endpoint(ec);
  return !ec && !endpoint.address().is_loopback();
}

void HttpServer::close() {
  if (closed_) return;
  closed_ = true;
  asio::error_code ignored;
  acceptor_.close(ignored);
  tick_timer_.cancel();
  std::vector<std::shared_ptr<HttpConnection>> open;
  for (auto& [raw, connection] : connections_) open.push_back(connection);
  for (auto& connection : open) connection->close();
}

Response HttpServer::dispatch(const Request& request) {
  return http::dispatch(routes(), context_, request, token_);
}

void HttpServer::do_accept() {
  acceptor_.async_accept([this](const asio::error_code& ec, asio::ip::tcp::socket socket) {
    if (ec == asio::error::operation_aborted || closed_) return;
    if (ec) {
      spdlog::warn(LogRecord("http.accept_failed").text("error", ec.message()).line());
    } else {
      auto connection = std::make_shared<HttpConnection>(*this, std::move(socket));
      const bool full = connections_.size() >= kConnectionsMax;
      connections_[connection.get()] = connection;
      if (full) {
        connection->refuse();
      } else {
        connection->start();
      }
    }
    do_accept();
  });
}

// Closes one second of the history, then waits for the next; the deadline
// advances by whole intervals so that samples stay a second apart.
void HttpServer::tick() {
  if (closed_) return;
  std::map<std::string, uint64_t> handed_out;
  engine::Engine& engine = core_.engine();
  for (const std::string& queue : engine.queue_names()) {
    handed_out[queue] = engine.queue_figures(queue).handed_out;
  }
  rates_.tick(core_.clock().now_wall_ms(), handed_out);
  tick_timer_.expires_at(tick_timer_.expiry() + kTickInterval);
  tick_timer_.async_wait([this](const asio::error_code& ec) {
    if (!ec) tick();
  });
}

}  // namespace tarde::net::http
