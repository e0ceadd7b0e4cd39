#include "engine/invariants.h"

#include <functional>
#include <map>
#include <utility>

#include "storage/codec.h"
#include "storage/keys.h"

namespace tarde::engine {
namespace {

using storage::Cf;
using storage::DueKind;
using storage::TxRecord;
using storage::TxState;

std::string field_problem(const TxRecord& rec) {
  const uint32_t max = rec.policy.max_attempts;
  if (rec.attempt > max) return "attempt above max_attempts";
  if (rec.next_attempt != 0 && (rec.next_attempt < rec.attempt || rec.next_attempt > max)) {
    return "next_attempt outside attempt..max_attempts";
  }
  switch (rec.state) {
    case TxState::kScheduled:
      if (rec.due_kind != DueKind::kRetry || rec.due_at_ms != rec.next_fire_at_ms) {
        return "SCHEDULED without its retry timer";
      }
      if (rec.next_attempt == 0) return "SCHEDULED without next_attempt";
      break;
    case TxState::kSending:
      if ((rec.ready_seq != 0) == rec.dead_lettered) {
        return "SENDING must have exactly one ready or dead request";
      }
      if (rec.next_attempt == 0) return "SENDING without next_attempt";
      break;
    case TxState::kInFlight:
      if (rec.ready_seq != 0 || rec.dead_lettered) return "IN_FLIGHT still owns a request";
      if (rec.attempt == 0) return "IN_FLIGHT without attempt";
      break;
    case TxState::kSucceeded:
    case TxState::kFailed:
      if (rec.ready_seq != 0 || rec.dead_lettered || rec.next_attempt != 0) {
        return "terminal transaction owns a request";
      }
      if (rec.due_kind != DueKind::kNone && rec.due_kind != DueKind::kRetention) {
        return "terminal transaction owns a retry timer";
      }
      break;
    case TxState::kNone:
      return "no state";
  }
  if (rec.state != TxState::kScheduled && rec.due_kind == DueKind::kRetry) {
    return "retry timer outside SCHEDULED";
  }
  return {};
}

Violation missing(const TxRecord& rec, Cf cf, std::string what) {
  Violation v;
  v.kind = Violation::Kind::kMissingIndex;
  v.text = rec.tx_id + ": " + what;
  v.record = rec;
  v.cf = cf;
  return v;
}

Violation orphan(Cf cf, std::string key, std::string what) {
  Violation v;
  v.kind = Violation::Kind::kOrphanIndex;
  v.text = std::string(storage::cf_name(cf)) + " " + storage::printable_key(key) + ": " + what;
  v.cf = cf;
  v.key = std::move(key);
  return v;
}

uint32_t due_attempt(const TxRecord& rec) {
  return rec.due_kind == DueKind::kRetry ? rec.next_attempt : rec.attempt;
}

// Each queue's persisted ready floor (meta `ready_floor/<queue>`).
using ReadyFloors = std::map<std::string, storage::ReadyFloor, std::less<>>;

Result<ReadyFloors> read_ready_floors(storage::Store& store) {
  ReadyFloors floors;
  TARDE_RETURN_IF_ERROR(
      store.scan_ready_floors([&](const std::string& queue, const storage::ReadyFloor& floor) {
        floors.emplace(queue, floor);
        return true;
      }));
  return floors;
}

// A restart reads a queue's ready requests from its floor on: one below it
// would never be handed out again.
bool below_ready_floor(const ReadyFloors& floors, const TxRecord& rec) {
  auto it = floors.find(rec.queue);
  if (it == floors.end()) return false;
  return std::pair(rec.ready_at_ms, rec.ready_seq) <
         std::pair(it->second.ready_at_ms, it->second.seq);
}

// What the checks of one sweep share: each queue's ready floor, and whether
// the store keeps the state index (a stopped store of format version 1,
// read by a tool, does not), and whether it files SENDING transactions (a
// stopped store of format 2 to 4 does).
struct SweepContext {
  ReadyFloors floors;
  bool state_index = true;
  bool files_sending = false;
};

Result<SweepContext> read_context(storage::Store& store) {
  Result<ReadyFloors> floors = read_ready_floors(store);
  if (!floors.is_ok()) return floors.status();
  Result<uint32_t> version = store.stored_format_version();
  if (!version.is_ok()) return version.status();
  return SweepContext{std::move(floors).value(), storage::keeps_state_index(version.value()),
                      storage::files_sending_keys(version.value())};
}

// The state index key rec owns in a store that files SENDING transactions
// or not (storage::filed_state).
std::optional<storage::IndexedState> owned_state(const TxRecord& rec, bool files_sending) {
  if (files_sending && rec.state != TxState::kNone) return storage::indexed_state(rec);
  return storage::filed_state(rec);
}

// The owned entries found, by index: 0 due, 1 ready, 2 dead, 3 state.
using Present = std::array<uint64_t, 4>;

// The index entries a record names must be there, with matching values, and
// its request at or above its queue's ready floor (reported as missing: the
// repair, rebuilding it, lowers the floor first). `present`, when given,
// counts the owned entries found.
Status check_owned(storage::Store& store, const SweepContext& context, const TxRecord& rec,
                   std::vector<Violation>* out, Present* present = nullptr) {
  const ReadyFloors& floors = context.floors;
  storage::Kv& kv = store.kv();
  auto found = [present](size_t index) {
    if (present != nullptr) (*present)[index] += 1;
  };
  if (rec.due_kind != DueKind::kNone) {
    auto value = kv.get(Cf::kDue, storage::due_key(rec.due_at_ms, rec.tx_id));
    if (!value.is_ok()) return value.status();
    bool ok = false;
    if (value.value()) {
      auto due = storage::decode_due_value(*value.value());
      ok = due.is_ok() && due->kind == rec.due_kind && due->attempt == due_attempt(rec);
    }
    if (!ok) out->push_back(missing(rec, Cf::kDue, "its timer is missing from due"));
    if (ok) found(0);
  }
  if (rec.ready_seq != 0) {
    auto value = kv.get(Cf::kReady, storage::ready_key(rec.queue, rec.ready_at_ms, rec.ready_seq));
    if (!value.is_ok()) return value.status();
    bool ok = false;
    if (value.value()) {
      auto ready = storage::decode_ready_value(*value.value());
      ok = ready.is_ok() && ready->tx_id == rec.tx_id && ready->attempt == rec.next_attempt;
    }
    if (!ok) out->push_back(missing(rec, Cf::kReady, "its request is missing from ready"));
    if (ok && below_ready_floor(floors, rec)) {
      out->push_back(missing(rec, Cf::kReady,
                             "its request is below its queue's ready floor, where a restart "
                             "starts reading"));
    }
    if (ok) found(1);
  }
  if (rec.dead_lettered) {
    auto letter = store.get_dead(rec.queue, rec.tx_id);
    if (!letter.is_ok()) return letter.status();
    if (!letter.value()) out->push_back(missing(rec, Cf::kDead, "its dead letter is missing"));
    if (letter.value()) found(2);
  }
  const std::optional<storage::IndexedState> owned = owned_state(rec, context.files_sending);
  if (context.state_index && owned) {
    const auto filed = static_cast<uint8_t>(*owned);
    auto value = kv.get(Cf::kState, storage::state_key(rec.queue, filed, rec.tx_id));
    if (!value.is_ok()) return value.status();
    if (!value.value()) out->push_back(missing(rec, Cf::kState, "its state index key is missing"));
    if (value.value()) found(3);
  }
  return Status::ok();
}

// Counts one visit; false when the sweep was told to stop.
bool keep_going(SweepControl* control) {
  if (control == nullptr) return true;
  control->scanned.fetch_add(1, std::memory_order_relaxed);
  return !control->cancel.load(std::memory_order_relaxed);
}

Status cancelled() { return Status::shutting_down("invariant sweep cancelled"); }

bool owns_due(const TxRecord& owner, const storage::DueEntry& e) {
  return owner.due_kind == e.kind && owner.due_at_ms == e.fire_at_ms;
}

bool owns_ready(const TxRecord& owner, const storage::ReadyEntry& e) {
  return owner.queue == e.queue && owner.ready_seq == e.seq && owner.ready_at_ms == e.ready_at_ms;
}

bool owns_dead(const TxRecord& owner, const storage::DeadLetter& l) {
  return owner.queue == l.queue && owner.dead_lettered;
}

Status check_transactions(storage::Store& store, const SweepContext& context, Sweep* sweep,
                          SweepControl* control, Present* present) {
  Status inner;
  bool stopped = false;
  Status scan = store.scan_tx([&](const TxRecord& rec) {
    if (!keep_going(control)) {
      stopped = true;
      return false;
    }
    sweep->transactions += 1;
    sweep->by_state[static_cast<size_t>(rec.state)] += 1;
    if (rec.ready_seq != 0) sweep->queues[rec.queue].ready += 1;
    if (rec.dead_lettered) sweep->queues[rec.queue].dead += 1;
    if (rec.state == TxState::kInFlight) sweep->queues[rec.queue].in_flight += 1;
    if (rec.state == TxState::kScheduled) sweep->queues[rec.queue].scheduled += 1;
    const std::string problem = field_problem(rec);
    if (!problem.empty()) {
      Violation v;
      v.text = rec.tx_id + ": " + problem;
      v.record = rec;
      sweep->violations.push_back(std::move(v));
    }
    inner = check_owned(store, context, rec, &sweep->violations, present);
    return inner.is_ok();
  });
  TARDE_RETURN_IF_ERROR(scan);
  if (stopped) return cancelled();
  return inner;
}

// Visits every entry of one index with its owner's record (nullopt when the
// transaction is gone) and records an orphan for each entry `owns` rejects.
template <typename Entry, typename Scan, typename Owns, typename KeyOf>
Status check_index(storage::Store& store, Cf cf, const char* what, Scan scan, Owns owns,
                   KeyOf key_of, Sweep* sweep, SweepControl* control) {
  Status inner;
  Status scanned = scan([&](const Entry& entry) {
    if (!keep_going(control)) {
      inner = cancelled();
      return false;
    }
    auto rec = store.get_tx(entry.tx_id);
    if (!rec.is_ok()) {
      inner = rec.status();
      return false;
    }
    if (!rec.value() || !owns(*rec.value(), entry)) {
      sweep->violations.push_back(orphan(cf, key_of(entry), what));
    }
    return true;
  });
  TARDE_RETURN_IF_ERROR(scanned);
  return inner;
}

constexpr const char* kOrphanDue = "no transaction owns this timer";
constexpr const char* kOrphanReady = "no transaction owns this request";
constexpr const char* kOrphanDead = "no transaction owns this dead letter";
constexpr const char* kOrphanState = "no transaction is filed under this state index key";

bool owns_state(const TxRecord& owner, const storage::StateKey& k, bool files_sending) {
  const std::optional<storage::IndexedState> owned = owned_state(owner, files_sending);
  return owner.queue == k.queue && owned && static_cast<uint8_t>(*owned) == k.state;
}

Status check_due(storage::Store& store, Sweep* sweep, SweepControl* control) {
  return check_index<storage::DueEntry>(
      store, Cf::kDue, kOrphanDue,
      [&](const auto& visit) { return store.scan_due(nullptr, INT64_MAX, visit); }, owns_due,
      [](const storage::DueEntry& e) { return storage::due_key(e.fire_at_ms, e.tx_id); }, sweep,
      control);
}

Status check_ready(storage::Store& store, Sweep* sweep, SweepControl* control) {
  return check_index<storage::ReadyEntry>(
      store, Cf::kReady, kOrphanReady,
      [&](const auto& visit) { return store.scan_all_ready(visit); }, owns_ready,
      [](const storage::ReadyEntry& e) {
        return storage::ready_key(e.queue, e.ready_at_ms, e.seq);
      },
      sweep, control);
}

Status check_dead(storage::Store& store, Sweep* sweep, SweepControl* control) {
  return check_index<storage::DeadLetter>(
      store, Cf::kDead, kOrphanDead, [&](const auto& visit) { return store.scan_all_dead(visit); },
      owns_dead, [](const storage::DeadLetter& l) { return storage::dead_key(l.queue, l.tx_id); },
      sweep, control);
}

Status check_state(storage::Store& store, const SweepContext& context, Sweep* sweep,
                   SweepControl* control) {
  return check_index<storage::StateKey>(
      store, Cf::kState, kOrphanState,
      [&](const auto& visit) { return store.scan_all_state(visit); },
      [&context](const TxRecord& owner, const storage::StateKey& k) {
        return owns_state(owner, k, context.files_sending);
      },
      [](const storage::StateKey& k) { return storage::state_key(k.queue, k.state, k.tx_id); },
      sweep, control);
}

// Whether the index entry under `key` in `cf` is still there without an
// owner, judged on the current store.
Result<bool> still_orphan(storage::Store& store, Cf cf, const std::string& key) {
  auto value = store.kv().get(cf, key);
  if (!value.is_ok()) return value.status();
  if (!value.value()) return false;  // gone since
  std::string tx_id;
  std::function<bool(const TxRecord&)> owns;
  if (cf == Cf::kDue) {
    auto parts = storage::decode_due_key(key);
    auto due = storage::decode_due_value(*value.value());
    if (!parts.is_ok() || !due.is_ok()) return true;  // undecodable: no one owns it
    const storage::DueEntry entry{parts->fire_at_ms, parts->tx_id, due->kind, due->attempt};
    tx_id = entry.tx_id;
    owns = [entry](const TxRecord& rec) { return owns_due(rec, entry); };
  } else if (cf == Cf::kReady) {
    auto parts = storage::decode_ready_key(key);
    auto ready = storage::decode_ready_value(*value.value());
    if (!parts.is_ok() || !ready.is_ok()) return true;
    const storage::ReadyEntry entry{parts->queue, parts->ready_at_ms, parts->seq, ready->tx_id,
                                    ready->attempt};
    tx_id = entry.tx_id;
    owns = [entry](const TxRecord& rec) { return owns_ready(rec, entry); };
  } else if (cf == Cf::kState) {
    auto parts = storage::decode_state_key(key);
    if (!parts.is_ok()) return true;
    const storage::StateKey entry = parts.value();
    tx_id = entry.tx_id;
    // Repairs run on a store this build has upgraded: it files no SENDING.
    owns = [entry](const TxRecord& rec) { return owns_state(rec, entry, false); };
  } else {
    auto parts = storage::decode_dead_key(key);
    if (!parts.is_ok()) return true;
    storage::DeadLetter letter;
    letter.queue = parts->queue;
    letter.tx_id = parts->tx_id;
    tx_id = letter.tx_id;
    owns = [letter](const TxRecord& rec) { return owns_dead(rec, letter); };
  }
  auto rec = store.get_tx(tx_id);
  if (!rec.is_ok()) return rec.status();
  return !rec.value() || !owns(*rec.value());
}

// The number of keys in one column family, read in order without decoding.
Result<uint64_t> count_keys(storage::Store& store, Cf cf, SweepControl* control) {
  uint64_t n = 0;
  bool stopped = false;
  Status status = store.kv().scan(cf, {}, {}, [&](std::string_view, std::string_view) {
    if (!keep_going(control)) {
      stopped = true;
      return false;
    }
    n += 1;
    return true;
  });
  if (!status.is_ok()) return status;
  if (stopped) return cancelled();
  return n;
}

}  // namespace

// Orphans are looked for entry by entry (a point read of the owner per
// entry, random reads all over `tx`) only in an index that holds more keys
// than the records own intact: keys are distinct per owner, so equal
// numbers mean every key has its owner. On a consistent store this turns
// the orphan half of the sweep into one sequential count per index.
Status sweep_invariants(storage::Store& store, Sweep* sweep, SweepControl* control) {
  *sweep = Sweep{};
  Result<SweepContext> context = read_context(store);
  if (!context.is_ok()) return context.status();
  Present present{};
  TARDE_RETURN_IF_ERROR(check_transactions(store, context.value(), sweep, control, &present));
  const Cf indexes[] = {Cf::kDue, Cf::kReady, Cf::kDead, Cf::kState};
  const size_t checked = context->state_index ? 4 : 3;
  for (size_t i = 0; i < checked; ++i) {
    Result<uint64_t> keys = count_keys(store, indexes[i], control);
    if (!keys.is_ok()) return keys.status();
    if (keys.value() == present[i]) continue;
    if (i == 0) TARDE_RETURN_IF_ERROR(check_due(store, sweep, control));
    if (i == 1) TARDE_RETURN_IF_ERROR(check_ready(store, sweep, control));
    if (i == 2) TARDE_RETURN_IF_ERROR(check_dead(store, sweep, control));
    if (i == 3) TARDE_RETURN_IF_ERROR(check_state(store, context.value(), sweep, control));
  }
  return Status::ok();
}

Status check_records(storage::Store& store, const std::vector<TxRecord>& records,
                     std::vector<Violation>* violations) {
  Result<SweepContext> context = read_context(store);
  if (!context.is_ok()) return context.status();
  for (const TxRecord& rec : records) {
    const std::string problem = field_problem(rec);
    if (!problem.empty()) {
      Violation v;
      v.text = rec.tx_id + ": " + problem;
      v.record = rec;
      violations->push_back(std::move(v));
    }
    TARDE_RETURN_IF_ERROR(check_owned(store, context.value(), rec, violations));
  }
  return Status::ok();
}

Status still_violated(storage::Store& store, const std::vector<Violation>& found,
                      std::vector<Violation>* still) {
  Result<SweepContext> context = read_context(store);
  if (!context.is_ok()) return context.status();
  for (const Violation& v : found) {
    if (v.kind == Violation::Kind::kOrphanIndex) {
      auto orphan = still_orphan(store, v.cf, v.key);
      if (!orphan.is_ok()) return orphan.status();
      if (orphan.value()) still->push_back(v);
      continue;
    }
    auto rec = store.get_tx(v.record.tx_id);
    if (!rec.is_ok()) return rec.status();
    if (!rec.value()) continue;  // purged since
    if (v.kind == Violation::Kind::kBadRecord) {
      if (!field_problem(*rec.value()).empty()) still->push_back(v);
      continue;
    }
    std::vector<Violation> now;
    TARDE_RETURN_IF_ERROR(check_owned(store, context.value(), *rec.value(), &now));
    for (Violation& n : now) {
      if (n.cf == v.cf) still->push_back(std::move(n));
    }
  }
  return Status::ok();
}

Status repair_violations(storage::Store& store, const std::vector<Violation>& violations,
                         std::vector<std::string>* repaired) {
  storage::Batch batch;
  storage::KvBatch deletes;
  for (const Violation& v : violations) {
    const TxRecord& rec = v.record;
    if (v.kind == Violation::Kind::kOrphanIndex) {
      deletes.del(v.cf, v.key);
    } else if (v.kind == Violation::Kind::kMissingIndex && v.cf == Cf::kDue) {
      batch.put_due({rec.due_at_ms, rec.tx_id, rec.due_kind, due_attempt(rec)});
    } else if (v.kind == Violation::Kind::kMissingIndex && v.cf == Cf::kReady) {
      batch.put_ready({rec.queue, rec.ready_at_ms, rec.ready_seq, rec.tx_id, rec.next_attempt});
    } else if (v.kind == Violation::Kind::kMissingIndex && v.cf == Cf::kState) {
      if (const auto filed = storage::filed_state(rec))
        batch.put_state(rec.queue, *filed, rec.tx_id);
    } else if (v.kind == Violation::Kind::kMissingIndex && v.cf == Cf::kDead) {
      batch.put_dead({rec.queue, rec.tx_id, rec.next_attempt, rec.deliveries, rec.updated_at_ms,
                      rec.payload, rec.failures});
    } else {
      continue;
    }
    repaired->push_back("repaired " + v.text);
  }
  storage::KvBatch all = deletes;
  all.append(batch.kv());
  if (all.empty()) return Status::ok();
  return store.kv().write(all);
}

}  // namespace tarde::engine
