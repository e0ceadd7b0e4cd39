#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "storage/kv.h"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
struct ReadOptions;
}  // namespace rocksdb

namespace tarde::storage {

// RocksKv is the durable Kv: one RocksDB database in a data directory, with
// one column family per Cf (named by cf_name()) besides "default". It is what
// the server and the tools open; whoever opens it owns it, and it holds the
// directory's lock until it is closed or destroyed. get(), scan() and write()
// may be called from different threads at the same time (RocksDB is
// thread-safe and RocksKv adds no mutable state); open() and close() may not
// overlap with anything. Every RocksDB error becomes io_error (corruption for
// RocksDB's Corruption) carrying RocksDB's message.
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
  };

  // Opens (or creates) the store in dir. Errors: busy when another process or
  // another RocksKv in this process holds dir's lock; io_error or corruption
  // for anything else RocksDB refuses (a missing dir without
  // create_if_missing, unknown column families, a damaged store).
  [[nodiscard]] static Result<std::unique_ptr<RocksKv>> open(const std::string& dir,
                                                             const Options& options);

  ~RocksKv() override;
  RocksKv(const RocksKv&) = delete;
  RocksKv& operator=(const RocksKv&) = delete;

  [[nodiscard]] Result<std::optional<std::string>> get(Cf cf, std::string_view key) override;
  // Reads one consistent snapshot taken when the scan starts.
  [[nodiscard]] Status scan(Cf cf, std::string_view lower, std::string_view upper,
                            const KvVisitor& visit) override;
  // One atomic RocksDB WriteBatch, fsynced when Options::sync is set.
  // invalid_argument on a read-only or secondary instance.
  [[nodiscard]] Status write(const KvBatch& batch) override;

  // A read-only view of the store as it is now, unaffected by later writes:
  // for a long read on another thread (the background invariant sweep) that
  // must see one consistent state. Its write() fails
  // with invalid_argument. Thread-safe like this RocksKv; it must be
  // destroyed before this RocksKv is closed.
  std::unique_ptr<Kv> snapshot();

  // Secondary only: replays what the primary has written since the last call
  // (TryCatchUpWithPrimary). invalid_argument on any other instance.
  [[nodiscard]] Status try_catch_up();

  // Destroys the column family handles, then closes the database and releases
  // the lock, returning RocksDB's verdict on the close. Further calls are
  // no-ops returning ok; any other call after close() is a programming error.
  [[nodiscard]] Status close();

  const std::string& dir() const { return dir_; }

 private:
  RocksKv(std::string dir, Options options) : dir_(std::move(dir)), options_(std::move(options)) {}

  friend class RocksSnapshotKv;

  rocksdb::ColumnFamilyHandle* handle(Cf cf) const;
  Result<std::optional<std::string>> get_with(const rocksdb::ReadOptions& base, Cf cf,
                                              std::string_view key);
  Status scan_with(const rocksdb::ReadOptions& base, Cf cf, std::string_view lower,
                   std::string_view upper, const KvVisitor& visit);

  std::string dir_;
  Options options_;
  rocksdb::DB* db_ = nullptr;
  // handles_[0] is "default"; handles_[1 + Cf] is that column family's.
  std::array<rocksdb::ColumnFamilyHandle*, kCfCount + 1> handles_{};
};

}  // namespace tarde::storage
