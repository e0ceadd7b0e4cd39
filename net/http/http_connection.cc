#include "net/http/http_connection.h"

#include "net/core/core.h"
#include "net/http/request.h"

namespace tarde::net::http {

HttpConnection::HttpConnection(ConnectionHost& host, asio::ip::tcp::socket socket)
    : host_(host), socket_(std::move(socket)), deadline_(socket_.get_executor()) {}

void HttpConnection::start() {
  deadline_.expires_after(kRequestDeadline);
  deadline_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
    if (!ec) self->close();
  });
  do_read();
}

void HttpConnection::refuse() {
  deadline_.expires_after(kRequestDeadline);
  deadline_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
    if (!ec) self->close();
  });
  respond(error_response(503, "too many HTTP connections; try again"));
}

void HttpConnection::do_read() {
  socket_.async_read_some(asio::buffer(chunk_),
                          [self = shared_from_this()](const asio::error_code& ec, size_t bytes) {
                            self->on_read(ec, bytes);
                          });
}

void HttpConnection::on_read(const asio::error_code& ec, size_t bytes) {
  if (closed_) return;
  if (ec) {
    close();
    return;
  }
  input_.append(chunk_.data(), bytes);
  ParseResult parsed = parse_request(input_);
  if (parsed.kind == ParseResult::Kind::kNeedMore) {
    do_read();
    return;
  }
  if (parsed.kind == ParseResult::Kind::kError) {
    respond(error_response(parsed.status, parsed.message));
    return;
  }
  head_only_ = parsed.request.method == "HEAD";
  Request request = std::move(parsed.request);
  input_.clear();  // one request per connection: anything after it is ignored
  Core& core = host_.core();
  core.reset_observed();
  Response response = host_.dispatch(request);
  dep_ = core.observed_seq();
  core.after_commands();  // commits what an action staged
  if (closed_) return;    // the server closed while the handler ran
  if (dep_ > core.committed_seq()) {
    waiting_ = std::move(response);
    core.wait_for_commit(shared_from_this(), dep_);
    return;
  }
  respond(response);
}

void HttpConnection::on_commit(uint64_t seq, bool ok) {
  if (closed_ || !waiting_) return;
  Core& core = host_.core();
  if (!ok && dep_ >= seq) {
    waiting_.reset();
    respond(error_response(500, "the store refused the write; nothing was changed"));
    return;
  }
  if (dep_ > core.committed_seq()) {
    core.wait_for_commit(shared_from_this(), dep_);
    return;
  }
  Response response = std::move(*waiting_);
  waiting_.reset();
  respond(response);
}

void HttpConnection::respond(const Response& response) {
  output_ = render_response(response, head_only_);
  asio::async_write(
      socket_, asio::buffer(output_),
      [self = shared_from_this()](const asio::error_code&, size_t) { self->on_write(); });
}

void HttpConnection::on_write() {
  asio::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  close();
}

void HttpConnection::close() {
  if (closed_) return;
  closed_ = true;
  asio::error_code ignored;
  socket_.close(ignored);
  deadline_.cancel();
  host_.core().forget_commit_waiter(this);
  host_.forget(this);  // may release this connection's last owner but one
}

}  // namespace tarde::net::http
