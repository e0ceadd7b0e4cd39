// RocksKv under a full disk: a FileSystem that fails every append and file
// creation with ENOSPC while a flag is set (the kernel's error for a full
// disk, which this machine cannot produce without mounting a filesystem).
// tests/net/storage_fault_test.cc covers the other errors (EFBIG) with the
// real server and a real file-size limit.
#include <doctest/doctest.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "storage/rocks_kv.h"
#include "tests/support/temp_dir.h"

namespace tarde::storage {
namespace {

rocksdb::IOStatus no_space() {
  rocksdb::IOStatus status = rocksdb::IOStatus::NoSpace("disk full (injected)");
  status.SetRetryable(true);  // what RocksDB's POSIX file system says for ENOSPC
  return status;
}

// Appends fail while *full is set.
class FullDiskFile final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  FullDiskFile(std::unique_ptr<rocksdb::FSWritableFile> file, const std::atomic<bool>* full)
      : FSWritableFileOwnerWrapper(std::move(file)), full_(full) {}
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* debug) override {
    if (*full_) return no_space();
    return FSWritableFileOwnerWrapper::Append(data, options, debug);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* debug) override {
    if (*full_) return no_space();
    return FSWritableFileOwnerWrapper::Append(data, options, info, debug);
  }

 private:
  const std::atomic<bool>* full_;
};

// The default file system, full while full is set.
class FullDiskFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  FullDiskFileSystem() : FileSystemWrapper(rocksdb::FileSystem::Default()) {}
  const char* Name() const override { return "FullDiskFileSystem"; }
  rocksdb::IOStatus NewWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* file,
                                    rocksdb::IODebugContext* debug) override {
    if (full) return no_space();
    rocksdb::IOStatus status = target()->NewWritableFile(name, options, file, debug);
    if (status.ok()) *file = std::make_unique<FullDiskFile>(std::move(*file), &full);
    return status;
  }
  std::atomic<bool> full{false};
};

KvBatch put(const std::string& key) {
  KvBatch batch;
  batch.put(Cf::kTx, key, "value of " + key);
  batch.put(Cf::kDue, key, "due of " + key);
  return batch;
}

TEST_CASE("rocks_kv: a full disk fails writes, reads go on, writes resume once space is back") {
  testing::TempDir dir;
  auto file_system = std::make_shared<FullDiskFileSystem>();
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(file_system);
  RocksKv::Options options;
  options.env_for_test = env.get();
  {
    auto kv = RocksKv::open(dir.path(), options);
    REQUIRE(kv.is_ok());
    REQUIRE(kv.value()->write(put("a")).is_ok());

    file_system->full = true;
    Status failed = kv.value()->write(put("b"));
    CHECK(failed.code() == Status::Code::kIoError);
    CHECK(failed.message().find("No space left on device") != std::string::npos);
    CHECK_FALSE(kv.value()->write(put("c")).is_ok());
    auto a = kv.value()->get(Cf::kTx, "a");
    REQUIRE(a.is_ok());
    CHECK(a.value() == std::optional<std::string>("value of a"));
    auto b = kv.value()->get(Cf::kTx, "b");
    REQUIRE(b.is_ok());
    CHECK_FALSE(b.value().has_value());

    file_system->full = false;
    // RocksDB recovers from a full disk in the background, polling; writes
    // go through again within seconds (the bound is generous).
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    Status resumed = kv.value()->write(put("d"));
    while (!resumed.is_ok() && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      resumed = kv.value()->write(put("d"));
    }
    REQUIRE_MESSAGE(resumed.is_ok(), resumed.to_string());
    CHECK(kv.value()->write(put("e")).is_ok());
    REQUIRE(kv.value()->close().is_ok());
  }
  // After a reopen: every acknowledged write, none of the failed ones, and
  // never half of a batch.
  auto kv = RocksKv::open(dir.path(), options);
  REQUIRE(kv.is_ok());
  for (const char* key : {"a", "d", "e"}) {
    CHECK(kv.value()->get(Cf::kTx, key).value().has_value());
    CHECK(kv.value()->get(Cf::kDue, key).value().has_value());
  }
  for (const char* key : {"b", "c"}) {
    CHECK_FALSE(kv.value()->get(Cf::kTx, key).value().has_value());
    CHECK_FALSE(kv.value()->get(Cf::kDue, key).value().has_value());
  }
}

}  // namespace
}  // namespace tarde::storage
