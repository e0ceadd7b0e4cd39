// The WAL tail scan and the Env behind it (storage/wal_tail.h,
// storage/wal_file_system.h), on WAL files written by RocksDB itself.
#include "storage/wal_tail.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "storage/crc32c.h"
#include "storage/rocks_kv.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wal_file.h"

namespace tarde::storage {
namespace {

namespace fs = std::filesystem;
using tarde::testing::TempDir;

TEST_CASE("crc32c: the standard check values, and the CPU's instruction agrees with the table") {
  CHECK(crc32c("") == 0);
  CHECK(crc32c("123456789") == 0xe3069283u);
  CHECK(crc32c(std::string(32, '\0')) == 0x8a9136aau);
  CHECK(crc32c("56789", crc32c("1234")) == 0xe3069283u);  // extends
  std::mt19937 random(7);
  for (size_t size : {1, 7, 8, 9, 63, 64, 65, 1000, 4097}) {
    std::string bytes(size, '\0');
    for (char& c : bytes) c = static_cast<char>(random());
    CHECK(crc32c(bytes) == crc32c_portable(bytes));
  }
}

// The path of the newest WAL in a store's directory.
std::string newest_wal(const TempDir& dir) {
  std::string newest;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".log") && name > newest) newest = name;
  }
  REQUIRE(!newest.empty());
  return dir.sub(newest);
}

// The bytes of the one live WAL of a store written with `values` (one write
// each), copied while the store is open: its reserved tail still reads as
// zeros, as after a kill -9.
std::string live_wal(const std::vector<std::string>& values) {
  TempDir dir;
  RocksKv::Options options;
  options.sync = true;
  auto kv = RocksKv::open(dir.path(), options);
  REQUIRE(kv.is_ok());
  for (size_t i = 0; i < values.size(); ++i) {
    KvBatch batch;
    batch.put(Cf::kTx, "k" + std::to_string(i), values[i]);
    REQUIRE(kv.value()->write(batch).is_ok());
  }
  return testing::file_bytes(newest_wal(dir));
}

TEST_CASE("wal_tail: a WAL left by a crash ends at its last record; the reserved zeros follow") {
  const std::string wal = live_wal({std::string(200, 'a'), std::string(200, 'b')});
  CHECK(wal.size() == 256 * 1024);  // the size was set ahead of the data
  const WalTail tail = find_wal_tail(wal);
  CHECK(tail.end == testing::wal_data_end(wal));
  CHECK_FALSE(tail.dropped);
  // The same bytes without the zeros (a file that grew) end in the same place.
  CHECK(find_wal_tail(wal.substr(0, testing::wal_data_end(wal))).end == tail.end);
  CHECK(find_wal_tail("").end == 0);
  CHECK(find_wal_tail(std::string(100000, '\0')).end == 0);
  CHECK_FALSE(find_wal_tail(std::string(100000, '\0')).dropped);
}

TEST_CASE("wal_tail: a live WAL's reserved blocks hold written zeros; a clean close trims them") {
  TempDir dir;
  RocksKv::Options options;
  options.sync = true;
  auto kv = RocksKv::open(dir.path(), options);
  REQUIRE(kv.is_ok());
  for (const char* value : {"first", "second"}) {
    KvBatch batch;
    batch.put(Cf::kTx, value, std::string(500, value[0]));
    REQUIRE(kv.value()->write(batch).is_ok());
  }
  const std::string wal = newest_wal(dir);
  CHECK(fs::file_size(wal) == 256 * 1024);
  // Reserved only, the blocks would make each fdatasync write the extent
  // map and the inode too (storage/wal_zeros.h).
  const std::optional<bool> unwritten = testing::has_unwritten_blocks(wal, 256 * 1024);
  if (unwritten) CHECK_FALSE(*unwritten);

  kv.value().reset();
  const std::string bytes = testing::file_bytes(wal);
  CHECK(bytes.size() > 1000);
  CHECK(bytes.size() == testing::wal_data_end(bytes));
}

// Where the record after the one at `header` starts (a record of one block).
size_t next_record(const std::string& wal, size_t header) {
  const size_t length = static_cast<unsigned char>(wal[header + 4]) |
                        (static_cast<unsigned char>(wal[header + 5]) << 8);
  return header + 7 + length;
}

TEST_CASE("wal_tail: a last record torn or cut short is dropped; damage before it is not a tail") {
  const std::string wal =
      live_wal({std::string(300, 'a'), std::string(300, 'b'), std::string(300, 'c')});
  const size_t end = testing::wal_data_end(wal);
  // Three writes, three records from the start of the file.
  const size_t second = next_record(wal, 0);
  const size_t third = next_record(wal, second);
  REQUIRE(next_record(wal, third) == end);
  REQUIRE(find_wal_tail(wal).end == end);

  SUBCASE("torn: the last record's rest reads as zeros") {
    std::string torn = wal;
    std::fill(torn.begin() + static_cast<long>(end - 100), torn.begin() + static_cast<long>(end),
              '\0');
    const WalTail tail = find_wal_tail(torn);
    CHECK(tail.end == third);
    CHECK(tail.dropped);
  }
  SUBCASE("cut short: the file ends inside the last record") {
    const WalTail tail = find_wal_tail(wal.substr(0, end - 7));
    CHECK(tail.end == third);
    CHECK(tail.dropped);
  }
  SUBCASE("cut short inside the last record's header") {
    CHECK(find_wal_tail(wal.substr(0, third + 3)).end == third);
  }
  SUBCASE("damage in an earlier record, intact records after it: the whole file") {
    std::string damaged = wal;
    damaged[second + 100] ^= 0x01;
    CHECK(find_wal_tail(damaged).end == damaged.size());
    CHECK(find_wal_tail(damaged).damaged);
  }
  SUBCASE("a header that cannot be followed: the rest of its block reads as a tail") {
    // RocksDB's own limit (docs/design.md): what follows an unreadable
    // header in the same 32 KiB block cannot be found.
    std::string damaged = wal;
    damaged[second + 6] = 0x7f;  // an unknown record type
    const WalTail tail = find_wal_tail(damaged);
    CHECK(tail.end == second);
    CHECK(tail.dropped);
  }
}

TEST_CASE("wal_tail: a record split over blocks is dropped whole when its last fragment is torn") {
  const std::string big(100000, 'z');  // FIRST, MIDDLE, MIDDLE, LAST fragments
  const std::string wal = live_wal({std::string(100, 'a'), big});
  const size_t end = testing::wal_data_end(wal);
  REQUIRE(find_wal_tail(wal).end == end);
  std::string torn = wal;
  std::fill(torn.begin() + static_cast<long>(end - 50), torn.begin() + static_cast<long>(end),
            '\0');
  const WalTail tail = find_wal_tail(torn);
  CHECK(tail.end < 32768);  // back to before the FIRST fragment, in block 0
  CHECK(tail.end >= wal.find(std::string(100, 'a')) + 100);
  CHECK(tail.dropped);

  // A middle fragment torn while the last reached the disk: still one
  // torn record, not damage before the tail.
  std::string middle_torn = wal;
  std::fill(middle_torn.begin() + 40000, middle_torn.begin() + 40100, '\0');
  CHECK(find_wal_tail(middle_torn).end == tail.end);
}

TEST_CASE(
    "wal_tail: a store reopened after its WAL's last record was torn has every earlier write") {
  TempDir dir;
  TempDir copy;
  RocksKv::Options options;
  options.sync = true;
  std::string wal_path;
  {
    auto kv = RocksKv::open(dir.path(), options);
    REQUIRE(kv.is_ok());
    for (int i = 0; i < 3; ++i) {
      KvBatch batch;
      batch.put(Cf::kTx, "k" + std::to_string(i), std::string(300, static_cast<char>('a' + i)));
      REQUIRE(kv.value()->write(batch).is_ok());
    }
    for (const auto& entry : fs::directory_iterator(dir.path())) {
      const std::string name = entry.path().filename().string();
      if (name.ends_with(".log") && fs::file_size(entry.path()) > 0) wal_path = entry.path();
    }
    REQUIRE(!wal_path.empty());
    // Copy the live directory as a kill -9 would leave it, then tear the copy.
    for (const auto& entry : fs::directory_iterator(dir.path())) {
      if (entry.path().filename() != "LOCK") fs::copy(entry.path(), copy.path());
    }
  }
  const fs::path copied = fs::path(copy.path()) / fs::path(wal_path).filename();
  std::string bytes = testing::file_bytes(copied);
  const size_t end = testing::wal_data_end(bytes);
  std::fill(bytes.begin() + static_cast<long>(end - 100), bytes.begin() + static_cast<long>(end),
            '\0');
  std::ofstream(copied, std::ios::binary | std::ios::trunc) << bytes;

  auto reopened = RocksKv::open(copy.path(), options);
  REQUIRE_MESSAGE(reopened.is_ok(), reopened.status().to_string());
  CHECK(reopened.value()->get(Cf::kTx, "k0").value() == std::string(300, 'a'));
  CHECK(reopened.value()->get(Cf::kTx, "k1").value() == std::string(300, 'b'));
  CHECK(reopened.value()->get(Cf::kTx, "k2").value() == std::nullopt);
}

}  // namespace
}  // namespace tarde::storage
