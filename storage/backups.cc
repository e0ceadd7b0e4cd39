// Backups through RocksDB's BackupEngine (storage/backups.h). The layout of a
// backup directory is RocksDB's own (storage/FORMAT.md, "Backups").
#include "storage/backups.h"

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/utilities/backup_engine.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <system_error>

#include "base/assert.h"

namespace tarde::storage {
namespace {

int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Status from_rocks(const rocksdb::Status& status, const std::string& what) {
  const std::string message = what + ": " + status.ToString();
  if (status.IsCorruption()) return Status::corruption(message);
  if (status.IsNotFound()) return Status::not_found(message);
  if (status.IsIncomplete()) return Status::shutting_down(message);
  return Status::io_error(message);
}

rocksdb::BackupEngineOptions engine_options(const std::string& backup_dir, uint64_t rate) {
  rocksdb::BackupEngineOptions options(backup_dir);
  // Table files are shared between backups, named by their checksum and
  // RocksDB session, so a second backup copies only the new ones.
  options.share_table_files = true;
  options.share_files_with_checksum = true;
  options.sync = true;  // a backup that reported ok survives a power loss
  options.backup_rate_limit = rate;
  return options;
}

// The directory must exist for the read-only functions: RocksDB would take a
// missing one for an empty one.
Status require_dir(const std::string& backup_dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(backup_dir, ec)) {
    return Status::not_found("no backup directory at " + backup_dir);
  }
  return Status::ok();
}

Result<std::unique_ptr<rocksdb::BackupEngineReadOnly>> open_read_only(
    const std::string& backup_dir) {
  TARDE_RETURN_IF_ERROR(require_dir(backup_dir));
  rocksdb::BackupEngineReadOnly* raw = nullptr;
  rocksdb::IOStatus status = rocksdb::BackupEngineReadOnly::Open(engine_options(backup_dir, 0),
                                                                 rocksdb::Env::Default(), &raw);
  if (!status.ok()) return from_rocks(status, "opening the backups in " + backup_dir);
  return std::unique_ptr<rocksdb::BackupEngineReadOnly>(raw);
}

Status unknown_id(const std::string& backup_dir, uint32_t id) {
  return Status::not_found("no backup " + std::to_string(id) + " in " + backup_dir +
                           " (tarde-dump backups " + backup_dir + " lists them)");
}

}  // namespace

Result<BackupReport> BackupMaker::create(RocksKv& kv) {
  const int64_t started_ms = steady_ms();
  std::error_code ec;
  std::filesystem::create_directories(options_.backup_dir, ec);
  if (ec) {
    return Status::io_error("cannot create the backup directory " + options_.backup_dir + ": " +
                            ec.message());
  }
  rocksdb::BackupEngine* raw = nullptr;
  rocksdb::IOStatus opened = rocksdb::BackupEngine::Open(
      engine_options(options_.backup_dir, options_.rate_limit_bytes_per_s), rocksdb::Env::Default(),
      &raw);
  if (!opened.ok())
    return from_rocks(opened, "opening the backup directory " + options_.backup_dir);
  std::unique_ptr<rocksdb::BackupEngine> engine(raw);
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (stopped_) return Status::shutting_down("backup abandoned: the store is closing");
    running_ = engine.get();
  }
  rocksdb::BackupID id = 0;
  Status made = kv.with_db([&](rocksdb::DB& db) {
    rocksdb::CreateBackupOptions create;
    // Flushing first puts what the memtables hold into table files, which the
    // next backup shares; the WAL written after the flush is copied too, up
    // to its size when the copy started (docs/design.md, "Backups").
    create.flush_before_backup = true;
    rocksdb::IOStatus status = engine->CreateNewBackup(create, &db, &id);
    if (!status.ok()) return from_rocks(status, "backing up into " + options_.backup_dir);
    return Status::ok();
  });
  {
    std::lock_guard<std::mutex> guard(mutex_);
    running_ = nullptr;
  }
  TARDE_RETURN_IF_ERROR(made);
  rocksdb::IOStatus verified = engine->VerifyBackup(id, /*verify_with_checksum=*/true);
  if (!verified.ok()) {
    static_cast<void>(engine->DeleteBackup(id));  // never leave a backup known to be bad
    return Status::corruption("backup " + std::to_string(id) + " in " + options_.backup_dir +
                              " failed its verification and was deleted: " + verified.ToString());
  }
  rocksdb::BackupInfo info;
  rocksdb::Status described = engine->GetBackupInfo(id, &info);
  if (!described.ok()) return from_rocks(described, "reading backup " + std::to_string(id));
  TARDE_ASSERT(info.backup_id == id);
  return BackupReport{.id = id,
                      .size_bytes = info.size,
                      .files = info.number_files,
                      .took_ms = steady_ms() - started_ms};
}

void BackupMaker::stop() {
  std::lock_guard<std::mutex> guard(mutex_);
  stopped_ = true;
  if (running_ != nullptr) running_->StopBackup();
}

Result<std::vector<BackupEntry>> list_backups(const std::string& backup_dir, bool verify) {
  auto engine = open_read_only(backup_dir);
  if (!engine.is_ok()) return engine.status();
  std::vector<rocksdb::BackupInfo> infos;
  engine.value()->GetBackupInfo(&infos);
  std::vector<rocksdb::BackupID> corrupt;
  engine.value()->GetCorruptedBackups(&corrupt);
  std::vector<BackupEntry> entries;
  for (const rocksdb::BackupInfo& info : infos) {
    BackupEntry entry{.id = info.backup_id,
                      .created_at_s = info.timestamp,
                      .size_bytes = info.size,
                      .files = info.number_files,
                      .verified = false,
                      .problem = {}};
    if (verify) {
      rocksdb::IOStatus status = engine.value()->VerifyBackup(info.backup_id, true);
      entry.verified = status.ok();
      if (!status.ok()) entry.problem = status.ToString();
    }
    entries.push_back(std::move(entry));
  }
  for (rocksdb::BackupID id : corrupt) {
    BackupEntry entry;
    entry.id = id;
    entry.problem = "its description (meta file) is unreadable";
    entries.push_back(std::move(entry));
  }
  std::sort(entries.begin(), entries.end(),
            [](const BackupEntry& a, const BackupEntry& b) { return a.id < b.id; });
  return entries;
}

Status verify_backup(const std::string& backup_dir, uint32_t id) {
  auto engine = open_read_only(backup_dir);
  if (!engine.is_ok()) return engine.status();
  rocksdb::BackupInfo info;
  if (!engine.value()->GetBackupInfo(id, &info).ok()) return unknown_id(backup_dir, id);
  rocksdb::IOStatus status = engine.value()->VerifyBackup(id, true);
  if (!status.ok()) {
    return Status::corruption("backup " + std::to_string(id) + " in " + backup_dir +
                              " is damaged: " + status.ToString());
  }
  return Status::ok();
}

Status check_restore_target(const std::string& target) {
  std::error_code ec;
  if (!std::filesystem::exists(target, ec)) return Status::ok();
  if (!std::filesystem::is_directory(target, ec)) {
    return Status::invalid_argument(target +
                                    " exists and is not a directory; restore into a new "
                                    "or empty directory");
  }
  if (!std::filesystem::is_empty(target, ec) || ec) {
    return Status::invalid_argument(target +
                                    " is not empty; a restore never writes over anything: "
                                    "restore into a new or empty directory");
  }
  return Status::ok();
}

Result<RestoreReport> restore_backup(const std::string& backup_dir, uint32_t id,
                                     const std::string& target) {
  const int64_t started_ms = steady_ms();
  TARDE_RETURN_IF_ERROR(check_restore_target(target));
  auto engine = open_read_only(backup_dir);
  if (!engine.is_ok()) return engine.status();
  rocksdb::BackupInfo info;
  if (!engine.value()->GetBackupInfo(id, &info).ok()) return unknown_id(backup_dir, id);
  std::error_code ec;
  const bool existed = std::filesystem::exists(target, ec);
  std::filesystem::create_directories(target, ec);
  if (ec) return Status::io_error("cannot create " + target + ": " + ec.message());
  rocksdb::IOStatus status =
      engine.value()->RestoreDBFromBackup(rocksdb::RestoreOptions(), id, target, target);
  // RocksDB's copy threads may still be writing files of a failed restore
  // (it returns at the first error); closing the engine waits for them.
  engine.value().reset();
  if (!status.ok()) {
    // The target was empty or missing: what is there now is the failed copy.
    for (const auto& entry : std::filesystem::directory_iterator(target, ec)) {
      std::filesystem::remove_all(entry.path(), ec);
    }
    if (!existed) std::filesystem::remove(target, ec);
    return from_rocks(
        status, "restoring backup " + std::to_string(id) + " of " + backup_dir + " into " + target);
  }
  return RestoreReport{.id = id,
                       .size_bytes = info.size,
                       .files = info.number_files,
                       .took_ms = steady_ms() - started_ms};
}

}  // namespace tarde::storage
