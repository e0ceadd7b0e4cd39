#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "storage/decoded_records.h"
#include "storage/keys.h"
#include "storage/kv.h"
#include "storage/records.h"

namespace tarde::storage {

// The on-disk format this build writes and reads (meta "format"). Version 2
// added the state index (column family `state`); version 3 lets a
// transaction record hold its first and newest audit events (TxRecord class
// version 2); version 4 writes transaction records and events in the
// compact layout (storage/compact_record.h), which a build of version 3
// cannot read; version 5 files no SENDING transaction with a request in
// `ready` in the state index (storage::filed_state), which a build of
// version 4 would report as missing keys. An older store is upgraded in
// place when it is opened for writing (Store::ensure_format).
inline constexpr uint32_t kFormatVersion = 5;
// What a store of format `version` holds in its state index: keys at all
// (version 2 and later), and keys of SENDING transactions with a request in
// `ready` (versions 2 to 4; storage::filed_state).
constexpr bool keeps_state_index(uint32_t version) { return version >= 2; }
constexpr bool files_sending_keys(uint32_t version) { return version >= 2 && version <= 4; }
// The oldest format this build upgrades.
inline constexpr uint32_t kFormatVersionOldest = 1;
// Transactions filed per write while a store of version 1 is upgraded: one
// batch of this many state keys (about 40 bytes each) stays well under a MB,
// and a crash loses at most one batch of work (the upgrade starts over).
inline constexpr size_t kUpgradeBatchTransactions = 10'000;

// What Store::ensure_format did to bring an older store to kFormatVersion.
struct FormatUpgrade {
  uint32_t from_version = 0;  // 0 when no upgrade ran
  uint64_t indexed = 0;       // transactions filed (as filed_state says) from version 1
  uint64_t unfiled = 0;       // SENDING keys taken out of the state index
};

// Told what an upgrade has done so far, after each of its writes, so that
// a long one can be seen to move.
using UpgradeProgress = std::function<void(const FormatUpgrade& so_far)>;

// Batch collects the typed changes of one transition (state, retry index,
// ready queue, audit event, dead letter) so that they commit as one atomic
// Kv write. It encodes records as they are added; it is cheap to move.
class Batch {
 public:
  Batch() = default;

  void put_tx(const TxRecord& record);
  void delete_tx(std::string_view tx_id);
  void put_due(const DueEntry& entry);
  void delete_due(int64_t fire_at_ms, std::string_view tx_id);
  void put_ready(const ReadyEntry& entry);
  void delete_ready(std::string_view queue, int64_t ready_at_ms, uint64_t seq);
  void put_event(std::string_view tx_id, uint64_t seq, const EventRecord& event);
  void delete_event(std::string_view tx_id, uint64_t seq);
  void put_dead(const DeadLetter& letter);
  void delete_dead(std::string_view queue, std::string_view tx_id);
  // The state index key of a transaction (queue, IndexedState, tx_id).
  void put_state(std::string_view queue, IndexedState state, std::string_view tx_id);
  void delete_state(std::string_view queue, IndexedState state, std::string_view tx_id);
  void put_queue_config(std::string_view queue, const QueueConfig& config);
  void put_meta(std::string_view name, std::string_view value);
  // Records that every ready seq ever written is below `reserved`.
  void put_ready_seq_reserved(uint64_t reserved);
  // Records that no ready entry of queue has a key below (ready_at_ms, seq).
  void put_ready_floor(std::string_view queue, const ReadyFloor& floor);

  const KvBatch& kv() const { return kv_; }
  KvBatch&& take_kv() && { return std::move(kv_); }
  bool empty() const { return kv_.empty(); }
  // See KvBatch::mark_replayed.
  void mark_replayed() { kv_.mark_replayed(); }

 private:
  friend class Store;
  explicit Batch(DecodedRecords* decoded) : decoded_(decoded) {}

  KvBatch kv_;
  // Given by Store::batch(): each record put_tx encodes is remembered there
  // with its bytes, so that the Store's next get_tx of it decodes nothing.
  DecodedRecords* decoded_ = nullptr;
};

// Store is the typed view of a Kv: records in, records out, scans in the
// order each question needs. It owns no data; the Kv it wraps must outlive it.
// Decoding failures come back as corruption errors naming the column family
// and key. Same threading rules as the Kv.
class Store {
 public:
  // What the meta "format" record says about a store, read without writing.
  enum class Format {
    kCurrent,    // a format this build reads
    kOlder,      // a format this build upgrades (ensure_format) before use
    kEmpty,      // no format record and no data: a new store
    kNewer,      // written by a newer build
    kNotTarde,   // data but no format record
    kBadRecord,  // a format record that does not decode, or version 0
  };
  struct FormatCheck {
    Format format = Format::kEmpty;
    std::string detail;  // one line for kNewer, kNotTarde and kBadRecord
  };

  // Whether get_tx remembers the records it decodes (DecodedRecords): worth
  // it for the engine, which reads a record again soon after reading it;
  // not for a pass that reads each record once (the background sweep).
  enum class ReadCache { kRemember, kNone };

  explicit Store(Kv& kv, ReadCache read_cache = ReadCache::kRemember)
      : kv_(kv), read_cache_(read_cache) {}

  // Reads the meta "format" record (and, without one, whether any column
  // family holds data). Errors are the Kv's read errors.
  [[nodiscard]] Result<FormatCheck> check_format();
  // What a format record read elsewhere (RocksKv::read_one) says: kCurrent,
  // kOlder, kNewer or kBadRecord.
  static FormatCheck format_of(std::string_view record);

  // Checks the meta "format" record. A store with no format record and no
  // transactions is new: the current version is written. A store of an older
  // version this build reads (kFormatVersionOldest and up) is upgraded in
  // place. Records of versions 2 to 4 are read as they are (they take the
  // compact layout at their next transition). From versions 2 to 4, the
  // state keys of SENDING transactions (IndexedState::kSending) are deleted,
  // in writes of kUpgradeBatchTransactions keys. From version 1, every
  // transaction is filed in the state index (as filed_state says), in writes
  // of kUpgradeBatchTransactions. Progress, when given, is called after each
  // of those writes with what was done so far. The new version is written last, so that a
  // crash part-way leaves a store of the old version that the next open
  // upgrades again (rewriting or deleting the same keys). `upgrade`, when
  // given, says what was done. Returns corruption for a store that holds data but no format
  // record (not a tarde store) or a record that does not decode, and
  // invalid_argument for a newer format than this build understands. The
  // upgrade writes through this Store's Kv: give it the durable one, not an
  // overlay that would hold every key in memory.
  [[nodiscard]] Status ensure_format(FormatUpgrade* upgrade = nullptr,
                                     const UpgradeProgress& progress = {});
  // Whether the store keeps the state index: its format record says version
  // 2 or later, or it has none yet (a new store). Tools that read a stopped
  // store of version 1 (never upgraded: it was not opened for writing) skip
  // the index then.
  [[nodiscard]] Result<bool> has_state_index();
  // Whether the store files SENDING transactions with a request in `ready`
  // under IndexedState::kSending: formats 2 to 4 did (a stopped store a
  // tool reads as it is); 5 does not (filed_state).
  [[nodiscard]] Result<bool> files_sending();
  // The version the store's format record says; kFormatVersion for a new
  // store, which has none yet. has_state_index and files_sending answer
  // from it (keeps_state_index, files_sending_keys).
  [[nodiscard]] Result<uint32_t> stored_format_version();

  [[nodiscard]] Result<std::optional<TxRecord>> get_tx(std::string_view tx_id);
  // A hint that get_tx is about to be called for these tx_ids (the next
  // requests of a backlog, the next fires of a burst): a Kv that caches
  // reads them in one batch (Kv::prefetch). Invalid ids are skipped.
  void prefetch_tx(const std::vector<std::string_view>& tx_ids);
  [[nodiscard]] Status write(const Batch& batch) { return kv_.write(batch.kv()); }
  // The same for a batch the caller is done with: its strings are moved, not
  // copied, into a Kv that keeps them (the server's StagedKv).
  [[nodiscard]] Status write(Batch&& batch) { return kv_.write(std::move(batch).take_kv()); }
  // A batch whose put_tx records are remembered in their decoded form
  // (DecodedRecords), so that reading one of them back decodes nothing. It
  // must not outlive this Store.
  Batch batch() { return Batch(&decoded_); }

  // Every transaction in tx_id order.
  [[nodiscard]] Status scan_tx(const std::function<bool(const TxRecord&)>& visit);
  // Due entries in (fire_at_ms, tx_id) order, strictly after `after` when it is
  // given, with fire_at_ms <= until_ms.
  [[nodiscard]] Status scan_due(const DueEntry* after, int64_t until_ms,
                                const std::function<bool(const DueEntry&)>& visit);
  // The ready entries of one queue in (ready_at_ms, seq) order; or of every
  // queue (queue order first) with scan_all_ready.
  [[nodiscard]] Status scan_ready(std::string_view queue,
                                  const std::function<bool(const ReadyEntry&)>& visit);
  [[nodiscard]] Status scan_all_ready(const std::function<bool(const ReadyEntry&)>& visit);
  // The ready entries of one queue strictly after (ready_at_ms, seq) in
  // hand-out order: how the engine pages a queue in.
  [[nodiscard]] Status scan_ready_after(std::string_view queue, int64_t ready_at_ms, uint64_t seq,
                                        const std::function<bool(const ReadyEntry&)>& visit);
  // The same from (ready_at_ms, seq) included: how the engine starts paging
  // a queue at its floor after a restart.
  [[nodiscard]] Status scan_ready_from(std::string_view queue, int64_t ready_at_ms, uint64_t seq,
                                       const std::function<bool(const ReadyEntry&)>& visit);
  // Every queue's ready floor (put_ready_floor), in queue order.
  [[nodiscard]] Status scan_ready_floors(
      const std::function<bool(const std::string& queue, const ReadyFloor&)>& visit);
  // The events of one transaction in `events`, oldest first, with their
  // sequence numbers: not those its record holds (see scan_history).
  [[nodiscard]] Status scan_events(
      std::string_view tx_id, const std::function<bool(uint64_t seq, const EventRecord&)>& visit);
  // Every stored event of a transaction, oldest first: the first event its
  // record holds, those in `events`, then the newest it holds.
  [[nodiscard]] Status scan_history(
      const TxRecord& record, const std::function<bool(uint64_t seq, const EventRecord&)>& visit);
  // Dead letters of one queue in tx_id order; or of every queue.
  [[nodiscard]] Status scan_dead(std::string_view queue,
                                 const std::function<bool(const DeadLetter&)>& visit);
  [[nodiscard]] Status scan_all_dead(const std::function<bool(const DeadLetter&)>& visit);
  [[nodiscard]] Result<std::optional<DeadLetter>> get_dead(std::string_view queue,
                                                           std::string_view tx_id);
  // The tx_ids a queue has in one state, in tx_id order: those that start
  // with `prefix` (every one when it is empty) and sort strictly after
  // `after` (from the first when it is empty). Costs a seek and one step per
  // key visited. invalid_argument for a bad queue name or state.
  [[nodiscard]] Status scan_state(std::string_view queue, IndexedState state,
                                  std::string_view prefix, std::string_view after,
                                  const std::function<bool(const std::string& tx_id)>& visit);
  // Every state index key, in key order (queue, state, tx_id).
  [[nodiscard]] Status scan_all_state(const std::function<bool(const StateKey&)>& visit);
  // Stored queue configurations, by queue name.
  [[nodiscard]] Status scan_queue_configs(
      const std::function<bool(const std::string& queue, const QueueConfig&)>& visit);
  [[nodiscard]] Result<std::optional<std::string>> get_meta(std::string_view name);
  // The ready seq high-water mark (put_ready_seq_reserved); nullopt in a
  // store written before it existed; corruption when it is not 8 bytes.
  [[nodiscard]] Result<std::optional<uint64_t>> get_ready_seq_reserved();

  Kv& kv() { return kv_; }

 private:
  [[nodiscard]] Status upgrade_from(uint32_t version, FormatUpgrade* upgrade,
                                    const UpgradeProgress& progress);
  [[nodiscard]] Status file_every_transaction(FormatUpgrade* done, const UpgradeProgress& progress);
  [[nodiscard]] Status unfile_sending(FormatUpgrade* done, const UpgradeProgress& progress);
  [[nodiscard]] Status scan_ready_range(std::string_view queue, const std::string& lower,
                                        const std::function<bool(const ReadyEntry&)>& visit);

  Kv& kv_;
  ReadCache read_cache_;
  DecodedRecords decoded_;
};

}  // namespace tarde::storage
