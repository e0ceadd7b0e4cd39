// The client half of the wire protocol: the connection, pipelining and the
// typed commands. The reply parsers are in replies.cc.
#include "clients/cpp/client.h"

#include <array>
#include <asio.hpp>
#include <charconv>

#include "net/wire/tokens.h"

namespace tarde::client {

using client_detail::bad_reply;
using client_detail::is_summary_kind;
using client_detail::kind_of;
using client_detail::parse_list;
using client_detail::split_tokens;
using client_detail::to_number;

namespace {

using Clock = std::chrono::steady_clock;

// A reply line longer than this means the stream is not a tarde server's: the
// longest real line (TX with a 200-byte tx_id and reason) is far shorter.
constexpr size_t kReplyLineBytesMax = 64 << 10;
// The largest REQUEST payload the client accepts: the server's own ceiling
// for --max-payload (64 MiB).
constexpr size_t kPayloadBytesMax = 64 << 20;
// The most EVENTS/LETTERS/STATS lines one reply may announce; the server caps
// lists at 100,000.
constexpr uint64_t kListLinesMax = 1'000'000;

// The ERR codes after which the server closes the connection (PROTOCOL.md
// "Errors").
bool closes_after(std::string_view code) {
  return code == "LINE_TOO_LONG" || code == "PAYLOAD_TOO_LARGE" || code == "BAD_PAYLOAD" ||
         code == "OVERLOADED" || code == "SHUTTING_DOWN";
}

std::string strip_eol(std::string line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

std::optional<std::string> flag01(const std::optional<bool>& v) {
  if (!v) return std::nullopt;
  return *v ? "1" : "0";
}

std::optional<std::string> number_text(const std::optional<uint64_t>& v) {
  if (!v) return std::nullopt;
  return std::to_string(*v);
}

// The extra time a RESERVE line's wait= lets the server take before replying.
std::chrono::milliseconds wait_allowance(std::string_view line) {
  const std::vector<std::string_view> tokens = split_tokens(line);
  if (tokens.empty() || tokens[0] != "RESERVE") return std::chrono::milliseconds(0);
  for (std::string_view token : tokens) {
    if (token.substr(0, 5) != "wait=") continue;
    auto wait = net::parse_duration_ms(token.substr(5), "wait");
    if (wait.is_ok()) return std::chrono::milliseconds(wait.value());
  }
  return std::chrono::milliseconds(0);
}
}  // namespace

// A request line under construction. Each token is checked so that it cannot
// break the framing (tx_id and queue fully, as the server would); the first
// refusal sticks and is reported, in the shape of an ERR, when the line is
// sent.
class Client::Line {
 public:
  explicit Line(std::string_view verb) : text_(verb) {}
  Line& queue(std::string_view queue) { return checked(net::parse_queue(queue)); }
  Line& tx(std::string_view tx_id) { return checked(net::parse_tx_id(tx_id)); }
  Line& word(std::string_view token, std::string_view name = "argument") {
    bool safe = !token.empty() && token.size() < net::kLineBytesMax;
    for (char c : token) safe = safe && c > 0x20 && c < 0x7F;
    if (!safe && status_.is_ok()) {
      status_ = Status::invalid_argument("BAD_ARGUMENT " + std::string(name) +
                                         " must be printable ASCII without spaces, got " +
                                         quote_token(token));
    }
    text_ += ' ';
    text_ += token;
    return *this;
  }
  Line& option(std::string_view name, const std::optional<std::string>& value) {
    return value ? word(std::string(name) + "=" + *value, name) : *this;
  }
  const Status& status() const { return status_; }
  const std::string& text() const { return text_; }

 private:
  Line& checked(const Result<std::string>& parsed) {
    if (!parsed.is_ok() && status_.is_ok()) {
      status_ = Status::invalid_argument("BAD_ARGUMENT " + parsed.status().message());
    }
    text_ += ' ';
    text_ += parsed.is_ok() ? parsed.value() : std::string("?");
    return *this;
  }

  std::string text_;
  Status status_;
};

// ---- the connection ----

// What one asio operation reported; its handler fills it in. It lives on the
// stack of the call that waits for it, which never returns before the handler
// ran (run_until drains an aborted operation).
struct Client::Completion {
  asio::error_code ec;
  size_t bytes = 0;
  bool done = false;
  auto handler() {
    return [this](const asio::error_code& e, size_t n) {
      ec = e;
      bytes = n;
      done = true;
    };
  }
};

struct Client::Transport {
  asio::io_context io;
  asio::ip::tcp::socket socket{io};
};

Client::Client(Options options)
    : options_(std::move(options)), transport_(std::make_unique<Transport>()) {}

bool Client::is_open() const { return transport_->socket.is_open(); }

Client::~Client() {
  asio::error_code ignored;
  transport_->socket.close(ignored);
}

Result<std::unique_ptr<Client>> Client::connect(const std::string& host, uint16_t port,
                                                Options options) {
  std::unique_ptr<Client> client(new Client(std::move(options)));
  const std::string where = host + ":" + std::to_string(port);
  asio::error_code ec;
  asio::ip::tcp::resolver resolver(client->transport_->io);
  const auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (ec) return Status::io_error("cannot resolve " + where + ": " + ec.message());
  Completion c;
  asio::async_connect(client->transport_->socket, endpoints,
                      [&c](const asio::error_code& e, const auto&) { c.handler()(e, 0); });
  const auto deadline = Clock::now() + client->options_.timeout;
  TARDE_RETURN_IF_ERROR(client->finish(c, deadline, "connect to " + where));
  client->transport_->socket.set_option(asio::ip::tcp::no_delay(true), ec);
  if (client->options_.auth_token)
    TARDE_RETURN_IF_ERROR(client->auth(*client->options_.auth_token));
  return client;
}

bool Client::run_until(const bool& done, Clock::time_point deadline) {
  transport_->io.restart();
  while (!done && transport_->io.run_one_until(deadline) > 0) {
  }
  if (done) return true;
  asio::error_code ignored;
  transport_->socket.close(ignored);  // aborts the operation; its handler runs below
  transport_->io.restart();
  transport_->io.run();
  return false;
}

Status Client::finish(Completion& c, Clock::time_point deadline, const std::string& doing) {
  if (!run_until(c.done, deadline)) return fail(Status::io_error("timed out trying to " + doing));
  if (c.ec == asio::error::eof) return fail(Status::io_error("the server closed the connection"));
  if (c.ec == asio::error::not_found) {
    return fail(Status::corruption("a reply line is longer than any tarde reply"));
  }
  if (c.ec) return fail(Status::io_error("cannot " + doing + ": " + c.ec.message()));
  return Status::ok();
}

Status Client::fail(Status status) {
  asio::error_code ignored;
  transport_->socket.close(ignored);
  waits_.clear();
  input_.clear();
  input_start_ = 0;
  return status;
}

// Lines are served from input_ at input_start_; the consumed prefix is
// dropped only before the next socket read, so a burst of pipelined replies
// costs one move per read, not one per line.
Result<std::string> Client::read_line(Clock::time_point deadline) {
  size_t newline = input_.find('\n', input_start_);
  if (newline == std::string::npos) {
    input_.erase(0, input_start_);
    input_start_ = 0;
    Completion c;
    asio::async_read_until(transport_->socket,
                           asio::dynamic_buffer(input_, input_.size() + kReplyLineBytesMax), '\n',
                           c.handler());
    TARDE_RETURN_IF_ERROR(finish(c, deadline, "read a reply"));
    newline = c.bytes - 1;
  }
  std::string line = input_.substr(input_start_, newline + 1 - input_start_);
  input_start_ = newline + 1;
  return line;
}

Result<std::string> Client::read_exact(size_t bytes, Clock::time_point deadline) {
  if (input_.size() - input_start_ < bytes) {
    input_.erase(0, input_start_);
    input_start_ = 0;
    Completion c;
    asio::async_read(transport_->socket, asio::dynamic_buffer(input_),
                     asio::transfer_exactly(bytes - input_.size()), c.handler());
    TARDE_RETURN_IF_ERROR(finish(c, deadline, "read a payload"));
  }
  std::string out = input_.substr(input_start_, bytes);
  input_start_ += bytes;
  return out;
}

Status Client::read_body(Reply* reply, Clock::time_point deadline) {
  const std::vector<std::string_view> t = split_tokens(reply->head);
  if (reply->kind == ReplyKind::kRequest) {
    size_t bytes = 0;
    if (t.size() != 6 || !to_number(t[5], &bytes) || bytes > kPayloadBytesMax) {
      return fail(bad_reply("REQUEST line", reply->head));
    }
    auto payload = read_exact(bytes + 2, deadline);
    if (!payload.is_ok()) return payload.status();
    if (payload.value().substr(bytes) != "\r\n") {
      return fail(Status::corruption("a REQUEST payload is not followed by CRLF"));
    }
    reply->text += payload.value();
    reply->payload = payload.value().substr(0, bytes);
    return Status::ok();
  }
  const bool listing = reply->kind == ReplyKind::kEvents || reply->kind == ReplyKind::kLetters ||
                       reply->kind == ReplyKind::kStats || reply->kind == ReplyKind::kItems;
  uint64_t count = 0;
  if (!listing) return Status::ok();
  // ITEMS carries the next page's cursor after its count.
  const size_t header_tokens = reply->kind == ReplyKind::kItems ? 3 : 2;
  if (t.size() != header_tokens || !to_number(t[1], &count) || count > kListLinesMax) {
    return fail(bad_reply("list header", reply->head));
  }
  for (uint64_t i = 0; i < count; ++i) {
    auto line = read_line(deadline);
    if (!line.is_ok()) return line.status();
    reply->text += line.value();
    reply->body.push_back(strip_eol(std::move(line).value()));
  }
  return Status::ok();
}

// ---- requests and replies ----

Status Client::send_only(std::string_view line, std::optional<std::string_view> payload) {
  if (!transport_->socket.is_open()) {
    return Status::io_error("not connected (the connection was closed)");
  }
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.find_first_of("\r\n") != std::string_view::npos) {
    return Status::invalid_argument("BAD_COMMAND a request line cannot contain CR or LF");
  }
  std::string bytes(line);
  if (payload) {
    bytes += ' ' + std::to_string(payload->size()) + "\r\n";
    bytes += *payload;
  }
  bytes += "\r\n";
  Completion c;
  asio::async_write(transport_->socket, asio::buffer(bytes), c.handler());
  TARDE_RETURN_IF_ERROR(finish(c, Clock::now() + options_.timeout, "send a request"));
  waits_.push_back(wait_allowance(line));
  return Status::ok();
}

Result<Reply> Client::read_reply() {
  if (waits_.empty()) return Status::invalid_argument("BAD_COMMAND no request awaits a reply");
  if (!transport_->socket.is_open()) return fail(Status::io_error("not connected"));
  const auto deadline = Clock::now() + options_.timeout + waits_.front();
  auto head = read_line(deadline);
  if (!head.is_ok()) return head.status();
  Reply reply;
  reply.text = head.value();
  reply.head = strip_eol(std::move(head).value());
  reply.kind = kind_of(reply.head.substr(0, reply.head.find(' ')));
  TARDE_RETURN_IF_ERROR(read_body(&reply, deadline));
  waits_.pop_front();
  if (reply.kind == ReplyKind::kErr) {
    const size_t code_end = std::min(reply.head.find(' ', 4), reply.head.size());
    reply.error_code = reply.head.substr(4, code_end - std::min<size_t>(4, code_end));
    if (code_end < reply.head.size()) reply.error_message = reply.head.substr(code_end + 1);
    if (closes_after(reply.error_code)) (void)fail(Status::ok());
  }
  if (reply.kind == ReplyKind::kBye) (void)fail(Status::ok());
  return reply;
}

Result<Reply> Client::call(std::string_view line, std::optional<std::string_view> payload) {
  if (!waits_.empty()) {
    return Status::busy(std::to_string(waits_.size()) + " pipelined replies are unread");
  }
  TARDE_RETURN_IF_ERROR(send_only(line, payload));
  return read_reply();
}

Result<Reply> Client::typed_call(const Line& line, std::optional<std::string_view> payload) {
  TARDE_RETURN_IF_ERROR(line.status());
  auto reply = call(line.text(), payload);
  if (!reply.is_ok()) return reply.status();
  if (reply.value().kind == ReplyKind::kErr) {
    return Status::invalid_argument(reply.value().error_code + " " + reply.value().error_message);
  }
  return reply;
}

Result<Summary> Client::summary_call(const Line& line, std::optional<std::string_view> payload) {
  auto reply = typed_call(line, payload);
  if (!reply.is_ok()) return reply.status();
  return parse_summary(reply.value().head);
}

Status Client::expect_call(const Line& line, ReplyKind kind) {
  auto reply = typed_call(line);
  if (!reply.is_ok()) return reply.status();
  return reply.value().kind == kind ? Status::ok() : bad_reply("reply", reply.value().head);
}

Result<Summary> Client::enqueue(std::string_view queue, std::string_view tx_id,
                                std::string_view payload, const EnqueueOptions& o) {
  Line line("ENQUEUE");
  line.queue(queue).tx(tx_id).option("max_attempts", number_text(o.max_attempts));
  line.option("base", o.base).option("factor", o.factor).option("cap", o.cap);
  line.option("jitter", o.jitter).option("strict_cap", flag01(o.strict_cap));
  line.option("deadline", o.deadline).option("sent", flag01(o.sent)).option("delay", o.delay);
  return summary_call(line, payload);
}

Result<std::optional<ReservedRequest>> Client::reserve(std::string_view queue,
                                                       std::chrono::milliseconds wait) {
  Line line("RESERVE");
  line.queue(queue);
  if (wait.count() > 0) line.option("wait", std::to_string(wait.count()) + "ms");
  auto reply = typed_call(line);
  if (!reply.is_ok()) return reply.status();
  if (reply.value().kind == ReplyKind::kEmpty) return std::optional<ReservedRequest>();
  auto request = parse_request(reply.value());
  if (!request.is_ok()) return request.status();
  return std::optional<ReservedRequest>(std::move(request).value());
}

Result<Summary> Client::sent(std::string_view tx_id, uint32_t attempt) {
  return summary_call(Line("SENT").tx(tx_id).word(std::to_string(attempt)));
}

Result<Summary> Client::release(std::string_view tx_id, uint32_t attempt, const ReleaseOptions& o) {
  return summary_call(Line("RELEASE")
                          .tx(tx_id)
                          .word(std::to_string(attempt))
                          .option("delay", o.delay)
                          .option("reason", o.reason));
}

Result<Summary> Client::respond(std::string_view tx_id, uint32_t attempt, Answer answer,
                                const RespondOptions& o) {
  return summary_call(Line("RESPOND")
                          .tx(tx_id)
                          .word(std::to_string(attempt))
                          .word(answer_name(answer))
                          .option("reason", o.reason)
                          .option("retry_after", o.retry_after));
}

Result<Summary> Client::resolve(std::string_view tx_id, Terminal terminal,
                                std::optional<std::string> reason) {
  const char* word = terminal == Terminal::kSucceeded ? "SUCCEEDED" : "FAILED";
  return summary_call(Line("RESOLVE").tx(tx_id).word(word).option("reason", reason));
}

Result<Summary> Client::redrive(std::string_view queue, std::string_view tx_id) {
  return summary_call(Line("REDRIVE").queue(queue).tx(tx_id));
}

Result<TxInfo> Client::get(std::string_view tx_id) {
  auto reply = typed_call(Line("GET").tx(tx_id));
  if (!reply.is_ok()) return reply.status();
  if (reply.value().kind == ReplyKind::kNotFound) {
    return Status::not_found("no transaction " + std::string(tx_id));
  }
  return parse_tx_info(reply.value().head);
}

Result<std::vector<TxEvent>> Client::history(std::string_view tx_id,
                                             std::optional<uint64_t> limit) {
  auto reply = typed_call(Line("HISTORY").tx(tx_id).option("limit", number_text(limit)));
  if (!reply.is_ok()) return reply.status();
  if (reply.value().kind == ReplyKind::kNotFound) {
    return Status::not_found("no transaction " + std::string(tx_id));
  }
  return parse_list<TxEvent>(reply.value(), ReplyKind::kEvents, parse_event);
}

Result<std::vector<DeadLetterInfo>> Client::deadletters(std::string_view queue,
                                                        std::optional<uint64_t> limit) {
  auto reply = typed_call(Line("DEADLETTERS").queue(queue).option("limit", number_text(limit)));
  if (!reply.is_ok()) return reply.status();
  return parse_list<DeadLetterInfo>(reply.value(), ReplyKind::kLetters, parse_letter);
}

Result<ListPage> Client::list(std::string_view queue, std::string_view state,
                              const ListOptions& options) {
  Line line("LIST");
  line.queue(queue).word(state, "state");
  line.option("after", options.after).option("limit", number_text(options.limit));
  line.option("prefix", options.prefix).option("reason", options.reason);
  auto reply = typed_call(line);
  if (!reply.is_ok()) return reply.status();
  return parse_list_page(reply.value());
}

Result<QueueSettings> Client::config(
    std::string_view queue, const std::vector<std::pair<std::string, std::string>>& settings) {
  Line line("CONFIG");
  line.queue(queue);
  for (const auto& [name, value] : settings) line.option(name, value);
  auto reply = typed_call(line);
  if (!reply.is_ok()) return reply.status();
  return parse_config(reply.value().head);
}

Result<ServerStats> Client::stats() {
  auto reply = typed_call(Line("STATS"));
  if (!reply.is_ok()) return reply.status();
  return parse_stats(reply.value());
}

Status Client::ping() { return expect_call(Line("PING"), ReplyKind::kPong); }

Status Client::auth(std::string_view token) {
  return expect_call(Line("AUTH").word(token, "token"), ReplyKind::kOk);
}

Status Client::quit() { return expect_call(Line("QUIT"), ReplyKind::kBye); }

const char* answer_name(Answer answer) {
  switch (answer) {
    case Answer::kSuccess:
      return "SUCCESS";
    case Answer::kCancelled:
      return "CANCELLED";
    case Answer::kTransient:
      return "TRANSIENT";
    case Answer::kRejected:
      return "REJECTED";
  }
  return "?";
}

}  // namespace tarde::client
