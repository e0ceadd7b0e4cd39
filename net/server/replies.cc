#include "net/server/replies.h"

#include <charconv>

#include "engine/outcome_name.h"
#include "net/core/config_args.h"
#include "net/wire/tokens.h"

namespace tarde::net {
namespace {

std::string reason_or_dash(const std::string& reason) { return reason.empty() ? "-" : reason; }

// Appends the decimal digits of n, without a temporary string: the replies
// of every cycle are built with it.
template <typename Integer>
void append_digits(std::string& out, Integer n) {
  char digits[24];
  const auto [end, error] = std::to_chars(digits, digits + sizeof digits, n);
  out.append(digits, end);
}

// The same after a space.
template <typename Integer>
void append_number(std::string& out, Integer n) {
  out += ' ';
  append_digits(out, n);
}

}  // namespace

std::string error_reply(ErrorCode code, std::string_view message) {
  std::string out = "ERR ";
  out += error_code_name(code);
  out += ' ';
  // A message never breaks the framing: line breaks become spaces.
  for (char c : message) out += (c == '\r' || c == '\n') ? ' ' : c;
  out += "\r\n";
  return out;
}

// Room for the outcome and state names and three numbers: one allocation.
constexpr size_t kTxReplyBytesBesidesId = 80;

std::string tx_reply(const engine::TxReply& reply) {
  std::string out;
  out.reserve(kTxReplyBytesBesidesId + reply.summary.tx_id.size());
  out += engine::outcome_name(reply.outcome);
  out += ' ';
  out += reply.summary.tx_id;
  if (reply.outcome != engine::Outcome::kNotFound) {
    const engine::Summary& s = reply.summary;
    out += ' ';
    out += storage::to_string(s.state);
    append_number(out, s.attempt);
    append_number(out, s.next_attempt);
    append_number(out, s.next_fire_at_ms);
  }
  out += "\r\n";
  return out;
}

std::string idempotency_key(std::string_view tx_id, uint32_t attempt) {
  return std::string(tx_id) + '#' + std::to_string(attempt);
}

std::string request_reply(const engine::HandOut& h) {
  std::string out;
  out.reserve(80 + 2 * h.tx_id.size() + h.payload.size());
  out += "REQUEST ";
  out += h.tx_id;
  append_number(out, h.attempt);
  out += ' ';
  out += h.tx_id;  // the idempotency key (idempotency_key), written in place
  out += '#';
  append_digits(out, h.attempt);
  append_number(out, h.handouts);
  append_number(out, h.payload.size());
  out += "\r\n";
  out += h.payload;
  out += "\r\n";
  return out;
}

std::string not_found_reply(std::string_view tx_id) {
  return "NOT_FOUND " + std::string(tx_id) + "\r\n";
}

std::string get_reply(const storage::TxRecord& r, bool with_payload) {
  std::string out =
      "TX id=" + r.tx_id + " queue=" + r.queue + " state=" + storage::to_string(r.state) +
      " attempt=" + std::to_string(r.attempt) + " next_attempt=" + std::to_string(r.next_attempt) +
      " max_attempts=" + std::to_string(r.policy.max_attempts) +
      " next_fire_at=" + std::to_string(r.next_fire_at_ms) +
      " deadline_at=" + std::to_string(r.deadline_at_ms) +
      " created_at=" + std::to_string(r.created_at_ms) +
      " updated_at=" + std::to_string(r.updated_at_ms) +
      " failed_deliveries=" + std::to_string(r.deliveries) +
      " transients=" + std::to_string(r.transients) + " reason=" + reason_or_dash(r.reason) +
      " payload_bytes=" + std::to_string(r.payload.size()) + "\r\n";
  if (with_payload) out += r.payload + "\r\n";
  return out;
}

// The fields after `reason` came with EventRecord version 2; clients that
// predate them skip name=value fields they do not know.
std::string events_reply(const std::vector<engine::HistoryEntry>& events) {
  std::string out = "EVENTS " + std::to_string(events.size()) + "\r\n";
  for (const engine::HistoryEntry& entry : events) {
    const storage::EventRecord& e = entry.event;
    const std::optional<int64_t> late = engine::lateness_ms(e);
    out += "EVENT at=" + std::to_string(e.at_ms) + " from=" + storage::to_string(e.from) +
           " to=" + storage::to_string(e.to) + " attempt=" + std::to_string(e.attempt) +
           " next_attempt=" + std::to_string(e.next_attempt) + " cause=" + e.cause +
           " reason=" + reason_or_dash(e.reason) +
           " due=" + (late ? std::to_string(e.due_at_ms) : "-") +
           " late=" + (late ? std::to_string(*late) : "-") + " seq=" + std::to_string(entry.seq);
    if (entry.dropped_before != 0) out += " dropped=" + std::to_string(entry.dropped_before);
    out += "\r\n";
  }
  return out;
}

std::string letters_reply(const std::vector<storage::DeadLetter>& letters, bool with_payload) {
  std::string out = "LETTERS " + std::to_string(letters.size()) + "\r\n";
  for (const storage::DeadLetter& l : letters) {
    const std::string last_error =
        l.failures.empty() ? "-" : reason_or_dash(l.failures.back().reason);
    out += "LETTER tx=" + l.tx_id + " attempt=" + std::to_string(l.attempt) +
           " key=" + idempotency_key(l.tx_id, l.attempt) +
           " failed_deliveries=" + std::to_string(l.deliveries) +
           " buried_at=" + std::to_string(l.buried_at_ms) + " last_error=" + last_error +
           " payload_bytes=" + std::to_string(l.payload.size()) + "\r\n";
    if (with_payload) out += l.payload + "\r\n";
  }
  return out;
}

std::string paused_reply(std::string_view queue, bool paused) {
  return std::string(paused ? "PAUSED " : "RESUMED ") + std::string(queue) + "\r\n";
}

std::string count_reply(std::string_view word, size_t n) {
  return std::string(word) + ' ' + std::to_string(n) + "\r\n";
}

std::string list_reply(const engine::ListPage& page) {
  std::string out = "ITEMS " + std::to_string(page.items.size()) +
                    " next=" + (page.next.empty() ? std::string("-") : page.next) + "\r\n";
  for (const storage::TxRecord& r : page.items) {
    out += "ITEM tx=" + r.tx_id + " state=" + storage::to_string(r.state) +
           " attempt=" + std::to_string(r.attempt) +
           " next_attempt=" + std::to_string(r.next_attempt) +
           " next_fire_at=" + std::to_string(r.next_fire_at_ms) +
           " updated_at=" + std::to_string(r.updated_at_ms) +
           " failed_deliveries=" + std::to_string(r.deliveries) +
           " reason=" + reason_or_dash(std::string(engine::shown_reason(r))) + "\r\n";
  }
  return out;
}

std::string config_reply(std::string_view queue, const storage::QueueConfig& c) {
  std::string out = "CONFIG " + std::string(queue);
  for (const auto& [name, value] : config_values(c)) out += ' ' + name + '=' + value;
  return out + "\r\n";
}

std::string backup_reply(const Result<storage::BackupReport>& made) {
  if (!made.is_ok()) {
    const Status& status = made.status();
    if (status.code() == Status::Code::kBusy) {
      return error_reply(ErrorCode::kBusy,
                         "a backup is already running; BACKUP again once it has answered");
    }
    if (status.code() == Status::Code::kShuttingDown) {
      return error_reply(ErrorCode::kShuttingDown,
                         "the server is stopping; the backup was abandoned");
    }
    return error_reply(ErrorCode::kBackupFailed, "no backup was recorded: " + status.message());
  }
  const storage::BackupReport& report = made.value();
  return "BACKUP id=" + std::to_string(report.id) + " bytes=" + std::to_string(report.size_bytes) +
         " files=" + std::to_string(report.files) + " took_ms=" + std::to_string(report.took_ms) +
         "\r\n";
}

std::string stats_reply(const std::vector<std::pair<std::string, std::string>>& figures) {
  std::string out = "STATS " + std::to_string(figures.size()) + "\r\n";
  for (const auto& [name, value] : figures) out += name + ' ' + value + "\r\n";
  return out;
}

}  // namespace tarde::net
