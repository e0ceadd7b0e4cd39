#include "storage/wal_file_system.h"

#include <rocksdb/file_system.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "storage/wal_tail.h"
#include "storage/wal_zeros.h"

namespace tarde::storage {
namespace {

bool is_wal(const std::string& name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".log") == 0;
}

// A WAL read from memory, up to the end of its last intact record.
class WalTailFile final : public rocksdb::FSSequentialFile {
 public:
  WalTailFile(std::unique_ptr<char[]> bytes, size_t size) : bytes_(std::move(bytes)), size_(size) {}

  rocksdb::IOStatus Read(size_t n, const rocksdb::IOOptions& /*options*/, rocksdb::Slice* result,
                         char* scratch, rocksdb::IODebugContext* /*debug*/) override {
    const size_t take = std::min(n, size_ - pos_);
    if (take > 0) std::memcpy(scratch, bytes_.get() + pos_, take);
    pos_ += take;
    *result = rocksdb::Slice(scratch, take);
    return rocksdb::IOStatus::OK();
  }

  rocksdb::IOStatus Skip(uint64_t n) override {
    pos_ += static_cast<size_t>(std::min<uint64_t>(n, size_ - pos_));
    return rocksdb::IOStatus::OK();
  }

 private:
  std::unique_ptr<char[]> bytes_;
  size_t size_;
  size_t pos_ = 0;
};

// A WAL reserves its blocks kReserveBytes at a time, not RocksDB's 1.1 write
// buffers: a copy of a live WAL (a backup's) takes its reserved zeros too,
// and a WAL left by a crash holds them until it is replayed. One fdatasync
// in a few hundred finds the size changed. The reserved blocks are written
// with zeros before the data reaches them (storage/wal_zeros.h).
class WalFile final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  static constexpr size_t kReserveBytes = WalZeros::kChunkBytes;

  WalFile(std::unique_ptr<rocksdb::FSWritableFile> target, const std::string& path)
      : rocksdb::FSWritableFileOwnerWrapper(std::move(target)), zeros_(path) {}

  void SetPreallocationBlockSize(size_t /*size*/) override {
    target()->SetPreallocationBlockSize(kReserveBytes);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* debug) override {
    zeros_.before_append(data.size());
    return target()->Append(data, options, debug);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& verification,
                           rocksdb::IODebugContext* debug) override {
    zeros_.before_append(data.size());
    return target()->Append(data, options, verification, debug);
  }
  // Writes at chosen offsets (direct I/O, which tarde does not use) or a
  // truncation would break the count of appended bytes: zeros stop first.
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                     const rocksdb::IOOptions& options,
                                     rocksdb::IODebugContext* debug) override {
    zeros_.stop();
    return target()->PositionedAppend(data, offset, options, debug);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                     const rocksdb::IOOptions& options,
                                     const rocksdb::DataVerificationInfo& verification,
                                     rocksdb::IODebugContext* debug) override {
    zeros_.stop();
    return target()->PositionedAppend(data, offset, options, verification, debug);
  }
  rocksdb::IOStatus Truncate(uint64_t size, const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* debug) override {
    zeros_.stop();
    return target()->Truncate(size, options, debug);
  }
  // RocksDB's close trims the file to its data, zeros included.
  rocksdb::IOStatus Close(const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* debug) override {
    zeros_.stop();
    return target()->Close(options, debug);
  }

 private:
  WalZeros zeros_;
};

class TardeFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  static constexpr int kReadsOfDamage = 3;

  using rocksdb::FileSystemWrapper::FileSystemWrapper;
  const char* Name() const override { return "TardeFileSystem"; }

  // RocksDB opens every WAL with these options (DBImpl::CreateWAL).
  rocksdb::FileOptions OptimizeForLogWrite(const rocksdb::FileOptions& file_options,
                                           const rocksdb::DBOptions& db_options) const override {
    rocksdb::FileOptions wal = target()->OptimizeForLogWrite(file_options, db_options);
    wal.allow_fallocate = true;
    wal.fallocate_with_keep_size = false;
    return wal;
  }

  // Every other file is written as it grows: no reserved, unused blocks.
  rocksdb::IOStatus NewWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* file,
                                    rocksdb::IODebugContext* debug) override {
    if (is_wal(name)) {
      std::unique_ptr<rocksdb::FSWritableFile> wal;
      rocksdb::IOStatus status = target()->NewWritableFile(name, options, &wal, debug);
      if (status.ok()) *file = std::make_unique<WalFile>(std::move(wal), name);
      return status;
    }
    rocksdb::FileOptions unreserved = options;
    unreserved.allow_fallocate = false;
    return target()->NewWritableFile(name, unreserved, file, debug);
  }

  rocksdb::IOStatus NewSequentialFile(const std::string& name, const rocksdb::FileOptions& options,
                                      std::unique_ptr<rocksdb::FSSequentialFile>* file,
                                      rocksdb::IODebugContext* debug) override {
    if (!is_wal(name)) return target()->NewSequentialFile(name, options, file, debug);
    // A WAL that a running server is writing can read, where the read went
    // faster than the writer, as zeros followed by the records written
    // meanwhile: damage to the scan. Real damage reads the same each time.
    std::unique_ptr<char[]> bytes;
    size_t size = 0;
    for (int attempt = 1;; ++attempt) {
      rocksdb::IOStatus status = read_whole(name, options, &bytes, &size, debug);
      if (!status.ok()) return status;
      const WalTail tail = find_wal_tail(std::string_view(bytes.get(), size));
      if (!tail.damaged || attempt == kReadsOfDamage) {
        size = static_cast<size_t>(tail.end);
        break;
      }
    }
    *file = std::make_unique<WalTailFile>(std::move(bytes), size);
    return rocksdb::IOStatus::OK();
  }

 private:
  // Reads the file into a new buffer of *size bytes. The buffer is not
  // zeroed first: at a million pending, filling the 8 MB of WAL a restart
  // replays with zeros before reading over them cost a few ms of its start.
  rocksdb::IOStatus read_whole(const std::string& name, const rocksdb::FileOptions& options,
                               std::unique_ptr<char[]>* bytes, size_t* size,
                               rocksdb::IODebugContext* debug) {
    uint64_t file_size = 0;
    rocksdb::IOStatus status = target()->GetFileSize(name, rocksdb::IOOptions(), &file_size, debug);
    if (!status.ok()) return status;
    std::unique_ptr<rocksdb::FSSequentialFile> raw;
    status = target()->NewSequentialFile(name, options, &raw, debug);
    if (!status.ok()) return status;
    // Read into place; a file that grew since its size was taken (a live
    // WAL) is read up to that size, which its records never depend on.
    const auto capacity = static_cast<size_t>(file_size);
    bytes->reset(new char[capacity]);
    size_t filled = 0;
    while (filled < capacity) {
      rocksdb::Slice got;
      status =
          raw->Read(capacity - filled, rocksdb::IOOptions(), &got, bytes->get() + filled, debug);
      if (!status.ok()) return status;
      if (got.empty()) break;
      if (got.data() != bytes->get() + filled)
        std::memcpy(bytes->get() + filled, got.data(), got.size());
      filled += got.size();
    }
    *size = filled;
    return rocksdb::IOStatus::OK();
  }
};

}  // namespace

rocksdb::Env* tarde_env() {
  static const std::unique_ptr<rocksdb::Env> env =
      rocksdb::NewCompositeEnv(std::make_shared<TardeFileSystem>(rocksdb::FileSystem::Default()));
  return env.get();
}

}  // namespace tarde::storage
