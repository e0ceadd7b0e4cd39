#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "clients/cpp/replies.h"

// A blocking client of the tarde wire protocol (net/PROTOCOL.md), for
// scripts, tools, benchmarks and tests. It includes nothing of the server:
// it speaks the wire format (net/wire/) and reads replies with the parsers
// of clients/cpp/replies.h.
//
// Errors, everywhere in this header:
// - transport problems (connect refused, timeout, the server closed the
//   connection, a reply that breaks the framing) are a Status: io_error for
//   the first three, corruption for the last. After one, the connection is
//   closed, since replies can no longer be matched to requests.
// - an `ERR <CODE> <message>` reply is, for the typed calls,
//   Status::invalid_argument whose message is "<CODE> <message>" (use
//   server_error_code() to get the code). Arguments the client refuses
//   before sending (a token with a space would break the framing) give the
//   same shape, "BAD_ARGUMENT <message>". call() and read_reply() never turn
//   a reply into a Status: they return it with kind kErr.
// - outcomes that are answers, not failures (STALE, CONFLICT, NOT_FOUND,
//   BURIED, EXISTS) come back in Summary::status.
namespace tarde::client {

namespace client_detail {
class RequestLine;  // request_line.h
}  // namespace client_detail

// ENQUEUE's optional arguments; unset ones are not sent, so the queue's
// configuration applies. Durations and decimals are given in their wire form
// ("2h", "1500ms", "1.6") and checked by the server.
struct EnqueueOptions {
  std::optional<uint32_t> max_attempts;
  std::optional<std::string> base;
  std::optional<std::string> factor;
  std::optional<std::string> cap;
  std::optional<std::string> jitter;
  std::optional<bool> strict_cap;
  std::optional<std::string> deadline;
  std::optional<bool> sent;
  std::optional<std::string> delay;
};

// RELEASE's optional arguments.
struct ReleaseOptions {
  std::optional<std::string> delay;  // DUR
  std::optional<std::string> reason;
};

// LIST's optional arguments: the cursor a previous page returned
// (ListPage::next), the page size (1–1000; the server's default 100), a tx_id
// prefix and a reason to match.
struct ListOptions {
  std::optional<std::string> after;
  std::optional<uint64_t> limit;
  std::optional<std::string> prefix;
  std::optional<std::string> reason;
};

// The external service's answer, for RESPOND.
enum class Answer { kSuccess, kCancelled, kTransient, kRejected };
const char* answer_name(Answer answer);

// RESPOND's optional arguments.
struct RespondOptions {
  std::optional<std::string> reason;
  std::optional<std::string> retry_after;  // DUR
};

// The terminal state RESOLVE sets.
enum class Terminal { kSucceeded, kFailed };

// Which dead letters redrive_all and resolve_all change (PROTOCOL.md
// "REDRIVE_ALL"); unset fields are not sent (the server's default limit is 100).
struct LetterFilter {
  std::optional<std::string> prefix;      // the tx_id starts with it
  std::optional<std::string> last_error;  // the last failed delivery's reason
  std::optional<uint64_t> limit;          // 1-10000
};

// How a Client connects and how long it waits.
struct ClientOptions {
  // Bounds the connect and each wait for a reply (a RESERVE's own wait= is
  // added to it). When it passes, the call fails with io_error and the
  // connection is closed.
  std::chrono::milliseconds timeout{30'000};
  // Sent with AUTH right after connecting when set.
  std::optional<std::string> auth_token;
};

// Client is one connection to a tarde server. It is owned by one thread at a
// time (it is not thread-safe) and lives until destroyed, which closes the
// connection without QUIT. Every call blocks until its reply arrives or
// ClientOptions::timeout passes. Leases taken by reserve() belong to this
// connection and are given back by the server when it closes.
class Client {
 public:
  using Options = ClientOptions;

  // Resolves and connects to host:port, then sends AUTH when the options hold
  // a token. io_error when that fails or times out; invalid_argument
  // "UNAUTHORIZED ..." when the token is refused.
  static Result<std::unique_ptr<Client>> connect(const std::string& host, uint16_t port,
                                                 Options options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // The transaction commands. Each returns the reply's summary, whose status
  // is the reply word (CREATED/EXISTS, OK, BURIED, STALE, CONFLICT,
  // NOT_FOUND).
  Result<Summary> enqueue(std::string_view queue, std::string_view tx_id, std::string_view payload,
                          const EnqueueOptions& options = {});
  Result<Summary> sent(std::string_view tx_id, uint32_t attempt);
  Result<Summary> release(std::string_view tx_id, uint32_t attempt,
                          const ReleaseOptions& options = {});
  Result<Summary> respond(std::string_view tx_id, uint32_t attempt, Answer answer,
                          const RespondOptions& options = {});
  Result<Summary> resolve(std::string_view tx_id, Terminal terminal,
                          std::optional<std::string> reason = {});
  Result<Summary> redrive(std::string_view queue, std::string_view tx_id);
  // TOUCH: extends the lease this connection holds (OK), or STALE.
  Result<Summary> touch(std::string_view tx_id, uint32_t attempt);

  // Queue administration. pause/resume are idempotent. redrive_all and
  // resolve_all return how many dead letters they changed.
  Status pause(std::string_view queue);
  Status resume(std::string_view queue);
  Result<uint64_t> redrive_all(std::string_view queue, const LetterFilter& filter = {});
  Result<uint64_t> resolve_all(std::string_view queue, Terminal terminal,
                               const LetterFilter& filter = {},
                               std::optional<std::string> reason = {});

  // A request, or nullopt for EMPTY. A nonzero wait is sent as wait=<ms>ms
  // and added to the reply timeout.
  Result<std::optional<ReservedRequest>> reserve(
      std::string_view queue, std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  // RESERVE over several queues (1-16): the server rotates which it tries
  // first on each call of this connection. The reply does not name the
  // queue; get() does.
  Result<std::optional<ReservedRequest>> reserve_any(
      const std::vector<std::string>& queues,
      std::chrono::milliseconds wait = std::chrono::milliseconds(0));

  // not_found when the server answers NOT_FOUND.
  Result<TxInfo> get(std::string_view tx_id);
  // GET payload=1: the TxInfo with its payload set.
  Result<TxInfo> get_payload(std::string_view tx_id);
  Result<std::vector<TxEvent>> history(std::string_view tx_id, std::optional<uint64_t> limit = {});
  // With with_payload, each letter's payload is read too (the server stops
  // a listing before 8 MiB of payloads).
  Result<std::vector<DeadLetterInfo>> deadletters(std::string_view queue,
                                                  std::optional<uint64_t> limit = {},
                                                  bool with_payload = false);
  // One page of a queue's transactions in one state: "ready", "leased",
  // "in_flight", "scheduled", "succeeded", "failed" or "dead". Follow
  // ListPage::next (as options.after) until it is nullopt.
  Result<ListPage> list(std::string_view queue, std::string_view state,
                        const ListOptions& options = {});

  // Sets the given name=value settings (none: just reads) and returns them all.
  Result<QueueSettings> config(
      std::string_view queue,
      const std::vector<std::pair<std::string, std::string>>& settings = {});
  Result<ServerStats> stats();
  // Makes a backup into the server's --backup-dir and returns once it is
  // made and verified, which takes as long as copying what changed since the
  // last backup: raise ClientOptions::timeout for a large store. The server's
  // refusals are invalid_argument "NOT_CONFIGURED ..." (no --backup-dir),
  // "BUSY ..." (one is running), "BACKUP_FAILED ...".
  Result<BackupMade> backup();
  Status ping();
  Status auth(std::string_view token);
  // Sends QUIT, waits for BYE, and closes the connection.
  Status quit();

  // Sends one protocol line (no CRLF; a trailing one is dropped) and returns
  // the complete reply, whatever it is (an ERR is a reply, not a Status).
  // With a payload, its length is appended to the line as the last token and
  // the payload follows. busy while pipelined replies are unread.
  Result<Reply> call(std::string_view line, std::optional<std::string_view> payload = {});

  // Pipelining: send_only writes a request (as call() does) without waiting;
  // read_reply returns the oldest unread reply. The server answers in order
  // and stops reading a connection with 1024 unsent replies, so keep at most
  // a few hundred requests in flight, or read while writing.
  Status send_only(std::string_view line, std::optional<std::string_view> payload = {});
  Result<Reply> read_reply();

  // Requests sent whose replies are not read yet.
  size_t in_flight() const { return waits_.size(); }
  bool is_open() const;

 private:
  explicit Client(Options options);

  using Line = client_detail::RequestLine;
  struct Completion;
  // The io_context and socket, kept out of this header so that it needs no
  // Asio headers (an installed client includes only tarde's).
  struct Transport;

  Result<Reply> typed_call(const Line& line, std::optional<std::string_view> payload = {});
  Result<Summary> summary_call(const Line& line, std::optional<std::string_view> payload = {});
  Status expect_call(const Line& line, ReplyKind kind);
  Result<std::string> read_line(std::chrono::steady_clock::time_point deadline);
  Result<std::string> read_exact(size_t bytes, std::chrono::steady_clock::time_point deadline);
  Status read_body(Reply* reply, bool payloads, std::chrono::steady_clock::time_point deadline);
  Result<std::string> read_payload(size_t bytes, std::chrono::steady_clock::time_point deadline);
  Result<std::optional<ReservedRequest>> reserve_line(const Line& line);
  // Runs the io_context until the started operation sets `done` or the
  // deadline passes; false on timeout (the socket is then closed).
  bool run_until(const bool& done, std::chrono::steady_clock::time_point deadline);
  // The Status of a completed operation: ok, or io_error naming `doing`
  // after closing the connection.
  Status finish(Completion& completion, std::chrono::steady_clock::time_point deadline,
                const std::string& doing);
  // Closes the connection (replies can no longer be matched) and returns `status`.
  Status fail(Status status);

  Options options_;
  std::unique_ptr<Transport> transport_;
  std::string input_;  // bytes read; those before input_start_ are consumed
  size_t input_start_ = 0;
  // Per unread reply: its extra wait, and whether payloads follow its lines
  // (a GET or DEADLETTERS sent with payload=1).
  struct Awaited {
    std::chrono::milliseconds wait{0};
    bool payloads = false;
  };
  std::deque<Awaited> waits_;
};

}  // namespace tarde::client
