#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tarde::testing {

// Wall-clock milliseconds since the Unix epoch, the unit of every time in a
// tarde reply.
int64_t wall_ms();

// Splits a reply line on single spaces.
std::vector<std::string> split_words(std::string_view line);

// `<STATUS> <tx_id> <state> <attempt> <next_attempt> <next_fire_at>` taken
// apart; throws std::runtime_error when the line has another shape.
struct Summary {
  std::string status;
  std::string tx_id;
  std::string state;
  uint32_t attempt = 0;
  uint32_t next_attempt = 0;
  int64_t next_fire_at = 0;
};
Summary parse_summary(std::string_view line);

// The `name=value` words of a TX, EVENT or LETTER line (the first word is
// skipped); throws when a word after the first has no '='.
std::map<std::string, std::string> parse_fields(std::string_view line);

// A REQUEST reply of RESERVE, or whatever other line came instead.
struct Request {
  std::string line;         // the reply line without CRLF
  bool is_request = false;  // true when `line` is `REQUEST ...`
  std::string tx_id;
  uint32_t attempt = 0;
  std::string key;        // the idempotency key
  uint32_t handouts = 0;  // hand-outs of this request, this one included
  std::string payload;
  int64_t received_at_ms = 0;  // wall_ms() when the reply line was read
};

// RawClient is a blocking TCP client of tarde for protocol tests: it sends
// exactly the bytes it is given and reads replies with a bounded wait. Every
// read throws std::runtime_error on timeout, on EOF and on socket errors, so a
// server that hangs or closes too early fails the test instead of blocking it.
class RawClient {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout{10'000};

  explicit RawClient(uint16_t port, std::chrono::milliseconds timeout = kDefaultTimeout);
  ~RawClient();
  RawClient(RawClient&& other) noexcept;
  RawClient& operator=(RawClient&&) = delete;
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  // Writes all of `bytes`. Throws if the connection is broken.
  void send(std::string_view bytes);
  // Like send, but reports failure (the peer closed) instead of throwing.
  bool try_send(std::string_view bytes);
  // One line up to CRLF, without the CRLF. A bare LF in a reply is an error.
  std::string read_line();
  std::string read_exact(size_t n);
  // Sends `line` + CRLF and reads one reply line.
  std::string command(std::string_view line);
  // Sends `ENQUEUE <args> <payload.size()>\r\n<payload>\r\n` and reads the reply line.
  std::string enqueue(std::string_view args, std::string_view payload = "payload");
  // Reads one reply and, when it is `REQUEST ...`, its payload and CRLF too.
  Request read_request();
  // Sends `line` + CRLF (a RESERVE) and reads the reply with read_request.
  Request request(std::string_view line);
  // Reads a reply with a count line (`EVENTS n`, `LETTERS n`, `STATS n`):
  // the count line first, then the n lines.
  std::vector<std::string> read_block();
  // Sends `line` + CRLF and reads the block reply.
  std::vector<std::string> block(std::string_view line);
  // Waits up to `wait` for the peer to close; true on EOF or reset, false
  // when bytes arrive or the wait ends with the connection still open.
  bool is_closed_by_peer(std::chrono::milliseconds wait = std::chrono::seconds(3));
  // Closes the socket now (a client disconnect).
  void close();

  int fd() const { return fd_; }
  // Bytes received but not yet read by a read_* call.
  const std::string& buffered() const { return buffer_; }

 private:
  // Reads more bytes into buffer_ before `deadline`; throws on EOF/timeout.
  void fill(std::chrono::steady_clock::time_point deadline, std::string_view waiting_for);

  int fd_ = -1;
  std::chrono::milliseconds timeout_;
  std::string buffer_;
};

}  // namespace tarde::testing
