#include "storage/backups.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>

#include "tests/support/temp_dir.h"

namespace tarde::storage {
namespace {

using tarde::testing::TempDir;
namespace fs = std::filesystem;

std::unique_ptr<RocksKv> open_or_fail(const std::string& dir, bool read_only = false) {
  RocksKv::Options options;
  options.sync = false;
  options.read_only = read_only;
  options.create_if_missing = !read_only;
  Result<std::unique_ptr<RocksKv>> kv = RocksKv::open(dir, options);
  REQUIRE_MESSAGE(kv.is_ok(), kv.status().to_string());
  return std::move(kv).value();
}

// Incompressible bytes, so that table files have the size of what they hold.
std::string noise(size_t bytes, uint32_t seed) {
  std::mt19937 random(seed);
  std::string text(bytes, '\0');
  for (char& c : text) c = static_cast<char>('!' + random() % 90);
  return text;
}

void put(RocksKv& kv, Cf cf, const std::string& key, const std::string& value) {
  KvBatch batch;
  batch.put(cf, key, value);
  REQUIRE(kv.write(batch).is_ok());
}

std::optional<std::string> get(RocksKv& kv, Cf cf, const std::string& key) {
  auto got = kv.get(cf, key);
  REQUIRE(got.is_ok());
  return got.value();
}

uint64_t dir_bytes(const std::string& dir) {
  uint64_t total = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) total += entry.file_size();
  }
  return total;
}

BackupReport create_or_fail(BackupMaker& maker, RocksKv& kv) {
  auto made = maker.create(kv);
  REQUIRE_MESSAGE(made.is_ok(), made.status().to_string());
  return made.value();
}

// Flips one byte in the middle of the largest table file of the backups, so
// that only a checksum notices (the size stays).
void damage_largest_table(const std::string& backup_dir) {
  fs::path largest;
  uint64_t largest_bytes = 0;
  for (const auto& entry : fs::recursive_directory_iterator(backup_dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".sst" &&
        entry.file_size() > largest_bytes) {
      largest = entry.path();
      largest_bytes = entry.file_size();
    }
  }
  REQUIRE(largest_bytes > 0);
  std::fstream file(largest, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(static_cast<std::streamoff>(largest_bytes / 2));
  char byte = 0;
  file.read(&byte, 1);
  file.seekp(static_cast<std::streamoff>(largest_bytes / 2));
  byte = static_cast<char>(byte ^ 0x5a);
  file.write(&byte, 1);
}

TEST_CASE("backups: create, an incremental second, list, and restore each into a new dir") {
  TempDir dir;
  const std::string data = dir.sub("data");
  const std::string backups = dir.sub("backups/nested");  // parents created too
  auto kv = open_or_fail(data);
  const std::string big = noise(300'000, 1);
  put(*kv, Cf::kTx, "tx-1", big);
  put(*kv, Cf::kMeta, "format", "3");

  BackupMaker maker({.backup_dir = backups});
  const BackupReport first = create_or_fail(maker, *kv);
  CHECK(first.id == 1);
  CHECK(first.files > 0);
  CHECK(first.size_bytes > big.size() / 2);
  CHECK(first.took_ms >= 0);

  put(*kv, Cf::kTx, "tx-2", "small");
  put(*kv, Cf::kDue, "due-2", "d");
  const uint64_t before_second = dir_bytes(backups);
  const BackupReport second = create_or_fail(maker, *kv);
  CHECK(second.id == 2);
  CHECK(second.size_bytes > big.size() / 2);
  // Incremental: the big table file is shared, not copied again.
  CHECK(dir_bytes(backups) - before_second < second.size_bytes / 4);
  put(*kv, Cf::kTx, "tx-3", "after the second backup");

  auto listed = list_backups(backups, /*verify=*/true);
  REQUIRE(listed.is_ok());
  REQUIRE(listed.value().size() == 2);
  CHECK(listed.value()[0].id == 1);
  CHECK(listed.value()[1].id == 2);
  CHECK(listed.value()[1].size_bytes == second.size_bytes);
  CHECK(listed.value()[1].files == second.files);
  CHECK(listed.value()[0].verified);
  CHECK(listed.value()[1].verified);
  CHECK(listed.value()[1].problem.empty());
  CHECK(listed.value()[1].created_at_s > 1'600'000'000);
  CHECK(verify_backup(backups, 1).is_ok());

  const std::string restored_first = dir.sub("restored-1");
  auto restored = restore_backup(backups, 1, restored_first);
  REQUIRE_MESSAGE(restored.is_ok(), restored.status().to_string());
  CHECK(restored.value().id == 1);
  CHECK(restored.value().files == first.files);
  {
    auto copy = open_or_fail(restored_first);
    CHECK(get(*copy, Cf::kTx, "tx-1") == big);
    CHECK(get(*copy, Cf::kMeta, "format") == "3");
    CHECK_FALSE(get(*copy, Cf::kTx, "tx-2").has_value());
  }
  const std::string restored_second = dir.sub("restored-2");
  REQUIRE(restore_backup(backups, 2, restored_second).is_ok());
  auto copy = open_or_fail(restored_second);
  CHECK(get(*copy, Cf::kTx, "tx-1") == big);
  CHECK(get(*copy, Cf::kTx, "tx-2") == "small");
  CHECK(get(*copy, Cf::kDue, "due-2") == "d");
  CHECK_FALSE(get(*copy, Cf::kTx, "tx-3").has_value());
  // The copy is a store of its own: it takes writes.
  put(*copy, Cf::kTx, "tx-4", "new");
  // The original is untouched by the backups.
  CHECK(get(*kv, Cf::kTx, "tx-3") == "after the second backup");
}

TEST_CASE("backups: every write acknowledged before create() is in its backup") {
  TempDir dir;
  auto kv = open_or_fail(dir.sub("data"));
  BackupMaker maker({.backup_dir = dir.sub("backups")});
  for (int i = 0; i < 50; ++i) {
    put(*kv, Cf::kTx, "tx-" + std::to_string(i), "v" + std::to_string(i));
    if (i % 10 == 9) create_or_fail(maker, *kv);
  }
  REQUIRE(restore_backup(dir.sub("backups"), 5, dir.sub("restored")).is_ok());
  auto copy = open_or_fail(dir.sub("restored"));
  for (int i = 0; i < 50; ++i) {
    CHECK(get(*copy, Cf::kTx, "tx-" + std::to_string(i)) == "v" + std::to_string(i));
  }
}

TEST_CASE("backups: errors name what is wrong") {
  TempDir dir;
  const std::string backups = dir.sub("backups");

  SUBCASE("a missing backup directory") {
    auto listed = list_backups(dir.sub("nowhere"), false);
    REQUIRE_FALSE(listed.is_ok());
    CHECK(listed.status().code() == Status::Code::kNotFound);
    CHECK(listed.status().message().find("no backup directory at") != std::string::npos);
    CHECK(verify_backup(dir.sub("nowhere"), 1).code() == Status::Code::kNotFound);
    auto restored = restore_backup(dir.sub("nowhere"), 1, dir.sub("target"));
    CHECK(restored.status().code() == Status::Code::kNotFound);
    CHECK_FALSE(fs::exists(dir.sub("target")));
  }

  SUBCASE("an unknown id") {
    auto kv = open_or_fail(dir.sub("data"));
    put(*kv, Cf::kTx, "tx-1", "v");
    BackupMaker maker({.backup_dir = backups});
    create_or_fail(maker, *kv);
    Status verified = verify_backup(backups, 7);
    CHECK(verified.code() == Status::Code::kNotFound);
    CHECK(verified.message().find("no backup 7 in") != std::string::npos);
    auto restored = restore_backup(backups, 7, dir.sub("target"));
    CHECK(restored.status().code() == Status::Code::kNotFound);
    CHECK_FALSE(fs::exists(dir.sub("target")));
  }

  SUBCASE("a target that is not empty, or not a directory") {
    auto kv = open_or_fail(dir.sub("data"));
    put(*kv, Cf::kTx, "tx-1", "v");
    BackupMaker maker({.backup_dir = backups});
    create_or_fail(maker, *kv);
    fs::create_directories(dir.sub("target"));
    std::ofstream(dir.sub("target/keep-me")) << "precious";
    auto restored = restore_backup(backups, 1, dir.sub("target"));
    REQUIRE_FALSE(restored.is_ok());
    CHECK(restored.status().code() == Status::Code::kInvalidArgument);
    CHECK(restored.status().message().find("is not empty") != std::string::npos);
    CHECK(fs::exists(dir.sub("target/keep-me")));
    CHECK(std::distance(fs::directory_iterator(dir.sub("target")), fs::directory_iterator()) == 1);
    CHECK(check_restore_target(dir.sub("target/keep-me")).code() == Status::Code::kInvalidArgument);
    fs::create_directories(dir.sub("empty"));
    CHECK(check_restore_target(dir.sub("empty")).is_ok());
    CHECK(restore_backup(backups, 1, dir.sub("empty")).is_ok());
  }

  SUBCASE("a damaged file is found by verification and refused by a restore") {
    auto kv = open_or_fail(dir.sub("data"));
    put(*kv, Cf::kTx, "tx-1", noise(100'000, 2));
    BackupMaker maker({.backup_dir = backups});
    create_or_fail(maker, *kv);
    damage_largest_table(backups);
    Status verified = verify_backup(backups, 1);
    CHECK(verified.code() == Status::Code::kCorruption);
    CHECK(verified.message().find("backup 1 in") != std::string::npos);
    auto listed = list_backups(backups, true);
    REQUIRE(listed.is_ok());
    REQUIRE(listed.value().size() == 1);
    CHECK_FALSE(listed.value()[0].verified);
    CHECK_FALSE(listed.value()[0].problem.empty());
    auto unverified = list_backups(backups, false);
    REQUIRE(unverified.is_ok());
    CHECK_FALSE(unverified.value()[0].verified);
    CHECK(unverified.value()[0].problem.empty());
    auto restored = restore_backup(backups, 1, dir.sub("target"));
    REQUIRE_FALSE(restored.is_ok());
    CHECK(restored.status().code() == Status::Code::kCorruption);
    CHECK_FALSE(fs::exists(dir.sub("target")));  // the failed copy is removed
  }

  SUBCASE("a store open read-only cannot be backed up") {
    open_or_fail(dir.sub("data")).reset();
    auto kv = open_or_fail(dir.sub("data"), /*read_only=*/true);
    BackupMaker maker({.backup_dir = backups});
    auto made = maker.create(*kv);
    CHECK(made.status().code() == Status::Code::kInvalidArgument);
  }

  SUBCASE("a backup directory that cannot be created") {
    auto kv = open_or_fail(dir.sub("data"));
    std::ofstream(dir.sub("a-file")) << "x";
    BackupMaker maker({.backup_dir = dir.sub("a-file/backups")});
    auto made = maker.create(*kv);
    CHECK(made.status().code() == Status::Code::kIoError);
    CHECK(made.status().message().find("cannot create the backup directory") != std::string::npos);
  }

  SUBCASE("after stop(), create() gives up") {
    auto kv = open_or_fail(dir.sub("data"));
    BackupMaker maker({.backup_dir = backups});
    maker.stop();
    auto made = maker.create(*kv);
    CHECK(made.status().code() == Status::Code::kShuttingDown);
    auto listed = list_backups(backups, false);
    REQUIRE(listed.is_ok());
    CHECK(listed.value().empty());
  }
}

}  // namespace
}  // namespace tarde::storage
