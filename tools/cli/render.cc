// Output of tarde-cli for people: summaries and records as labelled lists,
// HISTORY and DEADLETTERS as aligned tables, every time also in UTC ISO-8601
// and relative to now. With --raw the reply is printed verbatim instead.
#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <ostream>

#include "base/time_text.h"
#include "tools/cli/cli.h"

namespace tarde::cli {
namespace {

using client::ReplyKind;

// Names of TX fields that hold epoch-ms times.
constexpr std::array<std::string_view, 4> kTimeFields = {"next_fire_at", "deadline_at",
                                                         "created_at", "updated_at"};
// The width of the label column of labelled lists.
constexpr int kLabelWidth = 19;

// A time for people: "-" for none, else ISO, relative and the raw ms.
std::string show_time(int64_t epoch_ms, int64_t now_ms) {
  if (epoch_ms == 0) return "-";
  return iso_time(epoch_ms) + "  " + relative_time(epoch_ms, now_ms) + "  (" +
         std::to_string(epoch_ms) + ")";
}

std::string span_text(int64_t ms) {
  if (ms < 1000) return std::to_string(ms) + "ms";
  constexpr std::array<std::pair<int64_t, const char*>, 4> kUnits = {
      {{86'400'000, "d"}, {3'600'000, "h"}, {60'000, "m"}, {1000, "s"}}};
  std::string out;
  int shown = 0;
  for (const auto& [unit_ms, name] : kUnits) {
    const int64_t count = ms / unit_ms;
    if (shown == 0 && count == 0) continue;
    if (count > 0) out += std::to_string(count) + name;
    ms -= count * unit_ms;
    if (++shown == 2) break;
  }
  return out;
}

// Payload bytes as one printable line: control and non-ASCII bytes escaped.
std::string printable(std::string_view bytes) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

void labelled(std::ostream& out, std::string_view label, const std::string& value) {
  out << "  " << label << std::string(std::max<int>(1, kLabelWidth - label.size()), ' ') << value
      << '\n';
}

void table(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out << line << '\n';
  }
}

std::string dash(const std::string& value) { return value.empty() ? "-" : value; }

// A decimal figure as milliseconds, or nullopt when it is not one.
std::optional<int64_t> as_ms(std::string_view text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

bool render_summary(const client::Reply& reply, int64_t now_ms, std::ostream& out) {
  auto parsed = client::parse_summary(reply.head);
  if (!parsed.is_ok()) return false;
  const client::Summary& s = parsed.value();
  out << client::reply_kind_name(s.status) << ' ' << s.tx_id << '\n';
  if (s.status == ReplyKind::kNotFound) return true;
  labelled(out, "state", s.state);
  labelled(out, "attempt", std::to_string(s.attempt));
  labelled(out, "next_attempt", std::to_string(s.next_attempt));
  labelled(out, "next_fire_at", show_time(s.next_fire_at_ms, now_ms));
  return true;
}

bool render_request(const client::Reply& reply, std::ostream& out) {
  auto parsed = client::parse_request(reply);
  if (!parsed.is_ok()) return false;
  const client::ReservedRequest& r = parsed.value();
  out << "REQUEST " << r.tx_id << " attempt " << r.attempt << '\n';
  labelled(out, "key", r.idempotency_key);
  labelled(out, "handouts", std::to_string(r.handouts));
  labelled(out, "payload", std::to_string(r.payload.size()) + " bytes");
  if (!r.payload.empty()) out << printable(r.payload) << '\n';
  return true;
}

bool render_tx(const client::Reply& reply, int64_t now_ms, std::ostream& out) {
  auto parsed = client::parse_tx_info(reply.head);
  if (!parsed.is_ok()) return false;
  out << "TX " << parsed.value().tx_id << '\n';
  for (const auto& [name, value] : parsed.value().fields) {
    if (name == "id") continue;
    const bool is_time =
        std::find(kTimeFields.begin(), kTimeFields.end(), name) != kTimeFields.end();
    const auto ms = as_ms(value);
    labelled(out, name, is_time && ms ? show_time(*ms, now_ms) : value);
  }
  if (reply.payload && !reply.payload->empty()) out << printable(*reply.payload) << '\n';
  return true;
}

// LATE is a timer fire's lateness after its due instant; a row "... N
// dropped" stands where the server no longer keeps N events.
bool render_events(const client::Reply& reply, int64_t now_ms, std::ostream& out) {
  std::vector<std::vector<std::string>> rows = {
      {"AT", "WHEN", "FROM", "TO", "ATTEMPT", "NEXT", "CAUSE", "REASON", "LATE"}};
  uint64_t dropped = 0;
  for (const std::string& line : reply.body) {
    auto e = client::parse_event(line);
    if (!e.is_ok()) return false;
    if (e->dropped_before != 0) {
      rows.push_back({"... " + std::to_string(e->dropped_before) + " dropped", "", "", "", "", "",
                      "", "", ""});
      dropped += e->dropped_before;
    }
    rows.push_back({iso_time(e->at_ms), relative_time(e->at_ms, now_ms), dash(e->from), e->to,
                    std::to_string(e->attempt), std::to_string(e->next_attempt), e->cause,
                    dash(e->reason), e->late_ms ? std::to_string(*e->late_ms) + "ms" : "-"});
  }
  table(out, rows);
  out << "(" << reply.body.size() << (reply.body.size() == 1 ? " event" : " events");
  if (dropped != 0) out << "; " << dropped << " more no longer kept";
  out << ")\n";
  return true;
}

bool render_letters(const client::Reply& reply, int64_t now_ms, std::ostream& out) {
  std::vector<std::vector<std::string>> rows = {
      {"TX", "ATTEMPT", "KEY", "FAILED_DELIVERIES", "BURIED_AT", "WHEN", "LAST_ERROR"}};
  for (const std::string& line : reply.body) {
    auto l = client::parse_letter(line);
    if (!l.is_ok()) return false;
    rows.push_back({l->tx_id, std::to_string(l->attempt), l->key,
                    std::to_string(l->failed_deliveries), iso_time(l->buried_at_ms),
                    relative_time(l->buried_at_ms, now_ms), dash(l->last_error)});
  }
  table(out, rows);
  for (size_t i = 0; i < reply.payloads.size() && i < reply.body.size(); ++i) {
    auto l = client::parse_letter(reply.body[i]);
    out << "payload of " << (l.is_ok() ? l->tx_id : "?") << " (" << reply.payloads[i].size()
        << " bytes):\n"
        << printable(reply.payloads[i]) << '\n';
  }
  out << "(" << reply.body.size()
      << (reply.body.size() == 1 ? " dead letter)\n" : " dead letters)\n");
  return true;
}

bool render_items(const client::Reply& reply, int64_t now_ms, std::ostream& out) {
  auto page = client::parse_list_page(reply);
  if (!page.is_ok()) return false;
  std::vector<std::vector<std::string>> rows = {
      {"TX", "STATE", "ATTEMPT", "NEXT", "NEXT_FIRE_AT", "UPDATED", "DELIVERIES", "REASON"}};
  for (const client::ListItem& i : page->items) {
    rows.push_back({i.tx_id, i.state, std::to_string(i.attempt), std::to_string(i.next_attempt),
                    i.next_fire_at_ms == 0 ? "-" : iso_time(i.next_fire_at_ms),
                    relative_time(i.updated_at_ms, now_ms), std::to_string(i.deliveries),
                    dash(i.reason)});
  }
  table(out, rows);
  out << "(" << page->items.size() << (page->items.size() == 1 ? " transaction" : " transactions")
      << (page->next ? "; the next page: --after " + *page->next : std::string("; the last page"))
      << ")\n";
  return true;
}

void render_pairs(const client::Reply& reply, std::ostream& out) {
  if (reply.kind == ReplyKind::kConfig) {
    const size_t first = reply.head.find(' ', 7);
    out << reply.head.substr(0, first) << '\n';
    std::string_view rest = std::string_view(reply.head).substr(std::min(first, reply.head.size()));
    while (!rest.empty()) {
      const size_t end = std::min(rest.find(' '), rest.size());
      const std::string_view token = rest.substr(0, end);
      const size_t eq = token.find('=');
      if (!token.empty()) labelled(out, token.substr(0, eq), std::string(token.substr(eq + 1)));
      rest.remove_prefix(std::min(end + 1, rest.size()));
    }
    return;
  }
  out << "STATS\n";
  for (const std::string& line : reply.body) {
    const size_t sp = line.find(' ');
    std::string value = line.substr(sp + 1);
    const auto ms = as_ms(value);
    if (line.compare(0, sp, "uptime_ms") == 0 && ms) value += "  (" + span_text(*ms) + ")";
    labelled(out, line.substr(0, sp), value);
  }
}

bool render_backup(const client::Reply& reply, std::ostream& out) {
  auto made = client::parse_backup(reply.head);
  if (!made.is_ok()) return false;
  out << "BACKUP " << made.value().id << '\n';
  labelled(out, "bytes", std::to_string(made.value().bytes));
  labelled(out, "files", std::to_string(made.value().files));
  labelled(out, "took", std::to_string(made.value().took_ms) + " ms");
  labelled(out, "verified", "yes (every file's checksum)");
  return true;
}

bool render_human(const client::Reply& reply, int64_t now_ms, std::ostream& out) {
  switch (reply.kind) {
    case ReplyKind::kCreated:
    case ReplyKind::kExists:
    case ReplyKind::kBuried:
    case ReplyKind::kStale:
    case ReplyKind::kConflict:
    case ReplyKind::kNotFound:
      return render_summary(reply, now_ms, out);
    case ReplyKind::kOk:
      if (reply.head == "OK") break;
      return render_summary(reply, now_ms, out);
    case ReplyKind::kRequest:
      return render_request(reply, out);
    case ReplyKind::kEmpty:
      out << "EMPTY (nothing ready)\n";
      return true;
    case ReplyKind::kTx:
      return render_tx(reply, now_ms, out);
    case ReplyKind::kEvents:
      return render_events(reply, now_ms, out);
    case ReplyKind::kLetters:
      return render_letters(reply, now_ms, out);
    case ReplyKind::kItems:
      return render_items(reply, now_ms, out);
    case ReplyKind::kConfig:
    case ReplyKind::kStats:
      render_pairs(reply, out);
      return true;
    case ReplyKind::kBackup:
      return render_backup(reply, out);
    case ReplyKind::kErr:
      return true;
    default:
      break;
  }
  out << reply.head << '\n';
  return true;
}

// What a person should know about a negative or failed reply.
std::string explanation(const client::Reply& reply) {
  auto s = client::parse_summary(reply.head);
  const std::string tx = s.is_ok() ? s.value().tx_id : "";
  switch (reply.kind) {
    case ReplyKind::kNotFound:
      return "NOT_FOUND: no transaction " + tx;
    case ReplyKind::kStale:
      return "STALE: " + tx + " is not in the state this command expects; nothing changed";
    case ReplyKind::kConflict:
      return "CONFLICT: a request of " + tx + " is on its way; its answer decides";
    case ReplyKind::kErr:
      return "server error " + reply.error_code + ": " + reply.error_message;
    default:
      return "";
  }
}

}  // namespace

int exit_status(const client::Reply& reply) {
  switch (reply.kind) {
    case ReplyKind::kNotFound:
    case ReplyKind::kStale:
    case ReplyKind::kConflict:
      return kExitNegative;
    case ReplyKind::kErr:
      return kExitError;
    default:
      return kExitOk;
  }
}

int render(const client::Reply& reply, bool raw, int64_t now_ms, std::ostream& out,
           std::ostream& err) {
  if (raw) {
    out << reply.text;
  } else if (!render_human(reply, now_ms, out)) {
    out << reply.text;  // not in the expected form: show it as it came
  }
  out.flush();
  const std::string why = explanation(reply);
  if (!why.empty()) err << "tarde-cli: " << why << '\n';
  return exit_status(reply);
}

std::string iso_time(int64_t epoch_ms) { return tarde::iso_utc_ms(epoch_ms); }

std::string relative_time(int64_t epoch_ms, int64_t now_ms) {
  const int64_t diff = epoch_ms - now_ms;
  if (diff == 0) return "now";
  return diff > 0 ? "in " + span_text(diff) : span_text(-diff) + " ago";
}

int64_t now_epoch_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace tarde::cli
