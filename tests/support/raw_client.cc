#include "tests/support/raw_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>

namespace tarde::testing {
namespace {

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

std::string shown(std::string_view bytes) {
  constexpr size_t kShownMax = 200;
  std::string out;
  for (size_t i = 0; i < bytes.size() && i < kShownMax; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7F) {
      out.push_back(static_cast<char>(c));
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  if (bytes.size() > kShownMax) out += "...";
  return out;
}

uint32_t to_u32(std::string_view text) {
  uint32_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw std::runtime_error("not a number: '" + std::string(text) + "'");
  }
  return value;
}

}  // namespace

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<std::string> split_words(std::string_view line) {
  std::vector<std::string> words;
  size_t pos = 0;
  while (pos <= line.size()) {
    const size_t space = line.find(' ', pos);
    if (space == std::string_view::npos) {
      words.emplace_back(line.substr(pos));
      break;
    }
    words.emplace_back(line.substr(pos, space - pos));
    pos = space + 1;
  }
  return words;
}

Summary parse_summary(std::string_view line) {
  const std::vector<std::string> words = split_words(line);
  if (words.size() != 6)
    throw std::runtime_error("not a summary line: '" + std::string(line) + "'");
  Summary s;
  s.status = words[0];
  s.tx_id = words[1];
  s.state = words[2];
  s.attempt = to_u32(words[3]);
  s.next_attempt = to_u32(words[4]);
  int64_t fire = 0;
  const auto [end, ec] = std::from_chars(words[5].data(), words[5].data() + words[5].size(), fire);
  if (ec != std::errc() || end != words[5].data() + words[5].size()) {
    throw std::runtime_error("bad next_fire_at in '" + std::string(line) + "'");
  }
  s.next_fire_at = fire;
  return s;
}

std::map<std::string, std::string> parse_fields(std::string_view line) {
  std::map<std::string, std::string> fields;
  const std::vector<std::string> words = split_words(line);
  for (size_t i = 1; i < words.size(); ++i) {
    const size_t eq = words[i].find('=');
    if (eq == std::string::npos) {
      throw std::runtime_error("word without '=' in '" + std::string(line) + "'");
    }
    fields[words[i].substr(0, eq)] = words[i].substr(eq + 1);
  }
  return fields;
}

RawClient::RawClient(uint16_t port, std::chrono::milliseconds timeout) : timeout_(timeout) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error(errno_text("socket"));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int rc = 0;
  do {
    rc = ::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  } while (rc < 0 && errno == EINTR);
  if (rc < 0) {
    const std::string message = errno_text("connect");
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error(message);
  }
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

RawClient::~RawClient() { close(); }

RawClient::RawClient(RawClient&& other) noexcept
    : fd_(other.fd_), timeout_(other.timeout_), buffer_(std::move(other.buffer_)) {
  other.fd_ = -1;
}

void RawClient::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool RawClient::try_send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void RawClient::send(std::string_view bytes) {
  if (fd_ < 0) throw std::runtime_error("send on a closed client");
  if (!try_send(bytes)) throw std::runtime_error(errno_text("send"));
}

void RawClient::fill(std::chrono::steady_clock::time_point deadline, std::string_view waiting_for) {
  if (fd_ < 0) throw std::runtime_error("read on a closed client");
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      throw std::runtime_error("timed out waiting for " + std::string(waiting_for) +
                               "; buffered: '" + shown(buffer_) + "'");
    }
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(errno_text("poll"));
    }
    if (ready == 0) continue;
    char chunk[64 * 1024];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw std::runtime_error(errno_text("recv") + " waiting for " + std::string(waiting_for) +
                               "; buffered: '" + shown(buffer_) + "'");
    }
    if (n == 0) {
      throw std::runtime_error("connection closed by the server waiting for " +
                               std::string(waiting_for) + "; buffered: '" + shown(buffer_) + "'");
    }
    buffer_.append(chunk, static_cast<size_t>(n));
    return;
  }
}

std::string RawClient::read_line() {
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  size_t searched = 0;
  while (true) {
    const size_t lf = buffer_.find('\n', searched);
    if (lf != std::string::npos) {
      if (lf == 0 || buffer_[lf - 1] != '\r') {
        throw std::runtime_error("reply line not ended by CRLF: '" + shown(buffer_) + "'");
      }
      std::string line = buffer_.substr(0, lf - 1);
      buffer_.erase(0, lf + 1);
      return line;
    }
    searched = buffer_.size();
    fill(deadline, "a reply line");
  }
}

std::string RawClient::read_exact(size_t n) {
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (buffer_.size() < n) fill(deadline, std::to_string(n) + " bytes");
  std::string out = buffer_.substr(0, n);
  buffer_.erase(0, n);
  return out;
}

std::string RawClient::command(std::string_view line) {
  std::string bytes(line);
  bytes += "\r\n";
  send(bytes);
  return read_line();
}

std::string RawClient::enqueue(std::string_view args, std::string_view payload) {
  std::string bytes = "ENQUEUE ";
  bytes += args;
  bytes += ' ';
  bytes += std::to_string(payload.size());
  bytes += "\r\n";
  bytes += payload;
  bytes += "\r\n";
  send(bytes);
  return read_line();
}

Request RawClient::read_request() {
  Request r;
  r.line = read_line();
  r.received_at_ms = wall_ms();
  if (r.line.rfind("REQUEST ", 0) != 0) return r;
  const std::vector<std::string> words = split_words(r.line);
  if (words.size() != 6) throw std::runtime_error("malformed REQUEST line: '" + r.line + "'");
  r.is_request = true;
  r.tx_id = words[1];
  r.attempt = to_u32(words[2]);
  r.key = words[3];
  r.handouts = to_u32(words[4]);
  const size_t bytes = to_u32(words[5]);
  r.payload = read_exact(bytes);
  const std::string end = read_exact(2);
  if (end != "\r\n") throw std::runtime_error("REQUEST payload not followed by CRLF");
  return r;
}

Request RawClient::request(std::string_view line) {
  std::string bytes(line);
  bytes += "\r\n";
  send(bytes);
  return read_request();
}

std::vector<std::string> RawClient::read_block() {
  std::vector<std::string> lines;
  lines.push_back(read_line());
  const std::vector<std::string> words = split_words(lines.front());
  // `ITEMS n next=<cursor>` (LIST) carries a cursor after its count.
  const bool items = words.size() == 3 && words[0] == "ITEMS";
  if ((words.size() != 2 && !items) || words[0] == "ERR" || words[0] == "NOT_FOUND") return lines;
  const uint32_t count = to_u32(words[1]);
  for (uint32_t i = 0; i < count; ++i) lines.push_back(read_line());
  return lines;
}

std::vector<std::string> RawClient::block(std::string_view line) {
  std::string bytes(line);
  bytes += "\r\n";
  send(bytes);
  return read_block();
}

bool RawClient::is_closed_by_peer(std::chrono::milliseconds wait) {
  if (fd_ < 0) return true;
  if (!buffer_.empty()) return false;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (ready == 0) return false;
    char chunk[4096];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n == 0) return true;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return errno == ECONNRESET || errno == EPIPE;
    }
    buffer_.append(chunk, static_cast<size_t>(n));
    return false;
  }
}

}  // namespace tarde::testing
