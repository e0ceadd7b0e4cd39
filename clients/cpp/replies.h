#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

// What a tarde server replies, as types, and the parsers that read each
// reply of net/PROTOCOL.md into them. Pure functions of the reply text, used
// by the Client (client.h) and by tools that hold raw replies. Any thread.
namespace tarde::client {

// The first word of a reply, so that a caller can branch on what the server
// said without comparing strings.
enum class ReplyKind {
  kCreated,
  kExists,
  kOk,  // `OK <summary>` and the bare `OK` of AUTH
  kBuried,
  kStale,
  kConflict,
  kNotFound,
  kRequest,
  kEmpty,
  kTx,
  kEvents,
  kLetters,
  kItems,  // LIST
  kConfig,
  kStats,
  kPong,
  kBye,
  kBackup,
  kPaused,    // `PAUSED <queue>`
  kResumed,   // `RESUMED <queue>`
  kRedriven,  // `REDRIVEN <n>`
  kResolved,  // `RESOLVED <n>`
  kErr,
  kOther,  // a word this client does not know (a newer server)
};

// The wire word of a kind: "CREATED", "NOT_FOUND", ... ("?" for kOther).
const char* reply_kind_name(ReplyKind kind);

// Reply is one complete reply exactly as the server sent it, plus the
// framing the client had to understand to find its end. A plain value.
struct Reply {
  ReplyKind kind = ReplyKind::kOther;
  std::string text;               // verbatim: every line with its CRLF, payload included
  std::string head;               // the first line without its CRLF
  std::vector<std::string> body;  // EVENTS/LETTERS/ITEMS/STATS lines without CRLF
  // REQUEST, and a TX line asked for with payload=1.
  std::optional<std::string> payload;
  // LETTERS asked for with payload=1: one payload per body line.
  std::vector<std::string> payloads;
  std::string error_code;     // kErr only: "BAD_ARGUMENT", ...
  std::string error_message;  // kErr only
};

// The transaction state most replies carry (PROTOCOL.md "The summary"):
// `<STATUS> <tx_id> <state> <attempt> <next_attempt> <next_fire_at>`. For
// NOT_FOUND only status and tx_id are set.
struct Summary {
  ReplyKind status = ReplyKind::kNotFound;  // kCreated ... kNotFound
  std::string tx_id;
  std::string state;  // SENDING, IN_FLIGHT, SCHEDULED, SUCCEEDED, FAILED
  uint32_t attempt = 0;
  uint32_t next_attempt = 0;
  int64_t next_fire_at_ms = 0;  // 0: none
};

// A request RESERVE handed out; the caller now holds its lease.
struct ReservedRequest {
  std::string tx_id;
  uint32_t attempt = 0;
  std::string idempotency_key;  // `<tx_id>#<attempt>`
  uint32_t handouts = 0;        // hand-outs of this request, this one included
  std::string payload;
};

// One transaction as GET shows it. Times are epoch ms, 0 for none.
struct TxInfo {
  std::string tx_id;
  std::string queue;
  std::string state;
  uint32_t attempt = 0;
  uint32_t next_attempt = 0;
  uint32_t max_attempts = 0;
  int64_t next_fire_at_ms = 0;
  int64_t deadline_at_ms = 0;
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
  // Hand-outs of the current request that ended without SENT or an answer
  // (older servers call the field `deliveries`).
  uint32_t failed_deliveries = 0;
  uint32_t transients = 0;
  std::string reason;  // empty when the server sent "-"
  uint64_t payload_bytes = 0;
  std::optional<std::string> payload;  // get_payload() only
  // Every name=value of the line in order, including any this client does
  // not know, so that a newer server's fields are not lost.
  std::vector<std::pair<std::string, std::string>> fields;
};

// One line of HISTORY: a transition of one transaction. The fields after
// `reason` are optional on the wire: a server older than them sends none,
// and they keep the defaults below.
struct TxEvent {
  int64_t at_ms = 0;
  std::string from;
  std::string to;
  uint32_t attempt = 0;
  uint32_t next_attempt = 0;
  std::string cause;
  std::string reason;              // empty when "-"
  int64_t due_at_ms = 0;           // a timer fire: the instant it was due; 0 otherwise
  std::optional<int64_t> late_ms;  // a timer fire: how late it took effect
  std::optional<uint64_t> seq;     // its number in the transaction's life, 0 the first
  // The marker of a bounded history: how many events of the transaction's
  // life came right before this one and are no longer kept.
  uint64_t dropped_before = 0;
};

// The events a HISTORY reply says are no longer kept (the sum of the
// markers); 0 from a server that keeps them all or predates the marker.
uint64_t dropped_events(const std::vector<TxEvent>& events);

// One line of DEADLETTERS.
struct DeadLetterInfo {
  std::string tx_id;
  uint32_t attempt = 0;
  std::string key;
  uint32_t failed_deliveries = 0;  // older servers: `deliveries`
  int64_t buried_at_ms = 0;
  std::string last_error;              // empty when "-"
  uint64_t payload_bytes = 0;          // 0 from servers that do not show it
  std::optional<std::string> payload;  // deadletters(..., with_payload) only
};

// One line of LIST: a transaction of the listed queue and state.
struct ListItem {
  std::string tx_id;
  std::string state;  // SENDING, IN_FLIGHT, SCHEDULED, SUCCEEDED, FAILED
  uint32_t attempt = 0;
  uint32_t next_attempt = 0;
  int64_t next_fire_at_ms = 0;
  int64_t updated_at_ms = 0;
  uint32_t deliveries = 0;
  std::string reason;  // empty when "-"
};

// One page of LIST: its items and the cursor of the next page (nullopt when
// the listing is complete; pass it back as ListOptions::after).
struct ListPage {
  std::vector<ListItem> items;
  std::optional<std::string> next;
};

// A queue's settings as CONFIG returns them, in the server's order.
struct QueueSettings {
  std::string queue;
  std::vector<std::pair<std::string, std::string>> settings;
  std::optional<std::string> get(std::string_view name) const;
};

// STATS figures in the server's order.
struct ServerStats {
  std::vector<std::pair<std::string, std::string>> figures;
  // The figure as an unsigned integer; nullopt when absent or not a number.
  std::optional<uint64_t> number(std::string_view name) const;
};

// What BACKUP made: its id in the server's backup directory, its size in
// bytes (shared files included), its files, and how long it took.
struct BackupMade {
  uint32_t id = 0;
  uint64_t bytes = 0;
  uint32_t files = 0;
  int64_t took_ms = 0;
};

// The code of an `ERR` reply a typed call turned into a Status
// ("BAD_ARGUMENT", "UNAUTHORIZED", ...), or empty for any other Status.
std::string server_error_code(const Status& status);

// Parsers of single reply lines (without CRLF). They fail with corruption
// when the line is not what PROTOCOL.md says it is.
Result<Summary> parse_summary(std::string_view line);
Result<TxInfo> parse_tx_info(std::string_view line);
Result<TxEvent> parse_event(std::string_view line);
Result<DeadLetterInfo> parse_letter(std::string_view line);
Result<ListItem> parse_item(std::string_view line);
Result<ListPage> parse_list_page(const Reply& reply);       // Requires: kind kItems
Result<ReservedRequest> parse_request(const Reply& reply);  // Requires: kind kRequest
Result<QueueSettings> parse_config(std::string_view line);
Result<ServerStats> parse_stats(const Reply& reply);
Result<BackupMade> parse_backup(std::string_view line);

// Pieces the parsers and the connection share. Not part of the API.
namespace client_detail {

ReplyKind kind_of(std::string_view word);
bool is_summary_kind(ReplyKind kind);
std::vector<std::string_view> split_tokens(std::string_view line);
Status bad_reply(std::string_view what, std::string_view line);

// Plain decimal digits only, the whole of `text`.
template <typename T>
bool to_number(std::string_view text, T* out) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}
template <typename T, typename Parse>
Result<std::vector<T>> parse_list(const Reply& reply, ReplyKind kind, Parse parse) {
  if (reply.kind != kind) return bad_reply("reply", reply.head);
  std::vector<T> items;
  for (const std::string& body : reply.body) {
    auto item = parse(body);
    if (!item.is_ok()) return item.status();
    items.push_back(std::move(item).value());
  }
  return items;
}

}  // namespace client_detail
}  // namespace tarde::client
