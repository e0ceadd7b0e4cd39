#include "net/server/metrics_listener.h"

#include <algorithm>
#include <memory>

#include "net/server/server.h"

namespace tarde::net {
namespace {

// One HTTP exchange: read the request head, answer, close.
class MetricsExchange : public std::enable_shared_from_this<MetricsExchange> {
 public:
  MetricsExchange(asio::ip::tcp::socket socket, Server& server)
      : socket_(std::move(socket)), server_(server) {}

  void start() {
    asio::async_read_until(
        socket_, asio::dynamic_buffer(request_, MetricsListener::kRequestBytesMax), "\r\n\r\n",
        [self = shared_from_this()](const asio::error_code& ec, size_t) { self->on_read(ec); });
  }

 private:
  void on_read(const asio::error_code& ec) {
    if (ec) return;
    std::string status = "200 OK";
    std::string body;
    std::string type = "text/plain; version=0.0.4; charset=utf-8";
    if (request_.rfind("GET /metrics ", 0) == 0) {
      body = render_metrics(server_);
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
  Server& server_;
  std::string request_;
  std::string response_;
};

void add_line(std::string& out, const std::string& name, const std::string& labels,
              const std::string& value) {
  out += name;
  if (!labels.empty()) out += "{" + labels + "}";
  out += ' ' + value + '\n';
}

}  // namespace

MetricsListener::MetricsListener(asio::io_context& io, Server& server)
    : server_(server), acceptor_(io) {}

Status MetricsListener::listen(const std::string& host, uint16_t port) {
  asio::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (ec) return Status::invalid_argument("bad metrics address " + host);
  const asio::ip::tcp::endpoint endpoint(address, port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::io_error("cannot listen for metrics on " + host + ":" +
                            std::to_string(port) + ": " + ec.message());
  }
  port_ = acceptor_.local_endpoint().port();
  do_accept();
  return Status::ok();
}

void MetricsListener::close() {
  asio::error_code ignored;
  acceptor_.close(ignored);
}

void MetricsListener::do_accept() {
  acceptor_.async_accept([this](const asio::error_code& ec, asio::ip::tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) std::make_shared<MetricsExchange>(std::move(socket), server_)->start();
    do_accept();
  });
}

std::string render_metrics(Server& server) {
  std::string out;
  engine::Engine& engine = server.engine();
  const engine::EngineStats stats = engine.stats();
  out += "# HELP tarde_transactions Stored transactions by state.\n";
  out += "# TYPE tarde_transactions gauge\n";
  for (auto state : {storage::TxState::kSending, storage::TxState::kInFlight,
                     storage::TxState::kScheduled, storage::TxState::kSucceeded,
                     storage::TxState::kFailed}) {
    add_line(out, "tarde_transactions", std::string("state=\"") + storage::to_string(state) + "\"",
             std::to_string(stats.by_state[static_cast<size_t>(state)]));
  }
  for (const auto& [name, value] : server.figures()) {
    const bool counter = name == "commands" || name == "commits" || name == "commits_inline" ||
                         name == "connections_total";
    const bool has_suffix = name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0;
    const std::string metric = "tarde_" + name + (counter && !has_suffix ? "_total" : "");
    out += "# TYPE " + metric + (counter ? " counter\n" : " gauge\n");
    add_line(out, metric, "", value);
  }
  out += "# TYPE tarde_timers_fired_total counter\n";
  add_line(out, "tarde_timers_fired_total", "", std::to_string(stats.fired));
  out += "# HELP tarde_stale_dropped_total Stale, duplicate and late messages that changed nothing.\n";
  out += "# TYPE tarde_stale_dropped_total counter\n";
  for (const auto& [kind, n] : stats.stale_by_kind) {
    add_line(out, "tarde_stale_dropped_total", "kind=\"" + kind + "\"", std::to_string(n));
  }
  const char* per_queue[] = {"tarde_ready", "tarde_leased", "tarde_dead_letters",
                             "tarde_breaker_open", "tarde_oldest_ready_age_seconds"};
  std::string lines[5];
  for (const std::string& queue : engine.queue_names()) {
    const auto figures = engine.queue_figures(queue);
    const std::string label = "queue=\"" + queue + "\"";
    add_line(lines[0], per_queue[0], label, std::to_string(figures.ready));
    add_line(lines[1], per_queue[1], label, std::to_string(figures.leased));
    add_line(lines[2], per_queue[2], label, std::to_string(figures.dead));
    add_line(lines[3], per_queue[3], label,
             figures.breaker == engine::Breaker::State::kClosed ? "0" : "1");
    const int64_t age_ms = figures.oldest_ready_at_ms == 0
                               ? 0
                               : std::max<int64_t>(0, server.now_wall_ms() - figures.oldest_ready_at_ms);
    add_line(lines[4], per_queue[4], label, std::to_string(age_ms / 1000.0));
  }
  for (int i = 0; i < 5; ++i) {
    out += std::string("# TYPE ") + per_queue[i] + " gauge\n" + lines[i];
  }
  out += server.transition_log().render_metrics();
  out += server.committer().render_metrics();
  return out;
}

}  // namespace tarde::net
