#include "storage/store.h"

#include <algorithm>

#include "base/assert.h"
#include "storage/codec.h"
#include "storage/keys.h"

namespace tarde::storage {
namespace {

// The corruption error for a record that failed to decode, naming where it is.
Status bad_record(Cf cf, std::string_view key, const Status& cause) {
  return Status::corruption(std::string(cf_name(cf)) + " " + printable_key(key) + ": " +
                            cause.message());
}

// True when the column family holds at least one key.
Result<bool> has_any_key(Kv& kv, Cf cf) {
  bool found = false;
  Status status = kv.scan(cf, {}, {}, [&found](std::string_view, std::string_view) {
    found = true;
    return false;
  });
  if (!status.is_ok()) return status;
  return found;
}

// Decodes a `dead` entry and checks that the record matches its key.
Result<DeadLetter> decode_dead_entry(std::string_view key, std::string_view value) {
  Result<DeadKey> dead_key_parts = decode_dead_key(key);
  if (!dead_key_parts.is_ok()) return dead_key_parts.status();
  Result<DeadLetter> letter = decode_dead_letter(value);
  if (!letter.is_ok()) return bad_record(Cf::kDead, key, letter.status());
  if (letter->queue != dead_key_parts->queue || letter->tx_id != dead_key_parts->tx_id) {
    return bad_record(Cf::kDead, key, Status::corruption("record does not match its key"));
  }
  return std::move(letter).value();
}

Result<ReadyEntry> decode_ready_entry(std::string_view key, std::string_view value) {
  Result<ReadyKey> parts = decode_ready_key(key);
  if (!parts.is_ok()) return parts.status();
  Result<ReadyValue> ready = decode_ready_value(value);
  if (!ready.is_ok()) return bad_record(Cf::kReady, key, ready.status());
  return ReadyEntry{std::move(parts->queue), parts->ready_at_ms, parts->seq,
                    std::move(ready->tx_id), ready->attempt};
}

// Runs a scan whose step decodes and visits one entry, returning whether to
// go on. The first decoding error stops the scan and is returned.
template <typename Step>
Status decoding_scan(Kv& kv, Cf cf, std::string_view lower, std::string_view upper,
                     const Step& step) {
  Status failure;
  Status status = kv.scan(cf, lower, upper, [&](std::string_view key, std::string_view value) {
    Result<bool> more = step(key, value);
    if (!more.is_ok()) {
      failure = more.status();
      return false;
    }
    return more.value();
  });
  if (!failure.is_ok()) return failure;
  return status;
}

// Visits every meta record "<prefix><queue>": the queue named by the key
// (decode_key) and the value decode_value makes of the record. An
// undecodable key or value stops the scan as corruption naming the key.
template <typename Value, typename Visit>
Status scan_queue_meta(Kv& kv, std::string_view prefix,
                       Result<std::string> (*decode_key)(std::string_view),
                       Result<Value> (*decode_value)(std::string_view), const Visit& visit) {
  const std::string upper = prefix_end(prefix);
  return decoding_scan(kv, Cf::kMeta, prefix, upper,
                       [&](std::string_view key, std::string_view value) {
                         Result<std::string> queue = decode_key(key);
                         if (!queue.is_ok()) return Result<bool>(queue.status());
                         Result<Value> decoded = decode_value(value);
                         if (!decoded.is_ok()) {
                           return Result<bool>(bad_record(Cf::kMeta, key, decoded.status()));
                         }
                         return Result<bool>(visit(queue.value(), decoded.value()));
                       });
}

// A retry due within this long of its record's write is read again when it
// fires, before most other recent records.
constexpr int64_t kFiresSoonMs = 60'000;

// Whether the engine will read this record again whatever it reads
// meanwhile: a request in `ready` (queued or leased) is read when it is
// handed out or answered, however many requests are queued before it, and
// a retry due shortly when it fires. StagedKv's cache keeps such records
// apart (RecentValues): a burst fires far ahead of its hand-outs.
ReadLater read_later(const TxRecord& record) {
  const bool waits_in_ready = record.state == TxState::kSending && !record.dead_lettered;
  const bool fires_soon = record.state == TxState::kScheduled &&
                          record.due_kind == DueKind::kRetry &&
                          record.due_at_ms - record.updated_at_ms <= kFiresSoonMs;
  return waits_in_ready || fires_soon ? ReadLater::kYes : ReadLater::kNo;
}

}  // namespace

void Batch::put_tx(const TxRecord& record) {
  std::string bytes = encode_tx(record);
  // A finished transaction is read again only by GET, HISTORY or its purge:
  // remembering it would cost more than the rare decode it saves.
  const bool finished = record.state == TxState::kSucceeded || record.state == TxState::kFailed;
  if (decoded_ != nullptr && !finished) decoded_->remember(bytes, record);
  kv_.put(Cf::kTx, tx_key(record.tx_id), std::move(bytes), read_later(record));
}

void Batch::delete_tx(std::string_view tx_id) { kv_.del(Cf::kTx, tx_key(tx_id)); }

void Batch::put_due(const DueEntry& entry) {
  kv_.put(Cf::kDue, due_key(entry.fire_at_ms, entry.tx_id),
          encode_due_value(DueValue{entry.kind, entry.attempt}));
}

void Batch::delete_due(int64_t fire_at_ms, std::string_view tx_id) {
  kv_.del(Cf::kDue, due_key(fire_at_ms, tx_id));
}

void Batch::put_ready(const ReadyEntry& entry) {
  kv_.put(Cf::kReady, ready_key(entry.queue, entry.ready_at_ms, entry.seq),
          encode_ready_value(ReadyValue{entry.tx_id, entry.attempt}));
}

void Batch::delete_ready(std::string_view queue, int64_t ready_at_ms, uint64_t seq) {
  kv_.del(Cf::kReady, ready_key(queue, ready_at_ms, seq));
}

void Batch::put_event(std::string_view tx_id, uint64_t seq, const EventRecord& event) {
  kv_.put(Cf::kEvents, event_key(tx_id, seq), encode_event(event));
}

void Batch::delete_event(std::string_view tx_id, uint64_t seq) {
  kv_.del(Cf::kEvents, event_key(tx_id, seq));
}

void Batch::put_dead(const DeadLetter& letter) {
  kv_.put(Cf::kDead, dead_key(letter.queue, letter.tx_id), encode_dead_letter(letter));
}

void Batch::delete_dead(std::string_view queue, std::string_view tx_id) {
  kv_.del(Cf::kDead, dead_key(queue, tx_id));
}

void Batch::put_state(std::string_view queue, IndexedState state, std::string_view tx_id) {
  kv_.put(Cf::kState, state_key(queue, static_cast<uint8_t>(state), tx_id), {});
}

void Batch::delete_state(std::string_view queue, IndexedState state, std::string_view tx_id) {
  kv_.del(Cf::kState, state_key(queue, static_cast<uint8_t>(state), tx_id));
}

void Batch::put_queue_config(std::string_view queue, const QueueConfig& config) {
  kv_.put(Cf::kMeta, queue_config_key(queue), encode_queue_config(config));
}

void Batch::put_ready_floor(std::string_view queue, const ReadyFloor& floor) {
  kv_.put(Cf::kMeta, ready_floor_key(queue), encode_ready_floor(floor));
}

void Batch::put_meta(std::string_view name, std::string_view value) {
  TARDE_ASSERT(!name.empty());
  kv_.put(Cf::kMeta, std::string(name), std::string(value));
}

void Batch::put_ready_seq_reserved(uint64_t reserved) {
  std::string value;
  append_be64(&value, reserved);
  kv_.put(Cf::kMeta, std::string(kMetaReadySeqKey), std::move(value));
}

Store::FormatCheck Store::format_of(std::string_view record) {
  Result<uint32_t> version = decode_format_version(record);
  if (!version.is_ok()) {
    return FormatCheck{Format::kBadRecord,
                       bad_record(Cf::kMeta, kMetaFormatKey, version.status()).message()};
  }
  if (version.value() == 0) {
    return FormatCheck{Format::kBadRecord, "meta format: version 0 was never written"};
  }
  if (version.value() > kFormatVersion) {
    return FormatCheck{Format::kNewer, "store format version " + std::to_string(version.value()) +
                                           " is newer than this build's " +
                                           std::to_string(kFormatVersion)};
  }
  if (version.value() < kFormatVersion) {
    return FormatCheck{Format::kOlder, "store format version " + std::to_string(version.value()) +
                                           " is upgraded to " + std::to_string(kFormatVersion) +
                                           " when opened for writing"};
  }
  return FormatCheck{Format::kCurrent, ""};
}

Result<Store::FormatCheck> Store::check_format() {
  Result<std::optional<std::string>> stored = kv_.get(Cf::kMeta, kMetaFormatKey);
  if (!stored.is_ok()) return stored.status();
  if (stored->has_value()) return format_of(stored.value().value());
  // No format record: only an empty store may become a tarde store. Every
  // column family is checked, not only `tx`, so that a half-written or
  // foreign store is refused rather than adopted.
  for (size_t i = 0; i < kCfCount; ++i) {
    const Cf cf = static_cast<Cf>(i);
    Result<bool> any = has_any_key(kv_, cf);
    if (!any.is_ok()) return any.status();
    if (any.value()) {
      return FormatCheck{Format::kNotTarde, std::string("store holds data in column family ") +
                                                cf_name(cf) +
                                                " but no format record; not a tarde store"};
    }
  }
  return FormatCheck{Format::kEmpty, ""};
}

Status Store::ensure_format(FormatUpgrade* upgrade, const UpgradeProgress& progress) {
  if (upgrade != nullptr) *upgrade = FormatUpgrade{};
  Result<FormatCheck> check = check_format();
  if (!check.is_ok()) return check.status();
  switch (check->format) {
    case Format::kCurrent:
      return Status::ok();
    case Format::kOlder: {
      // format_of accepted the record, so it decodes.
      Result<std::optional<std::string>> stored = kv_.get(Cf::kMeta, kMetaFormatKey);
      if (!stored.is_ok()) return stored.status();
      Result<uint32_t> version = decode_format_version(stored.value().value_or(""));
      if (!version.is_ok()) return version.status();
      return upgrade_from(version.value(), upgrade, progress);
    }
    case Format::kNewer:
      return Status::invalid_argument(check->detail);
    case Format::kNotTarde:
    case Format::kBadRecord:
      return Status::corruption(check->detail);
    case Format::kEmpty:
      break;
  }
  KvBatch batch;
  batch.put(Cf::kMeta, std::string(kMetaFormatKey), encode_format_version(kFormatVersion));
  return kv_.write(batch);
}

// Version 1: every transaction gets the state index key filed_state says. Keys of an
// earlier, interrupted run are written again (a put of the same key).
Status Store::file_every_transaction(FormatUpgrade* done, const UpgradeProgress& progress) {
  std::string lower;  // the first tx key of the next chunk; empty: from the start
  for (;;) {
    Batch batch;
    size_t in_batch = 0;
    std::string last;
    Status scanned =
        decoding_scan(kv_, Cf::kTx, lower, {}, [&](std::string_view key, std::string_view value) {
          Result<TxRecord> record = decode_tx(value);
          if (!record.is_ok()) return Result<bool>(bad_record(Cf::kTx, key, record.status()));
          if (record->tx_id != key || record->state == TxState::kNone ||
              !is_valid_queue_name(record->queue)) {
            return Result<bool>(bad_record(
                Cf::kTx, key, Status::corruption("record does not match its key or has no state")));
          }
          const std::optional<IndexedState> filed = filed_state(record.value());
          if (filed) batch.put_state(record->queue, *filed, record->tx_id);
          last.assign(key);
          in_batch += 1;
          return Result<bool>(in_batch < kUpgradeBatchTransactions);
        });
    TARDE_RETURN_IF_ERROR(scanned);
    if (in_batch > 0) TARDE_RETURN_IF_ERROR(write(batch));
    done->indexed += in_batch;
    if (in_batch > 0 && progress) progress(*done);
    if (in_batch < kUpgradeBatchTransactions) return Status::ok();
    lower = key_after(last);
  }
}

namespace {

// A state key's parts, or corruption naming the key.
Result<StateKey> decode_state_key_at(std::string_view key) {
  Result<StateKey> parts = decode_state_key(key);
  if (!parts.is_ok()) return bad_record(Cf::kState, key, parts.status());
  return parts;
}

}  // namespace

// Versions 2 to 4 to 5: the state keys of SENDING transactions go, queue by
// queue. A queue's keys all start with its name and 0x00, so the name
// followed by 0x01 sorts after every one of them and before the next
// queue's: the scan seeks there for the next queue.
Status Store::unfile_sending(FormatUpgrade* done, const UpgradeProgress& progress) {
  const auto sending = static_cast<uint8_t>(IndexedState::kSending);
  std::string next_queue;  // where the next queue's keys start; empty: the first
  for (;;) {
    std::optional<std::string> queue;
    TARDE_RETURN_IF_ERROR(
        decoding_scan(kv_, Cf::kState, next_queue, {}, [&](std::string_view key, std::string_view) {
          Result<StateKey> parts = decode_state_key_at(key);
          if (!parts.is_ok()) return Result<bool>(parts.status());
          queue = parts->queue;
          return Result<bool>(false);
        }));
    if (!queue) return Status::ok();
    std::string lower = state_prefix(*queue, sending);
    const std::string upper = prefix_end(lower);
    for (;;) {
      Batch batch;
      size_t in_batch = 0;
      std::string last;
      TARDE_RETURN_IF_ERROR(
          decoding_scan(kv_, Cf::kState, lower, upper, [&](std::string_view key, std::string_view) {
            Result<StateKey> parts = decode_state_key_at(key);
            if (!parts.is_ok()) return Result<bool>(parts.status());
            batch.delete_state(parts->queue, IndexedState::kSending, parts->tx_id);
            last.assign(key);
            in_batch += 1;
            return Result<bool>(in_batch < kUpgradeBatchTransactions);
          }));
      if (in_batch > 0) TARDE_RETURN_IF_ERROR(write(batch));
      done->unfiled += in_batch;
      if (in_batch > 0 && progress) progress(*done);
      if (in_batch < kUpgradeBatchTransactions) break;
      lower = key_after(last);
    }
    next_queue = *queue + '\x01';
  }
}

// Versions 2 to 4 rewrite no record: a record of version 2 keeps its events
// in `events`, and a record of version 2 or 3 is read in the cereal layout
// until its next transition writes it compact. The format record comes
// last, in its own write, so that a crash part-way leaves the old version
// to upgrade again.
Status Store::upgrade_from(uint32_t version, FormatUpgrade* upgrade,
                           const UpgradeProgress& progress) {
  TARDE_ASSERT(version >= kFormatVersionOldest);
  TARDE_ASSERT(version < kFormatVersion);
  FormatUpgrade done{version, 0, 0};
  if (version < 2) {
    TARDE_RETURN_IF_ERROR(file_every_transaction(&done, progress));
  } else {
    TARDE_RETURN_IF_ERROR(unfile_sending(&done, progress));
  }
  KvBatch format;
  format.put(Cf::kMeta, std::string(kMetaFormatKey), encode_format_version(kFormatVersion));
  TARDE_RETURN_IF_ERROR(kv_.write(format));
  if (upgrade != nullptr) *upgrade = done;
  return Status::ok();
}

Result<uint32_t> Store::stored_format_version() {
  Result<std::optional<std::string>> stored = kv_.get(Cf::kMeta, kMetaFormatKey);
  if (!stored.is_ok()) return stored.status();
  if (!stored->has_value()) return kFormatVersion;
  Result<uint32_t> version = decode_format_version(stored.value().value());
  if (!version.is_ok()) return bad_record(Cf::kMeta, kMetaFormatKey, version.status());
  return version.value();
}

Result<bool> Store::has_state_index() {
  Result<uint32_t> version = stored_format_version();
  if (!version.is_ok()) return version.status();
  return keeps_state_index(version.value());
}

Result<bool> Store::files_sending() {
  Result<uint32_t> version = stored_format_version();
  if (!version.is_ok()) return version.status();
  return files_sending_keys(version.value());
}

Result<std::optional<TxRecord>> Store::get_tx(std::string_view tx_id) {
  if (!is_valid_tx_id(tx_id)) return Status::invalid_argument("bad tx_id " + printable_key(tx_id));
  Result<std::optional<std::string>> bytes = kv_.get(Cf::kTx, tx_key_view(tx_id));
  if (!bytes.is_ok()) return bytes.status();
  if (!bytes->has_value()) return std::optional<TxRecord>();
  if (const TxRecord* known = decoded_.find(tx_id, bytes.value().value())) {
    return std::optional<TxRecord>(*known);
  }
  Result<TxRecord> record = decode_tx(bytes.value().value());
  if (!record.is_ok()) return bad_record(Cf::kTx, tx_id, record.status());
  if (record->tx_id != tx_id) {
    return bad_record(Cf::kTx, tx_id, Status::corruption("record does not match its key"));
  }
  if (read_cache_ == ReadCache::kRemember) decoded_.remember(bytes.value().value(), record.value());
  return std::optional<TxRecord>(std::move(record).value());
}

void Store::prefetch_tx(const std::vector<std::string_view>& tx_ids) {
  std::vector<std::string> keys;
  keys.reserve(tx_ids.size());
  for (std::string_view tx_id : tx_ids) {
    if (is_valid_tx_id(tx_id)) keys.emplace_back(tx_key_view(tx_id));
  }
  kv_.prefetch(Cf::kTx, std::move(keys));
}

Status Store::scan_tx(const std::function<bool(const TxRecord&)>& visit) {
  return decoding_scan(kv_, Cf::kTx, {}, {}, [&](std::string_view key, std::string_view value) {
    Result<std::string> tx_id = decode_tx_key(key);
    if (!tx_id.is_ok()) return Result<bool>(tx_id.status());
    Result<TxRecord> record = decode_tx(value);
    if (!record.is_ok()) return Result<bool>(bad_record(Cf::kTx, key, record.status()));
    if (record->tx_id != tx_id.value()) {
      return Result<bool>(
          bad_record(Cf::kTx, key, Status::corruption("record does not match its key")));
    }
    return Result<bool>(visit(record.value()));
  });
}

Status Store::scan_due(const DueEntry* after, int64_t until_ms,
                       const std::function<bool(const DueEntry&)>& visit) {
  if (until_ms < 0) return Status::ok();  // no valid time is <= a negative one
  const std::string lower =
      after == nullptr ? std::string() : key_after(due_key(after->fire_at_ms, after->tx_id));
  const std::string upper = due_upper_bound(until_ms);
  if (!lower.empty() && lower >= upper) return Status::ok();
  return decoding_scan(
      kv_, Cf::kDue, lower, upper, [&](std::string_view key, std::string_view value) {
        Result<DueKey> parts = decode_due_key(key);
        if (!parts.is_ok()) return Result<bool>(parts.status());
        Result<DueValue> due = decode_due_value(value);
        if (!due.is_ok()) return Result<bool>(bad_record(Cf::kDue, key, due.status()));
        return Result<bool>(
            visit(DueEntry{parts->fire_at_ms, std::move(parts->tx_id), due->kind, due->attempt}));
      });
}

Status Store::scan_ready(std::string_view queue,
                         const std::function<bool(const ReadyEntry&)>& visit) {
  if (!is_valid_queue_name(queue)) {
    return Status::invalid_argument("bad queue name " + printable_key(queue));
  }
  return scan_ready_range(queue, ready_prefix(queue), visit);
}

Status Store::scan_ready_after(std::string_view queue, int64_t ready_at_ms, uint64_t seq,
                               const std::function<bool(const ReadyEntry&)>& visit) {
  if (!is_valid_queue_name(queue)) {
    return Status::invalid_argument("bad queue name " + printable_key(queue));
  }
  return scan_ready_range(queue, key_after(ready_key(queue, ready_at_ms, seq)), visit);
}

Status Store::scan_ready_from(std::string_view queue, int64_t ready_at_ms, uint64_t seq,
                              const std::function<bool(const ReadyEntry&)>& visit) {
  if (!is_valid_queue_name(queue)) {
    return Status::invalid_argument("bad queue name " + printable_key(queue));
  }
  return scan_ready_range(queue, ready_key(queue, ready_at_ms, seq), visit);
}

// One queue's ready entries from the key lower on. Requires a valid queue.
Status Store::scan_ready_range(std::string_view queue, const std::string& lower,
                               const std::function<bool(const ReadyEntry&)>& visit) {
  const std::string upper = prefix_end(ready_prefix(queue));
  return decoding_scan(kv_, Cf::kReady, lower, upper,
                       [&](std::string_view key, std::string_view value) {
                         Result<ReadyEntry> entry = decode_ready_entry(key, value);
                         if (!entry.is_ok()) return Result<bool>(entry.status());
                         return Result<bool>(visit(entry.value()));
                       });
}

Status Store::scan_all_ready(const std::function<bool(const ReadyEntry&)>& visit) {
  return decoding_scan(kv_, Cf::kReady, {}, {}, [&](std::string_view key, std::string_view value) {
    Result<ReadyEntry> entry = decode_ready_entry(key, value);
    if (!entry.is_ok()) return Result<bool>(entry.status());
    return Result<bool>(visit(entry.value()));
  });
}

Status Store::scan_events(std::string_view tx_id,
                          const std::function<bool(uint64_t seq, const EventRecord&)>& visit) {
  if (!is_valid_tx_id(tx_id)) return Status::invalid_argument("bad tx_id " + printable_key(tx_id));
  const std::string lower = event_prefix(tx_id);
  const std::string upper = prefix_end(lower);
  return decoding_scan(kv_, Cf::kEvents, lower, upper,
                       [&](std::string_view key, std::string_view value) {
                         Result<EventKey> parts = decode_event_key(key);
                         if (!parts.is_ok()) return Result<bool>(parts.status());
                         Result<EventRecord> event = decode_event(value);
                         if (!event.is_ok()) {
                           return Result<bool>(bad_record(Cf::kEvents, key, event.status()));
                         }
                         return Result<bool>(visit(parts->seq, event.value()));
                       });
}

Status Store::scan_history(const TxRecord& record,
                           const std::function<bool(uint64_t seq, const EventRecord&)>& visit) {
  if (record.first_event && !visit(0, *record.first_event)) return Status::ok();
  bool more = true;
  TARDE_RETURN_IF_ERROR(scan_events(record.tx_id, [&](uint64_t seq, const EventRecord& event) {
    more = visit(seq, event);
    return more;
  }));
  if (more && record.newest_event) visit(record.events - 1, *record.newest_event);
  return Status::ok();
}

Status Store::scan_dead(std::string_view queue,
                        const std::function<bool(const DeadLetter&)>& visit) {
  if (!is_valid_queue_name(queue)) {
    return Status::invalid_argument("bad queue name " + printable_key(queue));
  }
  const std::string lower = dead_prefix(queue);
  const std::string upper = prefix_end(lower);
  return decoding_scan(kv_, Cf::kDead, lower, upper,
                       [&](std::string_view key, std::string_view value) {
                         Result<DeadLetter> letter = decode_dead_entry(key, value);
                         if (!letter.is_ok()) return Result<bool>(letter.status());
                         return Result<bool>(visit(letter.value()));
                       });
}

Status Store::scan_all_dead(const std::function<bool(const DeadLetter&)>& visit) {
  return decoding_scan(kv_, Cf::kDead, {}, {}, [&](std::string_view key, std::string_view value) {
    Result<DeadLetter> letter = decode_dead_entry(key, value);
    if (!letter.is_ok()) return Result<bool>(letter.status());
    return Result<bool>(visit(letter.value()));
  });
}

Result<std::optional<DeadLetter>> Store::get_dead(std::string_view queue, std::string_view tx_id) {
  if (!is_valid_queue_name(queue) || !is_valid_tx_id(tx_id)) {
    return Status::invalid_argument("bad queue name or tx_id");
  }
  const std::string key = dead_key(queue, tx_id);
  Result<std::optional<std::string>> bytes = kv_.get(Cf::kDead, key);
  if (!bytes.is_ok()) return bytes.status();
  if (!bytes->has_value()) return std::optional<DeadLetter>();
  Result<DeadLetter> letter = decode_dead_entry(key, bytes.value().value());
  if (!letter.is_ok()) return letter.status();
  return std::optional<DeadLetter>(std::move(letter).value());
}

Status Store::scan_state(std::string_view queue, IndexedState state, std::string_view prefix,
                         std::string_view after,
                         const std::function<bool(const std::string& tx_id)>& visit) {
  const auto byte = static_cast<uint8_t>(state);
  if (!is_valid_queue_name(queue)) {
    return Status::invalid_argument("bad queue name " + printable_key(queue));
  }
  if (byte < 1 || byte > kIndexedStateMax) {
    return Status::invalid_argument("bad state " + std::to_string(byte));
  }
  if (!prefix.empty() && !is_valid_tx_id(prefix)) {
    return Status::invalid_argument("bad tx_id prefix " + printable_key(prefix));
  }
  if (!after.empty() && !is_valid_tx_id(after)) {
    return Status::invalid_argument("bad tx_id " + printable_key(after));
  }
  std::string lower = state_prefix(queue, byte);
  lower.append(prefix);
  const std::string upper = prefix_end(lower);
  if (!after.empty()) lower = std::max(lower, key_after(state_key(queue, byte, after)));
  if (lower >= upper) return Status::ok();
  return decoding_scan(kv_, Cf::kState, lower, upper, [&](std::string_view key, std::string_view) {
    Result<StateKey> parts = decode_state_key(key);
    if (!parts.is_ok()) return Result<bool>(parts.status());
    return Result<bool>(visit(parts->tx_id));
  });
}

Status Store::scan_all_state(const std::function<bool(const StateKey&)>& visit) {
  return decoding_scan(kv_, Cf::kState, {}, {}, [&](std::string_view key, std::string_view) {
    Result<StateKey> parts = decode_state_key(key);
    if (!parts.is_ok()) return Result<bool>(parts.status());
    return Result<bool>(visit(parts.value()));
  });
}

Status Store::scan_queue_configs(
    const std::function<bool(const std::string& queue, const QueueConfig&)>& visit) {
  return scan_queue_meta<QueueConfig>(kv_, kMetaQueuePrefix, decode_queue_config_key,
                                      decode_queue_config, visit);
}

Status Store::scan_ready_floors(
    const std::function<bool(const std::string& queue, const ReadyFloor&)>& visit) {
  return scan_queue_meta<ReadyFloor>(kv_, kMetaReadyFloorPrefix, decode_ready_floor_key,
                                     decode_ready_floor, visit);
}

Result<std::optional<std::string>> Store::get_meta(std::string_view name) {
  return kv_.get(Cf::kMeta, name);
}

Result<std::optional<uint64_t>> Store::get_ready_seq_reserved() {
  auto stored = kv_.get(Cf::kMeta, kMetaReadySeqKey);
  if (!stored.is_ok()) return stored.status();
  if (!stored.value()) return std::optional<uint64_t>{};
  if (stored.value()->size() != 8) {
    return Status::corruption("meta ready_seq_reserved: not 8 bytes");
  }
  return std::optional<uint64_t>{read_be64(*stored.value())};
}

}  // namespace tarde::storage
