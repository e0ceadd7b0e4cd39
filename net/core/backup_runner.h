#pragma once

#include <asio.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

#include "base/status.h"
#include "storage/backups.h"
#include "storage/rocks_kv.h"

namespace tarde::net {

// BackupRunner makes one backup at a time of the open store, on a thread of
// its own, so that the io thread keeps serving while RocksDB flushes, copies
// and verifies (seconds for a large store). It is the BACKUP command's and the
// embedded backup()'s engine room; the Core owns it when a backup directory
// is configured.
//
// start() and the `done` callbacks run on the io thread; only the backup
// itself runs on the worker. A second start() while one runs is refused with
// busy (the caller says so; nothing queues). stop() abandons a backup under
// way (RocksDB stops between two chunks of a file) and is what the
// destructor does first, so a shutdown never waits for a whole backup; an
// abandoned backup's `done` is never called. Destroyed on the io thread, or
// after it stopped, and before the store it backs up is closed.
class BackupRunner {
 public:
  // Called on the io thread with what the backup made, or why it failed.
  using Done = std::function<void(const Result<storage::BackupReport>& made)>;

  BackupRunner(asio::io_context& io, storage::RocksKv& kv, storage::BackupMaker::Options options);
  ~BackupRunner();
  BackupRunner(const BackupRunner&) = delete;
  BackupRunner& operator=(const BackupRunner&) = delete;

  // Starts a backup on the worker; `done` follows on the io thread. busy
  // when one is running; shutting_down after stop().
  [[nodiscard]] Status start(Done done);
  bool running() const { return running_; }
  // Abandons the backup under way, if any, and refuses later ones.
  void stop();

 private:
  asio::io_context& io_;
  storage::RocksKv& kv_;
  storage::BackupMaker maker_;
  std::thread worker_;
  bool running_ = false;  // io thread only
  bool stopped_ = false;  // io thread only
  // Handlers posted by the worker hold a weak copy: once the runner is gone,
  // a handler that still runs does nothing.
  std::shared_ptr<BackupRunner*> self_ = std::make_shared<BackupRunner*>(this);
};

}  // namespace tarde::net
