// The client's reply parsers: pure functions from the server's reply lines to
// typed values (the reply shapes of net/PROTOCOL.md).
#include "clients/cpp/replies.h"

#include <array>

namespace tarde::client {
namespace client_detail {

constexpr std::array<std::pair<std::string_view, ReplyKind>, 23> kKinds = {{
    {"CREATED", ReplyKind::kCreated},
    {"EXISTS", ReplyKind::kExists},
    {"OK", ReplyKind::kOk},
    {"BURIED", ReplyKind::kBuried},
    {"STALE", ReplyKind::kStale},
    {"CONFLICT", ReplyKind::kConflict},
    {"NOT_FOUND", ReplyKind::kNotFound},
    {"REQUEST", ReplyKind::kRequest},
    {"EMPTY", ReplyKind::kEmpty},
    {"TX", ReplyKind::kTx},
    {"EVENTS", ReplyKind::kEvents},
    {"LETTERS", ReplyKind::kLetters},
    {"ITEMS", ReplyKind::kItems},
    {"CONFIG", ReplyKind::kConfig},
    {"STATS", ReplyKind::kStats},
    {"PONG", ReplyKind::kPong},
    {"BYE", ReplyKind::kBye},
    {"BACKUP", ReplyKind::kBackup},
    {"PAUSED", ReplyKind::kPaused},
    {"RESUMED", ReplyKind::kResumed},
    {"REDRIVEN", ReplyKind::kRedriven},
    {"RESOLVED", ReplyKind::kResolved},
    {"ERR", ReplyKind::kErr},
}};

ReplyKind kind_of(std::string_view word) {
  for (const auto& [name, kind] : kKinds) {
    if (name == word) return kind;
  }
  return ReplyKind::kOther;
}

bool is_summary_kind(ReplyKind kind) {
  return kind == ReplyKind::kCreated || kind == ReplyKind::kExists || kind == ReplyKind::kOk ||
         kind == ReplyKind::kBuried || kind == ReplyKind::kStale || kind == ReplyKind::kConflict ||
         kind == ReplyKind::kNotFound;
}

std::vector<std::string_view> split_tokens(std::string_view line) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ') {
      ++i;
      continue;
    }
    const size_t end = std::min(line.find(' ', i), line.size());
    tokens.push_back(line.substr(i, end - i));
    i = end;
  }
  return tokens;
}

Status bad_reply(std::string_view what, std::string_view line) {
  return Status::corruption("unexpected " + std::string(what) + " from the server: '" +
                            std::string(line.substr(0, 200)) + "'");
}

}  // namespace client_detail

using client_detail::bad_reply;
using client_detail::is_summary_kind;
using client_detail::kind_of;
using client_detail::split_tokens;
using client_detail::to_number;

Result<QueueSettings> parse_config(std::string_view line) {
  const std::vector<std::string_view> t = split_tokens(line);
  QueueSettings out;
  if (t.size() < 2 || t[0] != "CONFIG") return bad_reply("CONFIG reply", line);
  out.queue = t[1];
  for (size_t i = 2; i < t.size(); ++i) {
    const size_t eq = t[i].find('=');
    if (eq == std::string_view::npos) return bad_reply("CONFIG reply", line);
    out.settings.emplace_back(t[i].substr(0, eq), t[i].substr(eq + 1));
  }
  return out;
}

Result<ServerStats> parse_stats(const Reply& reply) {
  if (reply.kind != ReplyKind::kStats) return bad_reply("reply", reply.head);
  ServerStats out;
  for (const std::string& body : reply.body) {
    const size_t sp = body.find(' ');
    if (sp == std::string::npos) return bad_reply("STATS line", body);
    out.figures.emplace_back(body.substr(0, sp), body.substr(sp + 1));
  }
  return out;
}

namespace {

using client_detail::bad_reply;
using client_detail::is_summary_kind;
using client_detail::kind_of;
using client_detail::kKinds;
using client_detail::split_tokens;
using client_detail::to_number;

std::string dash_to_empty(std::string_view value) {
  return value == "-" ? std::string() : std::string(value);
}

// The name=value tokens of a `WORD name=value ...` line, each split at its
// first '=' (values such as tx_id may hold '=').
class Fields {
 public:
  Fields(std::string_view line, std::string_view word) : line_(line) {
    const std::vector<std::string_view> tokens = split_tokens(line);
    ok_ = !tokens.empty() && tokens[0] == word;
    for (size_t i = 1; ok_ && i < tokens.size(); ++i) {
      const size_t eq = tokens[i].find('=');
      ok_ = eq != std::string_view::npos;
      if (ok_) pairs_.emplace_back(tokens[i].substr(0, eq), tokens[i].substr(eq + 1));
    }
  }
  void str(std::string_view name, std::string* out) {
    if (auto v = find(name)) *out = dash_to_empty(*v);
  }
  template <typename T>
  void num(std::string_view name, T* out) {
    auto v = find(name);
    if (v && !to_number(*v, out)) ok_ = false;
  }
  // A field newer servers send: absent or "-" leaves *out as it is.
  template <typename T>
  void optional_num(std::string_view name, T* out) {
    if (auto v = find_optional(name); v && !to_number(*v, out)) ok_ = false;
  }
  template <typename T>
  void optional_num(std::string_view name, std::optional<T>* out) {
    T value{};
    if (auto v = find_optional(name)) {
      if (!to_number(*v, &value)) ok_ = false;
      *out = value;
    }
  }
  // A field renamed since: the new name, else the old one.
  template <typename T>
  void num_renamed(std::string_view name, std::string_view old_name, T* out) {
    num(has(name) ? name : old_name, out);
  }
  bool has(std::string_view name) const {
    for (const auto& [n, v] : pairs_) {
      if (n == name) return true;
    }
    return false;
  }
  Status status(std::string_view what) const { return ok_ ? Status::ok() : bad_reply(what, line_); }
  const std::vector<std::pair<std::string_view, std::string_view>>& pairs() const { return pairs_; }

 private:
  std::optional<std::string_view> find(std::string_view name) {
    for (const auto& [n, v] : pairs_) {
      if (n == name) return v;
    }
    ok_ = false;  // every field PROTOCOL.md lists is required
    return std::nullopt;
  }
  std::optional<std::string_view> find_optional(std::string_view name) const {
    for (const auto& [n, v] : pairs_) {
      if (n == name && v != "-") return v;
    }
    return std::nullopt;
  }

  std::string_view line_;
  bool ok_ = false;
  std::vector<std::pair<std::string_view, std::string_view>> pairs_;
};

}  // namespace

const char* reply_kind_name(ReplyKind kind) {
  for (const auto& [name, k] : kKinds) {
    if (k == kind) return name.data();
  }
  return "?";
}

std::string server_error_code(const Status& status) {
  if (status.code() != Status::Code::kInvalidArgument) return "";
  const std::string& m = status.message();
  const std::string code = m.substr(0, m.find(' '));
  for (char c : code) {
    if (!(c == '_' || (c >= 'A' && c <= 'Z'))) return "";
  }
  return code;
}

std::optional<std::string> QueueSettings::get(std::string_view name) const {
  for (const auto& [n, v] : settings) {
    if (n == name) return v;
  }
  return std::nullopt;
}

std::optional<uint64_t> ServerStats::number(std::string_view name) const {
  for (const auto& [n, v] : figures) {
    uint64_t value = 0;
    if (n == name && to_number(v, &value)) return value;
  }
  return std::nullopt;
}

Result<Summary> parse_summary(std::string_view line) {
  const std::vector<std::string_view> t = split_tokens(line);
  Summary s;
  if (t.empty() || !is_summary_kind(s.status = kind_of(t[0]))) return bad_reply("summary", line);
  if (s.status == ReplyKind::kNotFound && t.size() == 2) {
    s.tx_id = t[1];
    return s;
  }
  if (t.size() != 6 || !to_number(t[3], &s.attempt) || !to_number(t[4], &s.next_attempt) ||
      !to_number(t[5], &s.next_fire_at_ms)) {
    return bad_reply("summary", line);
  }
  s.tx_id = t[1];
  s.state = t[2];
  return s;
}

Result<TxInfo> parse_tx_info(std::string_view line) {
  Fields f(line, "TX");
  TxInfo tx;
  f.str("id", &tx.tx_id);
  f.str("queue", &tx.queue);
  f.str("state", &tx.state);
  f.num("attempt", &tx.attempt);
  f.num("next_attempt", &tx.next_attempt);
  f.num("max_attempts", &tx.max_attempts);
  f.num("next_fire_at", &tx.next_fire_at_ms);
  f.num("deadline_at", &tx.deadline_at_ms);
  f.num("created_at", &tx.created_at_ms);
  f.num("updated_at", &tx.updated_at_ms);
  f.num_renamed("failed_deliveries", "deliveries", &tx.failed_deliveries);
  f.num("transients", &tx.transients);
  f.str("reason", &tx.reason);
  f.num("payload_bytes", &tx.payload_bytes);
  TARDE_RETURN_IF_ERROR(f.status("TX line"));
  for (const auto& [n, v] : f.pairs()) tx.fields.emplace_back(n, v);
  return tx;
}

Result<BackupMade> parse_backup(std::string_view line) {
  Fields f(line, "BACKUP");
  BackupMade made;
  f.num("id", &made.id);
  f.num("bytes", &made.bytes);
  f.num("files", &made.files);
  f.num("took_ms", &made.took_ms);
  TARDE_RETURN_IF_ERROR(f.status("BACKUP reply"));
  return made;
}

Result<TxEvent> parse_event(std::string_view line) {
  Fields f(line, "EVENT");
  TxEvent e;
  f.num("at", &e.at_ms);
  f.str("from", &e.from);
  f.str("to", &e.to);
  f.num("attempt", &e.attempt);
  f.num("next_attempt", &e.next_attempt);
  f.str("cause", &e.cause);
  f.str("reason", &e.reason);
  f.optional_num("due", &e.due_at_ms);
  f.optional_num("late", &e.late_ms);
  f.optional_num("seq", &e.seq);
  f.optional_num("dropped", &e.dropped_before);
  TARDE_RETURN_IF_ERROR(f.status("EVENT line"));
  return e;
}

uint64_t dropped_events(const std::vector<TxEvent>& events) {
  uint64_t dropped = 0;
  for (const TxEvent& e : events) dropped += e.dropped_before;
  return dropped;
}

Result<DeadLetterInfo> parse_letter(std::string_view line) {
  Fields f(line, "LETTER");
  DeadLetterInfo l;
  f.str("tx", &l.tx_id);
  f.num("attempt", &l.attempt);
  f.str("key", &l.key);
  f.num_renamed("failed_deliveries", "deliveries", &l.failed_deliveries);
  f.num("buried_at", &l.buried_at_ms);
  f.str("last_error", &l.last_error);
  f.optional_num("payload_bytes", &l.payload_bytes);
  TARDE_RETURN_IF_ERROR(f.status("LETTER line"));
  return l;
}

Result<ListItem> parse_item(std::string_view line) {
  Fields f(line, "ITEM");
  ListItem item;
  f.str("tx", &item.tx_id);
  f.str("state", &item.state);
  f.num("attempt", &item.attempt);
  f.num("next_attempt", &item.next_attempt);
  f.num("next_fire_at", &item.next_fire_at_ms);
  f.num("updated_at", &item.updated_at_ms);
  f.num("deliveries", &item.deliveries);
  f.str("reason", &item.reason);
  TARDE_RETURN_IF_ERROR(f.status("ITEM line"));
  return item;
}

Result<ListPage> parse_list_page(const Reply& reply) {
  const std::vector<std::string_view> t = split_tokens(reply.head);
  if (reply.kind != ReplyKind::kItems || t.size() != 3 || !t[2].starts_with("next=") ||
      t[2].size() == 5) {
    return bad_reply("ITEMS reply", reply.head);
  }
  ListPage page;
  const std::string_view next = t[2].substr(5);
  if (next != "-") page.next = std::string(next);
  auto items = client_detail::parse_list<ListItem>(reply, ReplyKind::kItems, parse_item);
  if (!items.is_ok()) return items.status();
  page.items = std::move(items).value();
  return page;
}

Result<ReservedRequest> parse_request(const Reply& reply) {
  const std::vector<std::string_view> t = split_tokens(reply.head);
  ReservedRequest r;
  if (reply.kind != ReplyKind::kRequest || t.size() != 6 || !reply.payload ||
      !to_number(t[2], &r.attempt) || !to_number(t[4], &r.handouts)) {
    return bad_reply("REQUEST reply", reply.head);
  }
  r.tx_id = t[1];
  r.idempotency_key = t[3];
  r.payload = *reply.payload;
  return r;
}

}  // namespace tarde::client
