// The client half of the wire protocol: the connection, pipelining and the
// typed commands. The reply parsers are in replies.cc.
#include "clients/cpp/client.h"

#include <array>
#include <asio.hpp>
#include <charconv>

#include "clients/cpp/request_line.h"
#include "net/wire/tokens.h"

namespace tarde::client {

using client_detail::bad_reply;
using client_detail::is_summary_kind;
using client_detail::kind_of;
using client_detail::number_text;
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

// Whether a line asks for payloads after its reply lines (GET or
// DEADLETTERS with payload=1), so that the reply can be framed.
bool asks_payloads(std::string_view line) {
  const std::vector<std::string_view> tokens = split_tokens(line);
  if (tokens.empty() || (tokens[0] != "GET" && tokens[0] != "DEADLETTERS")) return false;
  for (size_t i = 2; i < tokens.size(); ++i) {
    if (tokens[i] == "payload=1") return true;
  }
  return false;
}

// The payload_bytes=N of a TX or LETTER line.
std::optional<size_t> payload_bytes_of(std::string_view line) {
  for (std::string_view token : split_tokens(line)) {
    if (token.substr(0, 14) != "payload_bytes=") continue;
    size_t bytes = 0;
    if (to_number(token.substr(14), &bytes)) return bytes;
  }
  return std::nullopt;
}
}  // namespace

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

// `bytes` of payload and its CRLF, as REQUEST, TX and LETTER carry them;
// the framed bytes are appended to `text`.
Result<std::string> Client::read_payload(size_t bytes, Clock::time_point deadline) {
  if (bytes > kPayloadBytesMax) return fail(Status::corruption("a payload is too large"));
  auto payload = read_exact(bytes + 2, deadline);
  if (!payload.is_ok()) return payload.status();
  if (payload.value().substr(bytes) != "\r\n") {
    return fail(Status::corruption("a payload is not followed by CRLF"));
  }
  return payload;
}

Status Client::read_body(Reply* reply, bool payloads, Clock::time_point deadline) {
  const std::vector<std::string_view> t = split_tokens(reply->head);
  std::optional<size_t> bytes;
  if (reply->kind == ReplyKind::kRequest) {
    size_t n = 0;
    if (t.size() != 6 || !to_number(t[5], &n)) return fail(bad_reply("REQUEST line", reply->head));
    bytes = n;
  } else if (reply->kind == ReplyKind::kTx && payloads) {
    bytes = payload_bytes_of(reply->head);
    if (!bytes) return fail(bad_reply("TX line", reply->head));
  }
  if (bytes) {
    auto payload = read_payload(*bytes, deadline);
    if (!payload.is_ok()) return payload.status();
    reply->text += payload.value();
    reply->payload = payload.value().substr(0, *bytes);
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
    if (!payloads || reply->kind != ReplyKind::kLetters) continue;
    const std::optional<size_t> n = payload_bytes_of(reply->body.back());
    if (!n) return fail(bad_reply("LETTER line", reply->body.back()));
    auto payload = read_payload(*n, deadline);
    if (!payload.is_ok()) return payload.status();
    reply->text += payload.value();
    reply->payloads.push_back(payload.value().substr(0, *n));
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
  waits_.push_back(Awaited{wait_allowance(line), asks_payloads(line)});
  return Status::ok();
}

Result<Reply> Client::read_reply() {
  if (waits_.empty()) return Status::invalid_argument("BAD_COMMAND no request awaits a reply");
  if (!transport_->socket.is_open()) return fail(Status::io_error("not connected"));
  const auto deadline = Clock::now() + options_.timeout + waits_.front().wait;
  auto head = read_line(deadline);
  if (!head.is_ok()) return head.status();
  Reply reply;
  reply.text = head.value();
  reply.head = strip_eol(std::move(head).value());
  reply.kind = kind_of(reply.head.substr(0, reply.head.find(' ')));
  TARDE_RETURN_IF_ERROR(read_body(&reply, waits_.front().payloads, deadline));
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
  return reserve_line(line);
}

Result<std::optional<ReservedRequest>> Client::reserve_line(const Line& line) {
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
                                                        std::optional<uint64_t> limit,
                                                        bool with_payload) {
  Line line("DEADLETTERS");
  line.queue(queue).option("limit", number_text(limit));
  if (with_payload) line.option("payload", std::string("1"));
  auto reply = typed_call(line);
  if (!reply.is_ok()) return reply.status();
  auto letters = parse_list<DeadLetterInfo>(reply.value(), ReplyKind::kLetters, parse_letter);
  if (!letters.is_ok() || !with_payload) return letters;
  if (reply.value().payloads.size() != letters.value().size()) {
    return bad_reply("LETTERS reply", reply.value().head);
  }
  for (size_t i = 0; i < letters.value().size(); ++i) {
    letters.value()[i].payload = reply.value().payloads[i];
  }
  return letters;
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

Result<BackupMade> Client::backup() {
  auto reply = typed_call(Line("BACKUP"));
  if (!reply.is_ok()) return reply.status();
  if (reply.value().kind != ReplyKind::kBackup) return bad_reply("reply", reply.value().head);
  return parse_backup(reply.value().head);
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
