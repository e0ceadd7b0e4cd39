#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tarde::storage {

// WalZeros writes zeros over the part of a WAL file that the next append
// will reach, a chunk at a time, before the data gets there. Space that is
// only reserved (fallocate) stays "unwritten" on ext4 until data lands in
// it, and an fdatasync after data first lands in such a block must write
// the file's extent tree and inode as well as the data: three or four
// requests to the disk instead of two, each a wait of the committing
// thread. Over blocks already written with zeros, an fdatasync writes the
// data and flushes, nothing else (docs/design.md, "Disk").
//
// It writes through a descriptor of its own, only at offsets past every
// byte appended so far, so it never touches data. It is an optimisation:
// when the file cannot be opened, or a write of zeros fails (a full disk,
// a file size limit), it stops for good and the WAL is written as before.
// Owned by the WAL's writable file; one thread, like that file.
class WalZeros {
 public:
  // Kept equal to the WAL's reservation (storage/wal_file_system.cc), so
  // that each reserved chunk is written with zeros once.
  static constexpr size_t kChunkBytes = 256 << 10;

  explicit WalZeros(const std::string& path);
  ~WalZeros();
  WalZeros(const WalZeros&) = delete;
  WalZeros& operator=(const WalZeros&) = delete;

  // Called before `bytes` more are appended to the file: zero-fills every
  // chunk those bytes reach that is not zero-filled yet.
  void before_append(size_t bytes);
  // Closes the descriptor; nothing more is written. Before the file closes.
  void stop();

  bool active() const { return fd_ >= 0; }
  // Every byte below it was appended or written as zero.
  uint64_t zeroed_end() const { return zeroed_end_; }

 private:
  int fd_;
  uint64_t appended_ = 0;
  uint64_t zeroed_end_ = 0;
};

}  // namespace tarde::storage
