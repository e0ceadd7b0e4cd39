#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "storage/rocks_kv.h"

namespace rocksdb {
class BackupEngine;
}  // namespace rocksdb

namespace tarde::storage {

// Online backups of a store, kept in a backup directory in RocksDB's
// BackupEngine layout (storage/FORMAT.md, "Backups"): numbered backups 1, 2,
// ..., each complete on its own, sharing the table files they have in common,
// so that a backup copies only what changed since the one before. RocksDB
// stays in here: the server, the embedded engine and tarde-dump see only the
// figures below.

// What create() made.
struct BackupReport {
  uint32_t id = 0;
  uint64_t size_bytes = 0;  // every file of the backup, shared ones included
  uint32_t files = 0;
  int64_t took_ms = 0;  // flush, copy and verification
};

// One backup of a backup directory, as list_backups() finds it.
struct BackupEntry {
  uint32_t id = 0;
  int64_t created_at_s = 0;  // seconds since the epoch: RocksDB keeps no finer time
  uint64_t size_bytes = 0;
  uint32_t files = 0;
  bool verified = false;  // its files were read and their checksums matched
  std::string problem;    // why it is unusable; empty when it is not known to be
};

// What restore_backup() did.
struct RestoreReport {
  uint32_t id = 0;
  uint64_t size_bytes = 0;
  uint32_t files = 0;
  int64_t took_ms = 0;
};

// BackupMaker makes backups of one open store into one backup directory.
// Owned by whoever runs backups (the server's backup worker); create() blocks
// for as long as a backup takes, so it is called on a thread that may wait;
// stop() may be called from any other thread. One create() at a time.
class BackupMaker {
 public:
  struct Options {
    std::string backup_dir;  // created (with its parents) on the first backup
    // Bytes per second the copy may read and write; 0: as fast as it goes.
    uint64_t rate_limit_bytes_per_s = 0;
  };

  explicit BackupMaker(Options options) : options_(std::move(options)) {}
  BackupMaker(const BackupMaker&) = delete;
  BackupMaker& operator=(const BackupMaker&) = delete;

  // Makes the next backup of `kv`: flushes its memtables, copies the files
  // the backup directory does not have yet (and the WAL written since the
  // flush), then reads the new backup back and compares every file's
  // checksum. Every write that kv.write() acknowledged before the call is in
  // the backup. Errors: invalid_argument when kv is not open for writing;
  // io_error when the directory cannot be created or written, or RocksDB
  // fails; corruption when the verification fails (the new backup is deleted
  // again); shutting_down when stop() was called (nothing new is listed; the
  // files of the abandoned attempt are removed by the next create()).
  [[nodiscard]] Result<BackupReport> create(RocksKv& kv);

  // Makes a create() under way, and every later one, return shutting_down as
  // soon as RocksDB notices (between two files, or two chunks of one). Any
  // thread.
  void stop();

 private:
  Options options_;
  std::mutex mutex_;
  rocksdb::BackupEngine* running_ = nullptr;  // guarded by mutex_; owned by create()
  bool stopped_ = false;                      // guarded by mutex_
};

// The backups in backup_dir, oldest first, read without writing anything
// there. With `verify`, every file of each is read and its checksum
// compared (entry.verified, or entry.problem). A backup whose description
// RocksDB cannot read is listed with its id and problem only. Errors:
// not_found when backup_dir does not exist; io_error when it cannot be read.
[[nodiscard]] Result<std::vector<BackupEntry>> list_backups(const std::string& backup_dir,
                                                            bool verify);

// Reads every file of backup `id` and compares sizes and checksums. Errors:
// not_found for a missing directory or an unknown id; corruption when a file
// is missing, has another size or another checksum.
[[nodiscard]] Status verify_backup(const std::string& backup_dir, uint32_t id);

// invalid_argument when `target` exists and is not an empty directory (a
// restore never writes over anything); ok when it is empty or missing.
[[nodiscard]] Status check_restore_target(const std::string& target);

// Copies backup `id` of backup_dir into `target` (created when missing),
// checking every file's checksum on the way, so that `target` is a data
// directory `tarde serve --data target` opens as the store was when the backup
// was made. Writes nothing into backup_dir. Errors: invalid_argument from
// check_restore_target; not_found for a missing backup_dir or unknown id;
// corruption when a file does not match its checksum; io_error otherwise.
[[nodiscard]] Result<RestoreReport> restore_backup(const std::string& backup_dir, uint32_t id,
                                                   const std::string& target);

}  // namespace tarde::storage
