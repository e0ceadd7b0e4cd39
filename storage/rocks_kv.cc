#include "storage/rocks_kv.h"

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_buffer_manager.h>
#include <rocksdb/utilities/table_properties_collectors.h>
#include <rocksdb/write_batch.h>

#include <vector>

#include "storage/assert.h"

namespace tarde::storage {
namespace {

// `due` and `ready` are queue-shaped: entries are written at the tail (later
// times) and deleted at the head (as they fire or are handed out), so
// tombstones pile up exactly where every scan starts (RocksDB issues #5265,
// #10300). A table file is marked for compaction when any window of
// kDeletionWindowEntries consecutive entries holds kDeletionTriggerEntries
// deletions, or when deletions are kDeletionRatio of the whole file; the
// compaction then drops the tombstones. The numbers are moderate: a window
// big enough to ignore scattered deletes, a trigger of half the window.
constexpr size_t kDeletionWindowEntries = 10000;
constexpr size_t kDeletionTriggerEntries = 5000;
constexpr double kDeletionRatio = 0.5;
static_assert(kDeletionTriggerEntries <= kDeletionWindowEntries);

// RocksDB's own memory, bounded whatever the data size (docs/design.md
// "Memory"): at most about 56 MB once cache and memtables are full, which is
// what a burst of fires grows the server by. One LRU block cache for every column family holds data blocks
// and also the index and filter blocks, which otherwise stay in memory per
// table file and grow with the store (about 25 MB of index at ten million
// transactions). Memtables of all column families together are capped by
// one write buffer manager; each column family's memtable is switched at
// kWriteBufferBytes. The WAL is kept short so that a column family that is
// rarely written (meta, dead) cannot pin old WAL files on disk.
constexpr size_t kBlockCacheBytes = 24u << 20;
constexpr double kIndexCacheShare = 0.5;
constexpr size_t kMemtablesBytesTotal = 32u << 20;
constexpr size_t kWriteBufferBytes = 8u << 20;
constexpr uint64_t kMaxTotalWalBytes = 32u << 20;
// Info LOG files kept: one per start otherwise piles up to RocksDB's 1000.
constexpr size_t kInfoLogFilesKept = 4;
static_assert(kWriteBufferBytes * 2 <= kMemtablesBytesTotal);

// Shared by every open RocksKv of the process (a server opens one).
const std::shared_ptr<rocksdb::Cache>& block_cache() {
  // Half the cache is kept for index and filter blocks (high priority), so
  // that random data reads (a background sweep) cannot evict them: a get
  // whose index partition is gone re-reads it.
  static const std::shared_ptr<rocksdb::Cache> cache =
      rocksdb::NewLRUCache(kBlockCacheBytes, -1, false, kIndexCacheShare);
  return cache;
}

const std::shared_ptr<rocksdb::WriteBufferManager>& write_buffer_manager() {
  static const std::shared_ptr<rocksdb::WriteBufferManager> manager =
      std::make_shared<rocksdb::WriteBufferManager>(kMemtablesBytesTotal);
  return manager;
}

Status from_rocks(const rocksdb::Status& status, const std::string& what) {
  if (status.IsCorruption()) return Status::corruption(what + ": " + status.ToString());
  return Status::io_error(what + ": " + status.ToString());
}

// RocksDB reports a held lock as an IOError naming the LOCK file, both when
// another process holds it and when this process already opened the dir.
bool is_lock_error(const rocksdb::Status& status) {
  return status.IsIOError() && status.ToString().find("LOCK") != std::string::npos;
}

rocksdb::ColumnFamilyOptions cf_options(Cf cf) {
  rocksdb::ColumnFamilyOptions options;
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = block_cache();
  table.cache_index_and_filter_blocks = true;
  table.cache_index_and_filter_blocks_with_high_priority = true;
  table.pin_l0_filter_and_index_blocks_in_cache = true;
  // Partitioned index: a point read loads one 4 KB index partition, not a
  // table file's whole index (hundreds of KB in a big `tx` file).
  table.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
  table.metadata_block_size = 4096;
  table.pin_top_level_index_and_filter = true;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  options.write_buffer_size = kWriteBufferBytes;
  // events too: history trimming deletes each transaction's oldest event.
  if (cf == Cf::kDue || cf == Cf::kReady || cf == Cf::kEvents) {
    options.table_properties_collector_factories.emplace_back(
        rocksdb::NewCompactOnDeletionCollectorFactory(kDeletionWindowEntries,
                                                      kDeletionTriggerEntries, kDeletionRatio));
  }
  return options;
}

std::vector<rocksdb::ColumnFamilyDescriptor> descriptors() {
  std::vector<rocksdb::ColumnFamilyDescriptor> result;
  result.emplace_back(rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions());
  for (size_t i = 0; i < kCfCount; ++i) {
    const Cf cf = static_cast<Cf>(i);
    result.emplace_back(cf_name(cf), cf_options(cf));
  }
  return result;
}

rocksdb::Status open_db(const std::string& dir, const RocksKv::Options& options,
                        std::vector<rocksdb::ColumnFamilyHandle*>* handles, rocksdb::DB** db) {
  rocksdb::DBOptions db_options;
  db_options.write_buffer_manager = write_buffer_manager();
  db_options.max_total_wal_size = kMaxTotalWalBytes;
  db_options.keep_log_file_num = kInfoLogFilesKept;
  const bool writable = !options.read_only && options.secondary_path.empty();
  db_options.create_if_missing = writable && options.create_if_missing;
  db_options.create_missing_column_families = writable && options.create_if_missing;
  if (!options.secondary_path.empty()) {
    // A secondary must keep every table file open to follow the primary.
    db_options.max_open_files = -1;
    return rocksdb::DB::OpenAsSecondary(db_options, dir, options.secondary_path, descriptors(),
                                        handles, db);
  }
  if (options.read_only) {
    return rocksdb::DB::OpenForReadOnly(db_options, dir, descriptors(), handles, db);
  }
  return rocksdb::DB::Open(db_options, dir, descriptors(), handles, db);
}

std::string_view view(const rocksdb::Slice& slice) { return {slice.data(), slice.size()}; }

}  // namespace

// RocksKv::snapshot()'s view: reads at one RocksDB snapshot, released when
// the view goes.
class RocksSnapshotKv final : public Kv {
 public:
  explicit RocksSnapshotKv(RocksKv& owner) : owner_(owner), snapshot_(owner.db_->GetSnapshot()) {
    read_options_.snapshot = snapshot_;
    // The cache is filled as usual: with index blocks in the (bounded) cache,
    // uncached reads would re-read an index block for every point read.
  }
  ~RocksSnapshotKv() override { owner_.db_->ReleaseSnapshot(snapshot_); }
  RocksSnapshotKv(const RocksSnapshotKv&) = delete;
  RocksSnapshotKv& operator=(const RocksSnapshotKv&) = delete;

  Result<std::optional<std::string>> get(Cf cf, std::string_view key) override {
    return owner_.get_with(read_options_, cf, key);
  }
  Status scan(Cf cf, std::string_view lower, std::string_view upper,
              const KvVisitor& visit) override {
    return owner_.scan_with(read_options_, cf, lower, upper, visit);
  }
  Status write(const KvBatch&) override {
    return Status::invalid_argument("a snapshot of " + owner_.dir() + " is read-only");
  }

 private:
  RocksKv& owner_;
  const rocksdb::Snapshot* snapshot_;
  rocksdb::ReadOptions read_options_;
};

std::unique_ptr<Kv> RocksKv::snapshot() {
  TARDE_ASSERT(db_ != nullptr);
  return std::make_unique<RocksSnapshotKv>(*this);
}

Result<std::unique_ptr<RocksKv>> RocksKv::open(const std::string& dir, const Options& options) {
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  rocksdb::Status status = open_db(dir, options, &handles, &db);
  if (!status.ok()) {
    if (is_lock_error(status)) {
      return Status::busy("data directory " + dir +
                          " is locked: another process (or another open in this process) is "
                          "using it; RocksDB says: " +
                          status.ToString());
    }
    return from_rocks(status, "opening " + dir);
  }
  TARDE_ASSERT(db != nullptr);
  TARDE_ASSERT(handles.size() == kCfCount + 1);
  std::unique_ptr<RocksKv> kv(new RocksKv(dir, options));
  kv->db_ = db;
  for (size_t i = 0; i < handles.size(); ++i) kv->handles_[i] = handles[i];
  return kv;
}

RocksKv::~RocksKv() {
  // A destructor has no one to report to; callers who care call close().
  static_cast<void>(close());
}

Status RocksKv::close() {
  if (db_ == nullptr) return Status::ok();
  Status result;
  // Handles must go before the DB they belong to.
  for (rocksdb::ColumnFamilyHandle*& cf_handle : handles_) {
    if (cf_handle == nullptr) continue;
    rocksdb::Status status = db_->DestroyColumnFamilyHandle(cf_handle);
    cf_handle = nullptr;
    if (!status.ok() && result.is_ok()) result = from_rocks(status, "closing " + dir_);
  }
  rocksdb::Status status = db_->Close();
  if (!status.ok() && !status.IsNotSupported() && result.is_ok()) {
    result = from_rocks(status, "closing " + dir_);
  }
  delete db_;
  db_ = nullptr;
  return result;
}

rocksdb::ColumnFamilyHandle* RocksKv::handle(Cf cf) const {
  TARDE_ASSERT(db_ != nullptr);
  return handles_[1 + static_cast<size_t>(cf)];
}

Result<std::optional<std::string>> RocksKv::get(Cf cf, std::string_view key) {
  return get_with(rocksdb::ReadOptions(), cf, key);
}

Status RocksKv::scan(Cf cf, std::string_view lower, std::string_view upper,
                     const KvVisitor& visit) {
  return scan_with(rocksdb::ReadOptions(), cf, lower, upper, visit);
}

Result<std::optional<std::string>> RocksKv::get_with(const rocksdb::ReadOptions& base, Cf cf,
                                                     std::string_view key) {
  rocksdb::PinnableSlice value;
  rocksdb::Status status =
      db_->Get(base, handle(cf), rocksdb::Slice(key.data(), key.size()), &value);
  if (status.IsNotFound()) return std::optional<std::string>();
  if (!status.ok()) return from_rocks(status, std::string("get in ") + cf_name(cf));
  return std::optional<std::string>(value.ToString());
}

Status RocksKv::scan_with(const rocksdb::ReadOptions& base, Cf cf, std::string_view lower,
                          std::string_view upper, const KvVisitor& visit) {
  if (!lower.empty() && !upper.empty() && lower >= upper) return Status::ok();
  // The bound slices are declared before the iterator so that they outlive it.
  const rocksdb::Slice lower_slice(lower.data(), lower.size());
  const rocksdb::Slice upper_slice(upper.data(), upper.size());
  rocksdb::ReadOptions read_options = base;
  // The lower bound lets RocksDB skip the tombstones below it instead of
  // stepping over them (see the queue-shaped note above).
  if (!lower.empty()) read_options.iterate_lower_bound = &lower_slice;
  if (!upper.empty()) read_options.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read_options, handle(cf)));
  if (lower.empty()) {
    it->SeekToFirst();
  } else {
    it->Seek(lower_slice);
  }
  for (; it->Valid(); it->Next()) {
    if (!visit(view(it->key()), view(it->value()))) break;
  }
  rocksdb::Status status = it->status();
  if (!status.ok()) return from_rocks(status, std::string("scan of ") + cf_name(cf));
  return Status::ok();
}

Status RocksKv::write(const KvBatch& batch) {
  if (options_.read_only || !options_.secondary_path.empty()) {
    return Status::invalid_argument("store " + dir_ + " is open read-only");
  }
  rocksdb::WriteBatch write_batch;
  for (const KvOp& op : batch.ops()) {
    rocksdb::Status status = op.is_delete ? write_batch.Delete(handle(op.cf), op.key)
                                          : write_batch.Put(handle(op.cf), op.key, op.value);
    if (!status.ok()) return from_rocks(status, "building a write batch");
  }
  rocksdb::WriteOptions write_options;
  write_options.sync = options_.sync;
  rocksdb::Status status = db_->Write(write_options, &write_batch);
  if (!status.ok()) return from_rocks(status, "write to " + dir_);
  return Status::ok();
}

Status RocksKv::try_catch_up() {
  if (options_.secondary_path.empty()) {
    return Status::invalid_argument("try_catch_up: " + dir_ + " is not open as a secondary");
  }
  rocksdb::Status status = db_->TryCatchUpWithPrimary();
  if (!status.ok()) return from_rocks(status, "catching up with the primary of " + dir_);
  return Status::ok();
}

}  // namespace tarde::storage
