#include "net/core/backup_runner.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "base/log_record.h"
#include "base/thread_name.h"

namespace tarde::net {

BackupRunner::BackupRunner(asio::io_context& io, storage::RocksKv& kv,
                           storage::BackupMaker::Options options)
    : io_(io), kv_(kv), maker_(std::move(options)) {}

BackupRunner::~BackupRunner() {
  stop();
  self_.reset();  // a completion still queued on the io_context finds no runner
  if (worker_.joinable()) worker_.join();
}

Status BackupRunner::start(Done done) {
  if (stopped_) return Status::shutting_down("the server is stopping");
  if (running_) return Status::busy("a backup is already running");
  if (worker_.joinable()) worker_.join();  // the last one's thread, finished
  running_ = true;
  std::weak_ptr<BackupRunner*> weak = self_;
  worker_ = std::thread([this, weak, done = std::move(done)]() mutable {
    name_this_thread("tarde-backup");
    Result<storage::BackupReport> made = maker_.create(kv_);
    asio::post(io_, [weak, done = std::move(done), made = std::move(made)] {
      auto self = weak.lock();
      if (!self) return;
      BackupRunner* runner = *self;
      runner->running_ = false;
      if (runner->stopped_) return;  // abandoned: nobody waits for it
      done(made);
    });
  });
  return Status::ok();
}

void BackupRunner::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (running_) {
    spdlog::info(LogRecord("backup.abandoned")
                     .text("msg", "abandoning the backup under way: the server is stopping")
                     .line());
  }
  maker_.stop();
}

}  // namespace tarde::net
