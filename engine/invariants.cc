#include "engine/invariants.h"

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

// The index entries a record names must be there, with matching values.
Status check_owned(storage::Store& store, const TxRecord& rec, std::vector<Violation>* out) {
  storage::Kv& kv = store.kv();
  if (rec.due_kind != DueKind::kNone) {
    auto value = kv.get(Cf::kDue, storage::due_key(rec.due_at_ms, rec.tx_id));
    if (!value.is_ok()) return value.status();
    bool ok = false;
    if (value.value()) {
      auto due = storage::decode_due_value(*value.value());
      ok = due.is_ok() && due->kind == rec.due_kind && due->attempt == due_attempt(rec);
    }
    if (!ok) out->push_back(missing(rec, Cf::kDue, "its timer is missing from due"));
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
  }
  if (rec.dead_lettered) {
    auto letter = store.get_dead(rec.queue, rec.tx_id);
    if (!letter.is_ok()) return letter.status();
    if (!letter.value()) out->push_back(missing(rec, Cf::kDead, "its dead letter is missing"));
  }
  return Status::ok();
}

Status check_transactions(storage::Store& store, Sweep* sweep) {
  Status inner;
  Status scan = store.scan_tx([&](const TxRecord& rec) {
    sweep->transactions += 1;
    sweep->by_state[static_cast<size_t>(rec.state)] += 1;
    const std::string problem = field_problem(rec);
    if (!problem.empty()) {
      Violation v;
      v.text = rec.tx_id + ": " + problem;
      sweep->violations.push_back(std::move(v));
    }
    inner = check_owned(store, rec, &sweep->violations);
    return inner.is_ok();
  });
  TARDE_RETURN_IF_ERROR(scan);
  return inner;
}

// Visits every entry of one index with its owner's record (nullopt when the
// transaction is gone) and records an orphan for each entry `owns` rejects.
template <typename Entry, typename Scan, typename Owns, typename KeyOf>
Status check_index(storage::Store& store, Cf cf, const char* what, Scan scan, Owns owns,
                   KeyOf key_of, Sweep* sweep) {
  Status inner;
  Status scanned = scan([&](const Entry& entry) {
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

Status check_due(storage::Store& store, Sweep* sweep) {
  return check_index<storage::DueEntry>(
      store, Cf::kDue, "no transaction owns this timer",
      [&](const auto& visit) { return store.scan_due(nullptr, INT64_MAX, visit); },
      [](const TxRecord& owner, const storage::DueEntry& e) {
        return owner.due_kind == e.kind && owner.due_at_ms == e.fire_at_ms;
      },
      [](const storage::DueEntry& e) { return storage::due_key(e.fire_at_ms, e.tx_id); }, sweep);
}

Status check_ready(storage::Store& store, Sweep* sweep) {
  return check_index<storage::ReadyEntry>(
      store, Cf::kReady, "no transaction owns this request",
      [&](const auto& visit) { return store.scan_all_ready(visit); },
      [](const TxRecord& owner, const storage::ReadyEntry& e) {
        return owner.queue == e.queue && owner.ready_seq == e.seq &&
               owner.ready_at_ms == e.ready_at_ms;
      },
      [](const storage::ReadyEntry& e) {
        return storage::ready_key(e.queue, e.ready_at_ms, e.seq);
      },
      sweep);
}

Status check_dead(storage::Store& store, Sweep* sweep) {
  return check_index<storage::DeadLetter>(
      store, Cf::kDead, "no transaction owns this dead letter",
      [&](const auto& visit) { return store.scan_all_dead(visit); },
      [](const TxRecord& owner, const storage::DeadLetter& l) {
        return owner.queue == l.queue && owner.dead_lettered;
      },
      [](const storage::DeadLetter& l) { return storage::dead_key(l.queue, l.tx_id); }, sweep);
}

}  // namespace

Status sweep_invariants(storage::Store& store, Sweep* sweep) {
  *sweep = Sweep{};
  TARDE_RETURN_IF_ERROR(check_transactions(store, sweep));
  TARDE_RETURN_IF_ERROR(check_due(store, sweep));
  TARDE_RETURN_IF_ERROR(check_ready(store, sweep));
  return check_dead(store, sweep);
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
