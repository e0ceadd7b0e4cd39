#include "tools/dump/dump.h"

#include <map>
#include <nlohmann/json.hpp>

#include "engine/history.h"
#include "engine/invariants.h"
#include "storage/codec.h"
#include "storage/keys.h"
#include "tools/dump/output.h"

namespace tarde::tools {
namespace {

using storage::TxState;

const char* due_kind_name(storage::DueKind kind) {
  switch (kind) {
    case storage::DueKind::kRetry:
      return "retry";
    case storage::DueKind::kResponseTimeout:
      return "response_timeout";
    case storage::DueKind::kRetention:
      return "retention";
    case storage::DueKind::kNone:
      break;
  }
  return "-";
}

std::string render(const Rows& rows, bool json) {
  return json ? json_output(rows.json()) : rows.table();
}

bool under_limit(const DumpRequest& request, size_t count) {
  return request.limit == 0 || count < request.limit;
}

Result<DumpOutput> summary(storage::Store& store, const DumpRequest& request) {
  std::map<std::string, std::map<std::string, uint64_t>> by_queue;  // queue -> figure -> n
  std::map<std::string, uint64_t> totals;
  TARDE_RETURN_IF_ERROR(store.scan_tx([&](const storage::TxRecord& rec) {
    by_queue[rec.queue][storage::to_string(rec.state)] += 1;
    totals[storage::to_string(rec.state)] += 1;
    totals["transactions"] += 1;
    return true;
  }));
  TARDE_RETURN_IF_ERROR(store.scan_all_ready([&](const storage::ReadyEntry& e) {
    by_queue[e.queue]["ready"] += 1;
    return true;
  }));
  TARDE_RETURN_IF_ERROR(store.scan_all_dead([&](const storage::DeadLetter& l) {
    by_queue[l.queue]["dead"] += 1;
    return true;
  }));
  uint64_t due = 0;
  int64_t earliest = 0;
  int64_t latest = 0;
  TARDE_RETURN_IF_ERROR(store.scan_due(nullptr, INT64_MAX, [&](const storage::DueEntry& e) {
    if (due == 0) earliest = e.fire_at_ms;
    latest = e.fire_at_ms;
    due += 1;
    return true;
  }));
  uint64_t state_keys = 0;
  TARDE_RETURN_IF_ERROR(store.scan_all_state([&](const storage::StateKey&) {
    state_keys += 1;
    return true;
  }));
  auto format = store.get_meta("format");
  if (!format.is_ok()) return format.status();
  uint64_t version = 0;
  if (format.value()) {
    auto decoded = storage::decode_format_version(*format.value());
    if (decoded.is_ok()) version = decoded.value();
  }
  Rows rows({"queue", "transactions", "SENDING", "IN_FLIGHT", "SCHEDULED", "SUCCEEDED", "FAILED",
             "ready", "dead"});
  auto add_row = [&](const std::string& name, std::map<std::string, uint64_t>& f) {
    uint64_t all = 0;
    for (const char* s : {"SENDING", "IN_FLIGHT", "SCHEDULED", "SUCCEEDED", "FAILED"}) all += f[s];
    rows.add({text(name), number(all), number(f["SENDING"]), number(f["IN_FLIGHT"]),
              number(f["SCHEDULED"]), number(f["SUCCEEDED"]), number(f["FAILED"]),
              number(f["ready"]), number(f["dead"])});
  };
  std::map<std::string, uint64_t> all_queues;
  for (auto& [queue, figures] : by_queue) {
    add_row(queue, figures);
    for (auto& [name, n] : figures) all_queues[name] += n;
  }
  add_row("(all)", all_queues);
  Rows floors({"queue", "ready_at", "ready_at_utc", "seq"});
  TARDE_RETURN_IF_ERROR(
      store.scan_ready_floors([&](const std::string& queue, const storage::ReadyFloor& floor) {
        floors.add({text(queue), number(floor.ready_at_ms), text(iso_time(floor.ready_at_ms)),
                    number(floor.seq)});
        return true;
      }));
  DumpOutput out;
  if (request.json) {
    nlohmann::ordered_json doc;
    doc["format_version"] = version;
    doc["due_entries"] = due;
    doc["due_earliest_ms"] = earliest;
    doc["due_latest_ms"] = latest;
    doc["state_index_keys"] = state_keys;
    doc["queues"] = rows.json();
    doc["ready_floors"] = floors.json();
    out.text = json_output(doc);
  } else {
    out.text = "format version " + std::to_string(version) + "\n" +
               "retry index: " + std::to_string(due) + " entries, earliest " + iso_time(earliest) +
               ", latest " + iso_time(latest) + "\n" +
               "state index: " + std::to_string(state_keys) + " keys\n\n" + rows.table();
    if (floors.size() != 0) {
      out.text += "\nready floors (a restart reads each queue's ready requests from here on):\n" +
                  floors.table();
    }
  }
  return out;
}

void add_tx_row(Rows& rows, const storage::TxRecord& r) {
  rows.add({text(r.tx_id), text(r.queue), text(storage::to_string(r.state)),
            number(uint64_t{r.attempt}), number(uint64_t{r.next_attempt}),
            number(uint64_t{r.policy.max_attempts}), number(r.next_fire_at_ms),
            text(iso_time(r.next_fire_at_ms)), number(r.updated_at_ms),
            number(uint64_t{r.deliveries}), number(uint64_t{r.transients}),
            text(r.reason.empty() ? "-" : r.reason), number(uint64_t{r.payload.size()})});
}

Rows tx_rows() {
  return Rows({"tx_id", "queue", "state", "attempt", "next_attempt", "max_attempts", "next_fire_at",
               "next_fire_at_utc", "updated_at", "failed_deliveries", "transients", "reason",
               "payload_bytes"});
}

// The history_max of a queue: its stored configuration's, or the default.
Result<uint32_t> history_max_of(storage::Store& store, const std::string& queue) {
  uint32_t history_max = storage::QueueConfig{}.history_max;
  TARDE_RETURN_IF_ERROR(
      store.scan_queue_configs([&](const std::string& name, const storage::QueueConfig& config) {
        if (name != queue) return true;
        history_max = config.history_max;
        return false;
      }));
  return history_max;
}

// The events HISTORY would show (engine/history.h): the first and the
// newest history_max − 1, each with the count of events dropped before it,
// a timer fire's due time and lateness. Reasons and causes are stored text
// from clients: the table escapes them (Rows::table), JSON keeps them.
Result<DumpOutput> tx(storage::Store& store, const DumpRequest& request) {
  auto found = store.get_tx(request.argument);
  if (!found.is_ok()) return found.status();
  if (!found.value()) return Status::not_found("no transaction " + request.argument);
  Rows record = tx_rows();
  add_tx_row(record, *found.value());
  Result<uint32_t> history_max = history_max_of(store, found.value()->queue);
  if (!history_max.is_ok()) return history_max.status();
  std::vector<std::pair<uint64_t, storage::EventRecord>> stored;
  TARDE_RETURN_IF_ERROR(store.scan_history(*found.value(), [&](uint64_t seq, const auto& e) {
    stored.emplace_back(seq, e);
    return true;
  }));
  const std::vector<engine::HistoryEntry> shown =
      engine::select_history(std::move(stored), history_max.value(), request.limit);
  auto shown_text = [&](const std::string& value) {
    if (value.empty()) return text("-");
    return text(value);
  };
  Rows events({"seq", "dropped", "at", "at_utc", "from", "to", "attempt", "next_attempt", "cause",
               "reason", "due", "due_utc", "late_ms"});
  uint64_t dropped = 0;
  for (const engine::HistoryEntry& entry : shown) {
    const storage::EventRecord& e = entry.event;
    const std::optional<int64_t> late = engine::lateness_ms(e);
    dropped += entry.dropped_before;
    events.add({number(entry.seq), number(entry.dropped_before), number(e.at_ms),
                text(iso_time(e.at_ms)), text(storage::to_string(e.from)),
                text(storage::to_string(e.to)), number(uint64_t{e.attempt}),
                number(uint64_t{e.next_attempt}), shown_text(e.cause), shown_text(e.reason),
                number(e.due_at_ms), text(iso_time(e.due_at_ms)),
                late ? number(*late) : text("-")});
  }
  DumpOutput out;
  if (request.json) {
    nlohmann::ordered_json doc;
    doc["record"] = record.json();
    doc["history"] = events.json();
    doc["history_max"] = history_max.value();
    doc["dropped"] = dropped;
    out.text = json_output(doc);
  } else {
    out.text = record.table() + "\n" + events.table();
    if (dropped != 0) {
      out.text += "(" + std::to_string(dropped) +
                  " events of its life are no longer kept: the `dropped` column says where; "
                  "history_max " +
                  std::to_string(history_max.value()) + ")\n";
    }
  }
  return out;
}

Result<DumpOutput> list(storage::Store& store, const DumpRequest& request) {
  Rows rows = tx_rows();
  TARDE_RETURN_IF_ERROR(store.scan_tx([&](const storage::TxRecord& r) {
    if (request.state && *request.state != storage::to_string(r.state)) return true;
    if (request.queue && *request.queue != r.queue) return true;
    add_tx_row(rows, r);
    return under_limit(request, rows.size());
  }));
  return DumpOutput{render(rows, request.json), false};
}

Result<DumpOutput> due(storage::Store& store, const DumpRequest& request) {
  Rows rows({"fire_at", "fire_at_utc", "tx_id", "kind", "attempt"});
  TARDE_RETURN_IF_ERROR(store.scan_due(nullptr, INT64_MAX, [&](const storage::DueEntry& e) {
    rows.add({number(e.fire_at_ms), text(iso_time(e.fire_at_ms)), text(e.tx_id),
              text(due_kind_name(e.kind)), number(uint64_t{e.attempt})});
    return under_limit(request, rows.size());
  }));
  return DumpOutput{render(rows, request.json), false};
}

Result<DumpOutput> ready(storage::Store& store, const DumpRequest& request) {
  Rows rows({"ready_at", "ready_at_utc", "seq", "tx_id", "attempt"});
  TARDE_RETURN_IF_ERROR(store.scan_ready(request.argument, [&](const storage::ReadyEntry& e) {
    rows.add({number(e.ready_at_ms), text(iso_time(e.ready_at_ms)), number(e.seq), text(e.tx_id),
              number(uint64_t{e.attempt})});
    return under_limit(request, rows.size());
  }));
  return DumpOutput{render(rows, request.json), false};
}

Result<DumpOutput> dead(storage::Store& store, const DumpRequest& request) {
  Rows rows({"tx_id", "attempt", "key", "failed_deliveries", "buried_at", "buried_at_utc",
             "payload_bytes", "failures"});
  TARDE_RETURN_IF_ERROR(store.scan_dead(request.argument, [&](const storage::DeadLetter& l) {
    std::string failures;
    for (const auto& f : l.failures) {
      failures += (failures.empty() ? "" : ",") + iso_time(f.at_ms) + "/" + f.reason;
    }
    rows.add({text(l.tx_id), number(uint64_t{l.attempt}),
              text(l.tx_id + "#" + std::to_string(l.attempt)), number(uint64_t{l.deliveries}),
              number(l.buried_at_ms), text(iso_time(l.buried_at_ms)),
              number(uint64_t{l.payload.size()}), text(failures.empty() ? "-" : failures)});
    return under_limit(request, rows.size());
  }));
  return DumpOutput{render(rows, request.json), false};
}

const char* indexed_state_name(uint8_t state) {
  switch (static_cast<storage::IndexedState>(state)) {
    case storage::IndexedState::kSending:
      return "sending";
    case storage::IndexedState::kInFlight:
      return "in_flight";
    case storage::IndexedState::kScheduled:
      return "scheduled";
    case storage::IndexedState::kSucceeded:
      return "succeeded";
    case storage::IndexedState::kFailed:
      return "failed";
    case storage::IndexedState::kDeadLettered:
      return "dead_lettered";
  }
  return "?";
}

// The queue's state index keys: each filed state in order, tx_ids in order.
Result<DumpOutput> state(storage::Store& store, const DumpRequest& request) {
  Rows rows({"state", "tx_id"});
  for (uint8_t s = 1; s <= storage::kIndexedStateMax && under_limit(request, rows.size()); ++s) {
    TARDE_RETURN_IF_ERROR(store.scan_state(request.argument, static_cast<storage::IndexedState>(s),
                                           {}, {}, [&](const std::string& tx_id) {
                                             rows.add({text(indexed_state_name(s)), text(tx_id)});
                                             return under_limit(request, rows.size());
                                           }));
  }
  return DumpOutput{render(rows, request.json), false};
}

Result<DumpOutput> check(storage::Store& store, const DumpRequest& request) {
  engine::Sweep sweep;
  TARDE_RETURN_IF_ERROR(engine::sweep_invariants(store, &sweep));
  Rows rows({"violation"});
  for (const auto& v : sweep.violations) rows.add({text(v.text)});
  DumpOutput out;
  out.problems = !sweep.violations.empty();
  if (request.json) {
    nlohmann::ordered_json doc;
    doc["transactions"] = sweep.transactions;
    doc["violations"] = rows.json();
    out.text = json_output(doc);
  } else {
    std::string lines;
    for (const auto& v : sweep.violations) lines += "violation: " + v.text + "\n";
    out.text = lines + "checked " + std::to_string(sweep.transactions) +
               " transactions: " + std::to_string(sweep.violations.size()) + " violations\n";
  }
  return out;
}

}  // namespace

Result<DumpOutput> run_dump(storage::Store& store, const DumpRequest& request) {
  using Runner = Result<DumpOutput> (*)(storage::Store&, const DumpRequest&);
  static const std::map<std::string, Runner> commands = {
      {"summary", summary}, {"tx", tx},     {"list", list},   {"due", due},
      {"ready", ready},     {"dead", dead}, {"check", check}, {"state", state},
  };
  auto it = commands.find(request.command);
  if (it == commands.end()) {
    return Status::invalid_argument("unknown command '" + request.command + "'");
  }
  return it->second(store, request);
}

}  // namespace tarde::tools
