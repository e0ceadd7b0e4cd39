// Zeros written ahead of a WAL's data (storage/wal_zeros.h), on real files.
#include "storage/wal_zeros.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <string>

#include "tests/support/temp_dir.h"
#include "tests/support/wal_file.h"

namespace tarde::storage {
namespace {

using tarde::testing::TempDir;
constexpr size_t kChunk = WalZeros::kChunkBytes;

// Creates the file at `path`, open for writing.
int create_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  return fd;
}

// Appends `bytes` to the file the way RocksDB does, through its own
// descriptor at its own offset, after telling `zeros`.
void append(WalZeros& zeros, int fd, const std::string& bytes) {
  zeros.before_append(bytes.size());
  REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
}

TEST_CASE("wal_zeros: the chunks the next appends reach are zeros ahead of the data") {
  TempDir dir;
  const std::string path = dir.sub("000001.log");
  const int fd = create_file(path);
  WalZeros zeros(path);
  CHECK(zeros.active());
  CHECK(zeros.zeroed_end() == 0);

  append(zeros, fd, std::string(100, 'a'));
  CHECK(zeros.zeroed_end() == kChunk);
  CHECK(std::filesystem::file_size(path) == kChunk);
  std::string bytes = testing::file_bytes(path);
  CHECK(bytes.substr(0, 100) == std::string(100, 'a'));
  CHECK(bytes.find_first_not_of('\0', 100) == std::string::npos);

  // Within the chunk nothing more is written; an append that crosses into
  // the next chunks zero-fills them first, and never over the data.
  append(zeros, fd, std::string(kChunk - 200, 'b'));
  CHECK(zeros.zeroed_end() == kChunk);
  append(zeros, fd, std::string(kChunk + 300, 'c'));
  CHECK(zeros.zeroed_end() == 3 * kChunk);
  bytes = testing::file_bytes(path);
  REQUIRE(bytes.size() == 3 * kChunk);
  const size_t data_end = 100 + (kChunk - 200) + (kChunk + 300);
  CHECK(bytes.find_first_not_of("abc") == data_end);
  CHECK(bytes.find_first_not_of('\0', data_end) == std::string::npos);

  // What the zeros are for: no block below them is left merely reserved.
  REQUIRE(::fdatasync(fd) == 0);
  const std::optional<bool> unwritten = testing::has_unwritten_blocks(path, 3 * kChunk);
  if (unwritten) CHECK_FALSE(*unwritten);

  zeros.stop();
  CHECK_FALSE(zeros.active());
  append(zeros, fd, std::string(kChunk, 'd'));  // past the zeros: nothing ahead of it
  CHECK(std::filesystem::file_size(path) == data_end + kChunk);
  ::close(fd);
}

TEST_CASE("wal_zeros: the extent check tells reserved blocks from written ones") {
  TempDir dir;
  const std::string path = dir.sub("reserved");
  const int fd = create_file(path);
  const bool reserved = ::fallocate(fd, 0, 0, kChunk) == 0;
  ::close(fd);
  const std::optional<bool> unwritten = testing::has_unwritten_blocks(path, kChunk);
  if (!reserved || !unwritten) {
    MESSAGE("this file system cannot reserve blocks or map extents; nothing to compare");
    return;
  }
  CHECK(*unwritten);
}

TEST_CASE("wal_zeros: a file it cannot open leaves the WAL as it is") {
  TempDir dir;
  WalZeros zeros(dir.path());  // a directory: not writable as a file
  CHECK_FALSE(zeros.active());
  zeros.before_append(100);
  CHECK(zeros.zeroed_end() == 0);
}

TEST_CASE("wal_zeros: a failed write of zeros stops them for good") {
  TempDir dir;
  const std::string path = dir.sub("000002.log");
  const int fd = create_file(path);
  WalZeros zeros(path);
  REQUIRE(zeros.active());
  // A file size limit below one chunk: the write of zeros comes up short
  // (with SIGXFSZ ignored, as a full disk would leave it short).
  rlimit before{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &before) == 0);
  const auto previous = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limited = before;
  limited.rlim_cur = kChunk / 2;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &limited) == 0);
  zeros.before_append(10);
  const bool stopped = !zeros.active();
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &before) == 0);
  std::signal(SIGXFSZ, previous);
  CHECK(stopped);
  CHECK(zeros.zeroed_end() == 0);
  zeros.before_append(kChunk);  // the limit is gone, the zeros stay stopped
  CHECK(zeros.zeroed_end() == 0);
  CHECK(std::filesystem::file_size(path) <= kChunk / 2);
  ::close(fd);
}

}  // namespace
}  // namespace tarde::storage
