#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/kv.h"
#include "storage/write_profile.h"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
class Env;
class Snapshot;
struct ReadOptions;
}  // namespace rocksdb

namespace tarde::storage {

// RocksKv is the durable Kv: one RocksDB database in a data directory, with
// one column family per Cf (named by cf_name()) besides "default". It is what
// the server and the tools open; whoever opens it owns it, and it holds the
// directory's lock until it is closed or destroyed. get(), scan() and write()
// may be called from different threads at the same time (RocksDB is
// thread-safe; the only state RocksKv adds is the write-failure recovery
// below, guarded by db_mutex_); open() and close() may not overlap with
// anything. Every RocksDB error becomes io_error (corruption for RocksDB's
// Corruption) carrying RocksDB's message.
//
// A failed write (disk full, I/O error, file too large) puts RocksDB in a
// state where it refuses every later write. RocksKv gets out of it by itself:
// the next write() first calls DB::Resume(), and when RocksDB says the error
// is one it cannot resume from (a fatal WAL error such as EIO or EFBIG), it
// closes and reopens the database. Reads keep working meanwhile; if the
// reopen fails the database is reopened read-only so that they still do.
class RocksKv final : public Kv {
 public:
  struct Options {
    // Fsync the WAL on every write: an ok write survives a power loss. When
    // false an ok write survives a process kill but not a power loss.
    bool sync = true;
    bool create_if_missing = true;
    // Open without writing (a stopped server's data, for tools); write() fails.
    bool read_only = false;
    // Non-empty: open as a RocksDB secondary instance that follows a running
    // primary; this directory holds the secondary's own logs. write() fails.
    std::string secondary_path;
    // Tools only (read-only or secondary): replay a damaged WAL up to the
    // first damaged record instead of refusing to open, to show what can
    // still be read.
    bool salvage = false;
    // Read-only only: refuse even a WAL whose last record is cut short, to
    // find out whether the tolerant replay would drop one.
    bool strict_wal = false;
    // Tests only: the Env (and so the file system) RocksDB uses, e.g. one
    // that fails writes as a full disk would. Must outlive the RocksKv.
    rocksdb::Env* env_for_test = nullptr;
    // When set, RocksDB's warnings and errors go here, one line each, instead
    // of to the LOG file in dir. The server sets it: a LOG file that hits a
    // full disk or a file-size limit once makes RocksDB abort on its next
    // line (Debian builds RocksDB with assertions on). Called from RocksDB's
    // threads.
    std::function<void(const std::string& line)> log_sink;
    // Keep a WriteProfile of every write (write_profile()).
    bool profile_writes = false;
    // Writable opens only: RocksDB's flush and compaction threads run at
    // the lowest CPU priority (nice 19), so that on a busy machine they take
    // the CPU the serving threads leave instead of delaying a timer or a
    // reply by a scheduler slice. RocksDB's thread pools belong to the
    // process: the server sets it; a process that embeds tarde decides for
    // itself.
    bool background_yields = false;
  };

  // One column family found in a directory, and whether it holds any key.
  struct ColumnFamilyInfo {
    std::string name;
    bool has_keys = false;
  };

  // Opens (or creates) the store in dir. Errors: busy when another process or
  // another RocksKv in this process holds dir's lock; io_error or corruption
  // for anything else RocksDB refuses (a missing dir without
  // create_if_missing, unknown column families, a damaged store).
  [[nodiscard]] static Result<std::unique_ptr<RocksKv>> open(const std::string& dir,
                                                             const Options& options);

  // The column families of the RocksDB store in dir, each with whether it
  // holds a key, read without writing anything into dir (a read-only open
  // with RocksDB's info log discarded). For telling a tarde store from a
  // foreign RocksDB before opening it for writing.
  [[nodiscard]] static Result<std::vector<ColumnFamilyInfo>> read_column_families(
      const std::string& dir);
  // One key of one column family in dir, read without writing anything into
  // dir: a read-only open of that column family alone, so that the WAL
  // replay skips the other families' records and their table files stay
  // closed. For the format record the server checks before opening for
  // writing, which otherwise cost a second full replay of the WAL. With
  // strict_wal, a WAL whose last record is cut short is refused as well
  // (Options::strict_wal).
  [[nodiscard]] static Result<std::optional<std::string>> read_one(const std::string& dir, Cf cf,
                                                                   std::string_view key,
                                                                   bool strict_wal);
  // Whether another process holds dir's lock: a server runs on it, so its
  // files may be replaced or deleted while a reader opens them. Tests the
  // lock RocksDB takes on dir/LOCK without taking it; false when there is
  // no such file.
  static bool locked_by_another_process(const std::string& dir);
  // Only the names of the column families in dir, from its MANIFEST: cheap
  // (no WAL replay) and writes nothing.
  [[nodiscard]] static Result<std::vector<std::string>> list_column_families(
      const std::string& dir);

  ~RocksKv() override;
  RocksKv(const RocksKv&) = delete;
  RocksKv& operator=(const RocksKv&) = delete;

  [[nodiscard]] Result<std::optional<std::string>> get(Cf cf, std::string_view key) override;
  // One batched read (RocksDB's MultiGet): keys that share a table file's
  // filter, index and data blocks look them up once.
  [[nodiscard]] Result<std::vector<std::optional<std::string>>> multi_get(
      Cf cf, const std::vector<std::string>& keys) override;
  // Reads one consistent snapshot taken when the scan starts.
  [[nodiscard]] Status scan(Cf cf, std::string_view lower, std::string_view upper,
                            const KvVisitor& visit) override;
  // One atomic RocksDB WriteBatch, fsynced when Options::sync is set.
  // invalid_argument on a read-only or secondary instance.
  [[nodiscard]] Status write(const KvBatch& batch) override;
  using Kv::write;

  // A read-only view of the store as it is now, unaffected by later writes:
  // for a long read on another thread (the background invariant sweep) that
  // must see one consistent state. Its write() fails
  // with invalid_argument. Thread-safe like this RocksKv; it must be
  // destroyed before this RocksKv is closed.
  std::unique_ptr<Kv> snapshot();

  // Runs `use` on the open database while holding it open: a reopen after a
  // failed write waits until `use` returns. For storage/backups.cc, which
  // hands the rocksdb::DB itself to RocksDB's BackupEngine; nothing outside
  // storage/ can call it usefully (rocksdb::DB is only declared here). Any
  // thread. invalid_argument on a read-only or secondary instance, io_error
  // when the database could not be reopened after a fault; otherwise what
  // `use` returns.
  [[nodiscard]] Status with_db(const std::function<Status(rocksdb::DB& db)>& use);

  // Secondary only: replays what the primary has written since the last call
  // (TryCatchUpWithPrimary). invalid_argument on any other instance.
  [[nodiscard]] Status try_catch_up();

  // Destroys the column family handles, then closes the database and releases
  // the lock, returning RocksDB's verdict on the close. Further calls are
  // no-ops returning ok; any other call after close() is a programming error.
  [[nodiscard]] Status close();

  const std::string& dir() const { return dir_; }
  // Where the writes spent their time; null unless Options::profile_writes.
  const WriteProfile* write_profile() const { return profile_.get(); }

 private:
  RocksKv(std::string dir, Options options)
      : dir_(std::move(dir)),
        options_(std::move(options)),
        profile_(options_.profile_writes ? std::make_unique<WriteProfile>() : nullptr) {}

  friend class RocksSnapshotKv;

  rocksdb::ColumnFamilyHandle* handle(Cf cf) const;
  void release_snapshot(const rocksdb::Snapshot* snapshot, uint64_t generation);
  // Gets RocksDB to accept writes again after a failed one: Resume(), or a
  // reopen when RocksDB cannot resume. Requires: writes_failing_.
  Status recover_writes();
  Status reopen();
  Status close_locked();
  Result<std::optional<std::string>> get_with(const rocksdb::ReadOptions& base, Cf cf,
                                              std::string_view key, uint64_t generation = 0);
  Status scan_with(const rocksdb::ReadOptions& base, Cf cf, std::string_view lower,
                   std::string_view upper, const KvVisitor& visit, uint64_t generation = 0);

  std::string dir_;
  Options options_;
  std::unique_ptr<WriteProfile> profile_;
  // Shared by get, scan and write (RocksDB itself is thread-safe); held
  // exclusively only to close or reopen the database under them.
  mutable std::shared_mutex db_mutex_;
  rocksdb::DB* db_ = nullptr;
  // handles_[0] is "default"; handles_[1 + Cf] is that column family's.
  std::array<rocksdb::ColumnFamilyHandle*, kCfCount + 1> handles_{};
  // Set by a failed write; the next write recovers first.
  std::atomic<bool> writes_failing_{false};
  // The database is open read-only because a reopen for writing failed.
  std::atomic<bool> read_only_stand_in_{false};
  // Snapshots handed out by snapshot() and not yet released, and the
  // instance they belong to (reopen() starts a new generation).
  std::mutex snapshots_mutex_;
  std::set<const rocksdb::Snapshot*> live_snapshots_;
  uint64_t generation_ = 1;  // changed only under db_mutex_ held exclusively
  // RocksDB's sequence number after the last write reported ok: a reopen that
  // finds a higher one replayed a write that was reported failed.
  std::atomic<uint64_t> acknowledged_sequence_{0};
};

}  // namespace tarde::storage
