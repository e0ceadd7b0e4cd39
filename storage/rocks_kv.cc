#include "storage/rocks_kv.h"

#include <fcntl.h>
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <rocksdb/write_buffer_manager.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <vector>

#include "base/assert.h"
#include "storage/deletion_compaction.h"
#include "storage/memtable_rep.h"
#include "storage/wal_file_system.h"

namespace tarde::storage {
namespace {

// Every ENQUEUE first looks its tx_id up, and a new id is found nowhere: a
// bloom filter in each table file and in the memtable answers "absent"
// without a search. 10 bits per key gives about 1% false positives.
constexpr double kTxBloomBitsPerKey = 10;
// The memtable's bloom filter, as a share of the memtable's size.
constexpr double kTxMemtableBloomRatio = 0.02;

// Memtable insert hints. A skip-list insert normally searches from the top
// level; with a hint it starts from where the previous insert with the same
// key prefix went, and climbs only as far as it must, which is nearly free
// when keys arrive in order within the prefix. Without a hint RocksDB keeps
// one such position per memtable but searches from the top whenever a key
// misses it: inserts were 43 % of the server's user-space instructions in
// W1, about 54 key comparisons each (docs/benchmarks.md). `due` keys start
// with be64(fire_at_ms): the first 5 bytes change every 2^24 ms (4.7 hours),
// so retries due soon and retention purges due in days each follow their
// own hint. `ready` keys start with the queue name, 0, be64(ready_at_ms): 8
// bytes cover a short queue name and the slow-changing top of the time, so
// each queue's tail keeps its hint (queues whose names share 8 bytes share
// one, which only costs speed). `state` keys start with the queue name, 0
// and the state: 8 bytes give a short queue name a hint per state. `tx` and
// `events` keys start with the tx_id, and share one hint each: ids that
// grow (counters, timestamps) go in near the previous insert, random ones
// cost what they cost without a hint. Only RocksDB's built-in transforms
// are used, so the OPTIONS file stays readable by any tool.
constexpr size_t kDueHintPrefixBytes = 5;
constexpr size_t kReadyHintPrefixBytes = 8;
constexpr size_t kStateHintPrefixBytes = 8;
constexpr size_t kTxIdHintPrefixBytes = 0;

// Compression. The `tx` and `events` families hold nearly all the bytes of a
// big store, written once and read often: they use zstd at its fastest
// level with a 16 KB dictionary sampled from the first 1 MB of each file
// (tarde's records share most of their bytes with each other). That stores
// a million pending transactions in about half of what Snappy, RocksDB's
// default, takes (docs/benchmarks.md, W4). Their level 0 holds up to
// kLevel0FilesBeforeCompaction flushed files: in LZ4 those took 2.4 MB more
// of a million pending, and without the dictionary a flushed `tx` file took
// 33 bytes a record where compaction's took 23. Everything else, rewritten
// soon or small (`due`, `ready`, `state`), uses LZ4, cheaper to write. A
// RocksDB built without either keeps Snappy; each table file names its own
// compression, so any build reads any store.
constexpr int kZstdLevel = 1;
// `tx`'s data blocks are 16 KB, not RocksDB's 4 KB. zstd compresses each
// block on its own, so a larger block pays its per-block setup less often
// and finds more repeats: a flushed `tx` file took 12 % fewer instructions
// to build and came out 11 % smaller, and a settled store of a million
// pending 14 % smaller (docs/benchmarks.md). A point read from a table
// file decompresses 16 KB instead of 4; most reads of a record find it in
// memory (recent records), and a burst's reads ahead take neighbours from
// the same block.
constexpr size_t kTxBlockBytes = 16u << 10;
constexpr uint32_t kZstdDictionaryBytes = 16u << 10;
constexpr uint64_t kZstdDictionarySampleBytes = 1u << 20;

// RocksDB's own memory, bounded whatever the data size (docs/design.md
// "Memory"): at most about 36 MB once cache and memtables are full. One LRU
// block cache for every column family holds data blocks and also the index
// and filter blocks, which otherwise stay in memory per table file and grow
// with the store (about 25 MB of index at ten million transactions).
// Memtables of all column families together are capped by one write buffer
// manager; each column family's memtable is switched at kWriteBufferBytes.
// The WAL is kept short: a WAL file is deleted only once every column family
// with data in it has flushed, and `due` or `events` fill their memtables far
// slower than `tx`, so a long limit left up to 32 MB of WAL on disk (and to
// replay on start). The sizes were chosen with W4 of docs/benchmarks.md: with
// a million pending, half the memtables and a sixth less cache, with the
// allocator settings of net/server/main.cc, took RSS from 85 to about 60 MB, for
// about a tenth of W3's drain speed.
constexpr size_t kBlockCacheBytes = 20u << 20;
constexpr double kIndexCacheShare = 0.5;
constexpr size_t kMemtablesBytesTotal = 16u << 20;
constexpr size_t kWriteBufferBytes = 4u << 20;
constexpr uint64_t kMaxTotalWalBytes = 8u << 20;
// The level sizes follow the small memtables. RocksDB's defaults (a 256 MB
// level 1 made of 64 MB files) suit 64 MB memtables; with 4 MB ones, every
// compaction of four flushed files into level 1 rewrote all of a big `tx`
// level 1, and at eight million pending the load stalled at a fifth of its
// speed. A 64 MB level 1 of 8 MB files keeps each compaction to the files
// it overlaps and moves older data down a level.
constexpr uint64_t kLevel1Bytes = 64u << 20;
constexpr uint64_t kTableFileBytes = 8u << 20;
// `tx` and `state` take transaction ids in any order, so every flushed file
// spans the whole key range and a compaction of level 0 rewrites all of
// level 1. Flushed files are small (a 4 MB memtable compresses to about
// 200 KB of `tx`), and with RocksDB's default of 4 files per compaction a
// long W1 rewrote level 1 for every 800 KB flushed: in 60 s of W1 at 64
// connections compaction wrote 6 to 7 bytes of `tx` per byte flushed and
// took more CPU than the io thread. Waiting for 16 files cut that to 3 and
// the server's CPU per cycle by a third; 32 cut it to 2 and the CPU by
// another 7 %, once compact records (format 4) had made room on disk for
// it: a settled store of a million pending grew by 0.4 MB, to 28.9 MB
// (docs/benchmarks.md). Point reads pay a bloom filter probe per level-0
// file, pinned in the cache, and a restart loads them: a store killed with
// about 140 table files restarted as fast as one with the usual few dozen.
// Writes slow 8 files later and stop 20 later, as RocksDB's defaults do.
constexpr int kLevel0FilesBeforeCompaction = 32;
constexpr int kLevel0FilesSlowingWrites = 40;
constexpr int kLevel0FilesStoppingWrites = 52;
static_assert(kLevel0FilesBeforeCompaction < kLevel0FilesSlowingWrites);
static_assert(kLevel0FilesSlowingWrites < kLevel0FilesStoppingWrites);
// RocksDB reserves 4 MB of disk for the MANIFEST up front; tarde's grows by a
// few hundred bytes per flush or compaction.
constexpr size_t kManifestPreallocationBytes = 64u << 10;
// Info LOG files kept: one per start otherwise piles up to RocksDB's 1000.
constexpr size_t kInfoLogFilesKept = 4;
// Threads that open a store's table files on start. RocksDB starts 16; on
// the two cores tarde is sized for, two open the 40-odd files of a store
// of a million pending as fast, and a restart reached its first reply about
// 15 ms sooner for not starting and scheduling the other 14
// (docs/benchmarks.md).
constexpr int kFileOpeningThreads = 2;
// A rocksdb::WriteBatch is a 12-byte header (sequence, count), then per op
// a tag byte, the column family's id and the key's and value's lengths as
// varints (at most 5 bytes each), and the bytes.
constexpr size_t kWriteBatchHeaderBytes = 12;
constexpr size_t kWriteBatchOpBytesMax = 1 + 3 * 5;
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

void set_compression(Cf cf, rocksdb::ColumnFamilyOptions& options) {
  const std::vector<rocksdb::CompressionType> built_in = rocksdb::GetSupportedCompressions();
  auto has = [&built_in](rocksdb::CompressionType type) {
    return std::find(built_in.begin(), built_in.end(), type) != built_in.end();
  };
  if (has(rocksdb::kLZ4Compression)) options.compression = rocksdb::kLZ4Compression;
  const bool holds_the_bulk = cf == Cf::kTx || cf == Cf::kEvents;
  if (holds_the_bulk && has(rocksdb::kZSTD)) {
    // Every level, the bottom included (no bottommost options of its own).
    options.compression = rocksdb::kZSTD;
    options.compression_opts.level = kZstdLevel;
    options.compression_opts.max_dict_bytes = kZstdDictionaryBytes;
    options.compression_opts.max_dict_buffer_bytes = kZstdDictionarySampleBytes;
  }
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
  // Partitioned filters too: a whole-file bloom filter of a big `tx` file
  // (1.2 MB at a million keys) is larger than a shard of the block cache, so
  // it never stayed cached, and every point read re-read and re-parsed it
  // from the file (W3 with a million jobs drained at a fraction of its
  // speed). A partition is 4 KB, found through a pinned top level.
  table.partition_filters = true;
  table.pin_top_level_index_and_filter = true;
  if (cf == Cf::kTx) {
    table.block_size = kTxBlockBytes;
    table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(kTxBloomBitsPerKey));
    options.memtable_whole_key_filtering = true;
    options.memtable_prefix_bloom_size_ratio = kTxMemtableBloomRatio;
  }
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  options.memtable_factory = skip_list_memtable_factory();
  options.write_buffer_size = kWriteBufferBytes;
  options.max_bytes_for_level_base = kLevel1Bytes;
  options.target_file_size_base = kTableFileBytes;
  set_compression(cf, options);
  if (cf == Cf::kDue) {
    options.memtable_insert_with_hint_prefix_extractor.reset(
        rocksdb::NewCappedPrefixTransform(kDueHintPrefixBytes));
  }
  if (cf == Cf::kReady) {
    options.memtable_insert_with_hint_prefix_extractor.reset(
        rocksdb::NewCappedPrefixTransform(kReadyHintPrefixBytes));
  }
  if (cf == Cf::kState) {
    options.memtable_insert_with_hint_prefix_extractor.reset(
        rocksdb::NewCappedPrefixTransform(kStateHintPrefixBytes));
  }
  if (cf == Cf::kTx || cf == Cf::kEvents) {
    options.memtable_insert_with_hint_prefix_extractor.reset(
        rocksdb::NewCappedPrefixTransform(kTxIdHintPrefixBytes));
  }
  // `due` and `ready` are queue-shaped: entries are written at the tail
  // (later times) and deleted at the head as they fire or are handed out.
  // `events`: history trimming deletes each transaction's oldest event.
  // `state`: every transition moves a key, and a listing walks the range its
  // deletions leave behind (a queue's SENDING range churns the most).
  if (cf == Cf::kDue || cf == Cf::kReady || cf == Cf::kEvents) {
    options.table_properties_collector_factories.push_back(
        compact_on_deletion(DeletionWatch::kEveryFile));
  }
  if (cf == Cf::kState) {
    options.table_properties_collector_factories.push_back(
        compact_on_deletion(DeletionWatch::kBelowLevel0));
  }
  if (cf == Cf::kTx || cf == Cf::kState) {
    options.level0_file_num_compaction_trigger = kLevel0FilesBeforeCompaction;
    options.level0_slowdown_writes_trigger = kLevel0FilesSlowingWrites;
    options.level0_stop_writes_trigger = kLevel0FilesStoppingWrites;
  }
  return options;
}

// The descriptors of "default" and of each column family in `present`, and
// for each descriptor its slot in RocksKv's handle array (0 is "default").
struct Descriptors {
  std::vector<rocksdb::ColumnFamilyDescriptor> list;
  std::vector<size_t> slots;
};

Descriptors descriptors(const std::array<bool, kCfCount>& present) {
  Descriptors result;
  result.list.emplace_back(rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions());
  result.slots.push_back(0);
  for (size_t i = 0; i < kCfCount; ++i) {
    if (!present[i]) continue;
    const Cf cf = static_cast<Cf>(i);
    result.list.emplace_back(cf_name(cf), cf_options(cf));
    result.slots.push_back(1 + i);
  }
  return result;
}

// RocksDB's info log for opens that must not write into the directory: a
// read-only open otherwise creates (and rotates) the LOG file there.
class DiscardingLogger final : public rocksdb::Logger {
 public:
  using rocksdb::Logger::Logv;
  void Logv(const char*, va_list) override {}
};

// Options for a look into a directory that must write nothing there: the
// info log (which a read-only open would otherwise create) discarded.
rocksdb::DBOptions look_options(rocksdb::WALRecoveryMode wal_recovery_mode) {
  rocksdb::DBOptions db_options;
  db_options.info_log = std::make_shared<DiscardingLogger>();
  db_options.wal_recovery_mode = wal_recovery_mode;
  // A tolerant look reads the WAL as serving will (wal_file_system.h); a
  // strict one as RocksDB does, to see a tail that serving would drop.
  if (wal_recovery_mode == rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords) {
    db_options.env = tarde_env();
  }
  return db_options;
}

// Closes a look's read-only open: its column family handles, then the
// database.
void close_look(rocksdb::DB* db, const std::vector<rocksdb::ColumnFamilyHandle*>& handles) {
  for (rocksdb::ColumnFamilyHandle* handle : handles) {
    static_cast<void>(db->DestroyColumnFamilyHandle(handle));
  }
  delete db;
}

// RocksDB's warnings and errors, one line each, to RocksKv::Options::log_sink.
class ForwardingLogger final : public rocksdb::Logger {
 public:
  explicit ForwardingLogger(std::function<void(const std::string&)> sink)
      : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL), sink_(std::move(sink)) {}
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    char line[1024];
    const int n = std::vsnprintf(line, sizeof line, format, ap);
    if (n > 0) sink_(std::string(line, std::min<size_t>(static_cast<size_t>(n), sizeof line - 1)));
  }

 private:
  std::function<void(const std::string&)> sink_;
};

// Which of tarde's column families an open names. A writable open names
// every one (creating those missing: the `state` family of a store of format
// version 1). An open that must not write names only those the directory
// has, so that a stopped store of version 1 can still be read; the `state`
// handle then stays null and reads of it find nothing.
rocksdb::Status families_to_open(const std::string& dir, bool writable,
                                 std::array<bool, kCfCount>* present) {
  present->fill(true);
  if (writable) return rocksdb::Status::OK();
  std::vector<std::string> names;
  rocksdb::Status status = rocksdb::DB::ListColumnFamilies(
      look_options(rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords), dir, &names);
  if (!status.ok()) return status;
  const bool has_state = std::find(names.begin(), names.end(), cf_name(Cf::kState)) != names.end();
  (*present)[static_cast<size_t>(Cf::kState)] = has_state;
  return rocksdb::Status::OK();
}

rocksdb::Status open_db_with(const std::string& dir, const RocksKv::Options& options,
                             const std::vector<rocksdb::ColumnFamilyDescriptor>& wanted,
                             std::vector<rocksdb::ColumnFamilyHandle*>* handles, rocksdb::DB** db) {
  rocksdb::DBOptions db_options;
  db_options.write_buffer_manager = write_buffer_manager();
  db_options.max_total_wal_size = kMaxTotalWalBytes;
  db_options.manifest_preallocation_size = kManifestPreallocationBytes;
  db_options.keep_log_file_num = kInfoLogFilesKept;
  db_options.max_file_opening_threads = kFileOpeningThreads;
  // tarde writes one group at a time: a write group has one batch, so
  // memtable inserts need no atomics, and nobody waits in the write queue
  // long enough to be worth spinning for on two cores.
  db_options.allow_concurrent_memtable_write = false;
  db_options.enable_write_thread_adaptive_yield = false;
  const bool writable = !options.read_only && options.secondary_path.empty();
  // A record cut short at the end of the WAL is a write that was never
  // acknowledged (it would have been fsynced first): replay stops before it.
  // A damaged record anywhere else is refused, since acknowledged writes
  // follow it; docs/design.md, "Damaged data directories", says why.
  db_options.wal_recovery_mode = rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  if (options.salvage && !writable) {
    db_options.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  }
  if (options.strict_wal && options.read_only) {
    db_options.wal_recovery_mode = rocksdb::WALRecoveryMode::kAbsoluteConsistency;
  }
  if (db_options.wal_recovery_mode == rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords) {
    // A WAL's size is set ahead of its data, and a replay stops at the end
    // of its last intact record: wal_file_system.h. A secondary reads a live primary's WAL the same
    // way, as it was when the secondary first read it.
    db_options.allow_fallocate = true;
    db_options.env = tarde_env();
  }
  if (options.log_sink) db_options.info_log = std::make_shared<ForwardingLogger>(options.log_sink);
  if (options.read_only) db_options.info_log = std::make_shared<DiscardingLogger>();
  if (options.env_for_test != nullptr) db_options.env = options.env_for_test;
  if (writable && options.background_yields) {
    // Takes effect in each pool thread before its next job. A tuning: an
    // Env that cannot do it leaves the threads as they are.
    for (const auto pool : {rocksdb::Env::Priority::HIGH, rocksdb::Env::Priority::LOW}) {
      db_options.env->LowerThreadPoolCPUPriority(pool, rocksdb::CpuPriority::kLow)
          .PermitUncheckedError();
    }
  }
  db_options.create_if_missing = writable && options.create_if_missing;
  db_options.create_missing_column_families = writable;
  if (!options.secondary_path.empty()) {
    // A secondary must keep every table file open to follow the primary.
    db_options.max_open_files = -1;
    return rocksdb::DB::OpenAsSecondary(db_options, dir, options.secondary_path, wanted, handles,
                                        db);
  }
  if (options.read_only) return rocksdb::DB::OpenForReadOnly(db_options, dir, wanted, handles, db);
  return rocksdb::DB::Open(db_options, dir, wanted, handles, db);
}

// Opens dir with the column families families_to_open picks and puts each
// handle in its slot of *slots (null for a family not opened).
rocksdb::Status open_db(const std::string& dir, const RocksKv::Options& options,
                        std::array<rocksdb::ColumnFamilyHandle*, kCfCount + 1>* slots,
                        rocksdb::DB** db) {
  const bool writable = !options.read_only && options.secondary_path.empty();
  std::array<bool, kCfCount> present{};
  // A missing directory: let the open report it as it always has.
  if (!families_to_open(dir, writable, &present).ok()) present.fill(true);
  const Descriptors wanted = descriptors(present);
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::Status status = open_db_with(dir, options, wanted.list, &handles, db);
  if (!status.ok()) return status;
  TARDE_ASSERT(handles.size() == wanted.slots.size());
  slots->fill(nullptr);
  for (size_t i = 0; i < handles.size(); ++i) (*slots)[wanted.slots[i]] = handles[i];
  return status;
}

std::string_view view(const rocksdb::Slice& slice) { return {slice.data(), slice.size()}; }

// RocksDB counts, per thread, every key comparison and block read into its
// perf context unless told not to; tarde never reads those counters, and in
// the memtable insert of a commit the counting costs about as much as the
// comparing. The level is per thread, so every entry point sets it.
void no_perf_counters() { rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable); }

// A snapshot taken before a reopen (after a storage fault) belongs to the
// closed instance; its reader must start over.
Status snapshot_lost(const std::string& dir) {
  return Status::io_error("store " + dir + " was reopened after a fault; the snapshot is gone");
}

}  // namespace

Result<std::vector<std::string>> RocksKv::list_column_families(const std::string& dir) {
  const rocksdb::DBOptions db_options =
      look_options(rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords);
  std::vector<std::string> names;
  rocksdb::Status status = rocksdb::DB::ListColumnFamilies(db_options, dir, &names);
  if (!status.ok()) return from_rocks(status, "listing the column families of " + dir);
  return names;
}

bool RocksKv::locked_by_another_process(const std::string& dir) {
  const int fd = ::open((dir + "/LOCK").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // RocksDB locks the whole file for writing with fcntl (its PosixEnv):
  // F_GETLK says whether such a lock would conflict, without taking one.
  struct flock probe {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  const bool locked = ::fcntl(fd, F_GETLK, &probe) == 0 && probe.l_type != F_UNLCK;
  ::close(fd);
  return locked;
}

Result<std::vector<RocksKv::ColumnFamilyInfo>> RocksKv::read_column_families(
    const std::string& dir) {
  const rocksdb::DBOptions db_options =
      look_options(rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords);
  std::vector<std::string> names;
  rocksdb::Status status = rocksdb::DB::ListColumnFamilies(db_options, dir, &names);
  if (!status.ok()) return from_rocks(status, "listing the column families of " + dir);
  std::vector<rocksdb::ColumnFamilyDescriptor> wanted;
  for (const std::string& name : names) wanted.emplace_back(name, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  status = rocksdb::DB::OpenForReadOnly(db_options, dir, wanted, &handles, &db);
  if (!status.ok()) return from_rocks(status, "opening " + dir + " read-only");
  std::vector<ColumnFamilyInfo> result;
  for (size_t i = 0; i < handles.size(); ++i) {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), handles[i]));
    it->SeekToFirst();
    result.push_back(ColumnFamilyInfo{names[i], it->Valid()});
    if (!it->status().ok() && status.ok()) status = it->status();
  }
  close_look(db, handles);
  if (!status.ok()) return from_rocks(status, "reading " + dir);
  return result;
}

Result<std::optional<std::string>> RocksKv::read_one(const std::string& dir, Cf cf,
                                                     std::string_view key, bool strict_wal) {
  no_perf_counters();
  const rocksdb::DBOptions db_options =
      look_options(strict_wal ? rocksdb::WALRecoveryMode::kAbsoluteConsistency
                              : rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords);
  // A read-only open may name a subset of the column families; RocksDB
  // still reads (and checksums) every WAL record, but only applies those of
  // the families named.
  std::vector<rocksdb::ColumnFamilyDescriptor> wanted;
  wanted.emplace_back(rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions());
  wanted.emplace_back(cf_name(cf), cf_options(cf));
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  rocksdb::Status status = rocksdb::DB::OpenForReadOnly(db_options, dir, wanted, &handles, &db);
  if (!status.ok()) return from_rocks(status, "opening " + dir + " read-only");
  std::string value;
  status =
      db->Get(rocksdb::ReadOptions(), handles[1], rocksdb::Slice(key.data(), key.size()), &value);
  close_look(db, handles);
  if (status.IsNotFound()) return std::optional<std::string>();
  if (!status.ok()) return from_rocks(status, "reading " + dir);
  return std::optional<std::string>(std::move(value));
}

// RocksKv::snapshot()'s view: reads at one RocksDB snapshot, released when
// the view goes.
class RocksSnapshotKv final : public Kv {
 public:
  // Requires: the owner's db_mutex_ held (shared) by the caller.
  RocksSnapshotKv(RocksKv& owner, const rocksdb::Snapshot* snapshot, uint64_t generation)
      : owner_(owner), snapshot_(snapshot), generation_(generation) {
    read_options_.snapshot = snapshot_;
    // The cache is filled as usual: with index blocks in the (bounded) cache,
    // uncached reads would re-read an index block for every point read.
  }
  ~RocksSnapshotKv() override { owner_.release_snapshot(snapshot_, generation_); }
  RocksSnapshotKv(const RocksSnapshotKv&) = delete;
  RocksSnapshotKv& operator=(const RocksSnapshotKv&) = delete;

  Result<std::optional<std::string>> get(Cf cf, std::string_view key) override {
    return owner_.get_with(read_options_, cf, key, generation_);
  }
  Status scan(Cf cf, std::string_view lower, std::string_view upper,
              const KvVisitor& visit) override {
    return owner_.scan_with(read_options_, cf, lower, upper, visit, generation_);
  }
  Status write(const KvBatch&) override {
    return Status::invalid_argument("a snapshot of " + owner_.dir() + " is read-only");
  }

 private:
  RocksKv& owner_;
  const rocksdb::Snapshot* snapshot_;
  uint64_t generation_;  // of the RocksDB instance the snapshot belongs to
  rocksdb::ReadOptions read_options_;
};

std::unique_ptr<Kv> RocksKv::snapshot() {
  std::shared_lock<std::shared_mutex> lock(db_mutex_);
  TARDE_ASSERT(db_ != nullptr);
  const rocksdb::Snapshot* taken = db_->GetSnapshot();
  {
    std::lock_guard<std::mutex> guard(snapshots_mutex_);
    live_snapshots_.insert(taken);
  }
  return std::make_unique<RocksSnapshotKv>(*this, taken, generation_);
}

void RocksKv::release_snapshot(const rocksdb::Snapshot* snapshot, uint64_t generation) {
  std::shared_lock<std::shared_mutex> lock(db_mutex_);
  std::lock_guard<std::mutex> guard(snapshots_mutex_);
  // A reopen already released every snapshot of the instance it closed.
  if (generation != generation_ || live_snapshots_.erase(snapshot) == 0) return;
  db_->ReleaseSnapshot(snapshot);
}

Result<std::unique_ptr<RocksKv>> RocksKv::open(const std::string& dir, const Options& options) {
  std::array<rocksdb::ColumnFamilyHandle*, kCfCount + 1> handles{};
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
  std::unique_ptr<RocksKv> kv(new RocksKv(dir, options));
  kv->db_ = db;
  kv->handles_ = handles;
  kv->acknowledged_sequence_ = db->GetLatestSequenceNumber();
  return kv;
}

RocksKv::~RocksKv() {
  // A destructor has no one to report to; callers who care call close().
  static_cast<void>(close());
}

Status RocksKv::close() {
  std::unique_lock<std::shared_mutex> lock(db_mutex_);
  return close_locked();
}

Status RocksKv::close_locked() {
  if (db_ == nullptr) return Status::ok();
  {
    // RocksDB refuses to close with snapshots alive; their readers see the
    // new generation and stop (snapshot_lost).
    std::lock_guard<std::mutex> guard(snapshots_mutex_);
    for (const rocksdb::Snapshot* live : live_snapshots_) db_->ReleaseSnapshot(live);
    live_snapshots_.clear();
    generation_ += 1;
  }
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

Result<std::vector<std::optional<std::string>>> RocksKv::multi_get(
    Cf cf, const std::vector<std::string>& keys) {
  no_perf_counters();
  std::shared_lock<std::shared_mutex> lock(db_mutex_);
  if (db_ == nullptr) return Status::io_error("store " + dir_ + " could not be reopened");
  std::vector<std::optional<std::string>> values(keys.size());
  if (handle(cf) == nullptr || keys.empty()) return values;  // see families_to_open
  // RocksDB's batched read wants its keys in order.
  std::vector<size_t> order(keys.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  std::vector<rocksdb::Slice> slices;
  slices.reserve(keys.size());
  for (size_t i : order) slices.emplace_back(keys[i].data(), keys[i].size());
  std::vector<rocksdb::PinnableSlice> found(keys.size());
  std::vector<rocksdb::Status> statuses(keys.size());
  db_->MultiGet(rocksdb::ReadOptions(), handle(cf), slices.size(), slices.data(), found.data(),
                statuses.data(), /*sorted_input=*/true);
  for (size_t n = 0; n < order.size(); ++n) {
    if (statuses[n].IsNotFound()) continue;
    if (!statuses[n].ok()) return from_rocks(statuses[n], std::string("get in ") + cf_name(cf));
    values[order[n]] = found[n].ToString();
  }
  return values;
}

Status RocksKv::scan(Cf cf, std::string_view lower, std::string_view upper,
                     const KvVisitor& visit) {
  return scan_with(rocksdb::ReadOptions(), cf, lower, upper, visit);
}

Result<std::optional<std::string>> RocksKv::get_with(const rocksdb::ReadOptions& base, Cf cf,
                                                     std::string_view key, uint64_t generation) {
  no_perf_counters();
  std::shared_lock<std::shared_mutex> lock(db_mutex_);
  if (db_ == nullptr) return Status::io_error("store " + dir_ + " could not be reopened");
  if (generation != 0 && generation != generation_) return snapshot_lost(dir_);
  if (handle(cf) == nullptr) return std::optional<std::string>();  // see families_to_open
  rocksdb::PinnableSlice value;
  rocksdb::Status status =
      db_->Get(base, handle(cf), rocksdb::Slice(key.data(), key.size()), &value);
  if (status.IsNotFound()) return std::optional<std::string>();
  if (!status.ok()) return from_rocks(status, std::string("get in ") + cf_name(cf));
  return std::optional<std::string>(value.ToString());
}

Status RocksKv::scan_with(const rocksdb::ReadOptions& base, Cf cf, std::string_view lower,
                          std::string_view upper, const KvVisitor& visit, uint64_t generation) {
  if (!lower.empty() && !upper.empty() && lower >= upper) return Status::ok();
  no_perf_counters();
  std::shared_lock<std::shared_mutex> lock(db_mutex_);
  if (db_ == nullptr) return Status::io_error("store " + dir_ + " could not be reopened");
  if (generation != 0 && generation != generation_) return snapshot_lost(dir_);
  if (handle(cf) == nullptr) return Status::ok();  // see families_to_open
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
  no_perf_counters();
  if (writes_failing_) TARDE_RETURN_IF_ERROR(recover_writes());
  std::shared_lock<std::shared_mutex> lock(db_mutex_);
  if (db_ == nullptr) return Status::io_error("store " + dir_ + " could not be reopened");
  // Room for every op at once: a group of 64 commands is about 35 KB, which
  // a batch growing from empty copies about twice over.
  size_t bytes = kWriteBatchHeaderBytes;
  for (const KvOp& op : batch.ops())
    bytes += kWriteBatchOpBytesMax + op.key.size() + op.value.size();
  rocksdb::WriteBatch write_batch(bytes);
  for (const KvOp& op : batch.ops()) {
    TARDE_ASSERT(handle(op.cf) != nullptr);  // every family is open for writing
    rocksdb::Status status = op.is_delete ? write_batch.Delete(handle(op.cf), op.key)
                                          : write_batch.Put(handle(op.cf), op.key, op.value);
    if (!status.ok()) return from_rocks(status, "building a write batch");
  }
  rocksdb::WriteOptions write_options;
  write_options.sync = options_.sync;
  std::optional<WriteProfile::Measure> measure;
  if (profile_) measure.emplace();
  rocksdb::Status status = db_->Write(write_options, &write_batch);
  if (measure) measure->finish(*profile_, batch.ops().size(), write_batch.GetDataSize());
  if (!status.ok()) {
    writes_failing_ = true;
    return from_rocks(status, "write to " + dir_);
  }
  writes_failing_ = false;
  acknowledged_sequence_ = db_->GetLatestSequenceNumber();
  return Status::ok();
}

Status RocksKv::recover_writes() {
  rocksdb::Status resumed;
  bool must_reopen = false;
  {
    std::shared_lock<std::shared_mutex> lock(db_mutex_);
    // A read-only stand-in from a failed reopen cannot resume: reopen again.
    must_reopen = db_ == nullptr || read_only_stand_in_;
    if (!must_reopen) resumed = db_->Resume();  // ok at once when RocksDB is not stopped
  }
  if (must_reopen) return reopen();  // outside the shared lock: reopen takes it exclusively
  // Busy: RocksDB is recovering by itself (it does for a full disk, polling
  // until space is back); the write tells whether it is done.
  if (resumed.ok() || resumed.IsBusy()) return Status::ok();
  // RocksDB will not resume from this error (a failed WAL append or sync
  // other than ENOSPC is fatal to it): start over from what is on disk.
  return reopen();
}

Status RocksKv::reopen() {
  std::unique_lock<std::shared_mutex> lock(db_mutex_);
  static_cast<void>(close_locked());  // a stopped RocksDB reports its error again
  std::array<rocksdb::ColumnFamilyHandle*, kCfCount + 1> handles{};
  rocksdb::DB* db = nullptr;
  rocksdb::Status status = open_db(dir_, options_, &handles, &db);
  bool writable = status.ok();
  if (!status.ok()) {
    // Keep serving reads: the data is whole, only writing fails.
    Options read_only = options_;
    read_only.read_only = true;
    rocksdb::Status reread = open_db(dir_, read_only, &handles, &db);
    if (!reread.ok()) return from_rocks(reread, "reopening " + dir_ + " read-only");
  }
  db_ = db;
  handles_ = handles;
  read_only_stand_in_ = !writable;
  if (!writable) return from_rocks(status, "reopening " + dir_ + " after a failed write");
  writes_failing_ = false;
  const uint64_t sequence = db_->GetLatestSequenceNumber();
  if (sequence > acknowledged_sequence_) {
    // The failed write had reached the WAL after all (its fsync failed) and
    // the reopen replayed it: the caller's failure path must reload its
    // state from the disk before anything else is written.
    acknowledged_sequence_ = sequence;
    return Status::io_error("reopened " + dir_ +
                            ": it holds a write that was reported failed; reload from disk");
  }
  return Status::ok();
}

Status RocksKv::with_db(const std::function<Status(rocksdb::DB& db)>& use) {
  if (options_.read_only || !options_.secondary_path.empty()) {
    return Status::invalid_argument("store " + dir_ + " is open read-only");
  }
  std::shared_lock<std::shared_mutex> lock(db_mutex_);
  if (db_ == nullptr || read_only_stand_in_) {
    return Status::io_error("store " + dir_ + " is not open for writing after a storage fault");
  }
  return use(*db_);
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
