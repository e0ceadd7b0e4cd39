// tarde's memtable (storage/memtable_rep.h) inside a real RocksDB: every
// read a memtable serves (Get, iterators both ways, seeks, snapshots, a
// flush) checked against a model, with and without insert hints, and
// readers running beside the writer.
#include "storage/memtable_rep.h"

#include <doctest/doctest.h>
#include <rocksdb/db.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/utilities/options_util.h>

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/temp_dir.h"

namespace tarde::storage {
namespace {

using tarde::testing::TempDir;

struct Db {
  explicit Db(const std::string& dir, size_t hint_prefix_bytes = 0, bool hint = false) {
    rocksdb::Options options;
    options.create_if_missing = true;
    options.allow_concurrent_memtable_write = false;
    options.memtable_factory = skip_list_memtable_factory();
    if (hint) {
      options.memtable_insert_with_hint_prefix_extractor.reset(
          rocksdb::NewCappedPrefixTransform(hint_prefix_bytes));
    }
    rocksdb::DB* raw = nullptr;
    const rocksdb::Status status = rocksdb::DB::Open(options, dir, &raw);
    REQUIRE_MESSAGE(status.ok(), status.ToString());
    db.reset(raw);
  }
  std::unique_ptr<rocksdb::DB> db;
};

// Keys that share long first parts, are prefixes of each other and come in
// no order: what a skip list's comparisons must tell apart.
std::string key_of(uint32_t n) {
  static const char* const kStarts[] = {"", "a", "ab", "abc", "q\x01", "tx-2026-12-04-", "\xff"};
  return std::string(kStarts[n % 7]) + std::to_string(n / 7 % 300);
}

using Model = std::map<std::string, std::string>;

// What the database reads, through Get and through an iterator both ways,
// equals the model; every 37th key is sought as well.
void check_reads(rocksdb::DB& db, const Model& model, const rocksdb::Snapshot* snapshot = nullptr) {
  rocksdb::ReadOptions read;
  read.snapshot = snapshot;
  for (uint32_t n = 0; n < 7 * 300; n += 3) {
    std::string value;
    const rocksdb::Status status = db.Get(read, key_of(n), &value);
    const auto it = model.find(key_of(n));
    if (it == model.end()) {
      CHECK(status.IsNotFound());
    } else {
      REQUIRE(status.ok());
      CHECK(value == it->second);
    }
  }
  std::unique_ptr<rocksdb::Iterator> iter(db.NewIterator(read));
  auto expected = model.begin();
  for (iter->SeekToFirst(); iter->Valid(); iter->Next(), ++expected) {
    REQUIRE(expected != model.end());
    CHECK(iter->key().ToString() == expected->first);
    CHECK(iter->value().ToString() == expected->second);
  }
  CHECK(expected == model.end());
  auto backwards = model.rbegin();
  for (iter->SeekToLast(); iter->Valid(); iter->Prev(), ++backwards) {
    REQUIRE(backwards != model.rend());
    CHECK(iter->key().ToString() == backwards->first);
  }
  CHECK(backwards == model.rend());
  for (uint32_t n = 0; n < 7 * 300; n += 37) {
    const std::string target = key_of(n) + "~";
    iter->Seek(target);
    const auto after = model.lower_bound(target);
    CHECK(iter->Valid() == (after != model.end()));
    if (iter->Valid() && after != model.end()) CHECK(iter->key().ToString() == after->first);
    iter->SeekForPrev(target);
    const auto upto = model.upper_bound(target);
    CHECK(iter->Valid() == (upto != model.begin()));
    if (iter->Valid() && upto != model.begin()) {
      CHECK(iter->key().ToString() == std::prev(upto)->first);
    }
  }
  REQUIRE(iter->status().ok());
}

// Random puts, rewrites and deletes, checked along the way, with a snapshot
// taken half-way still reading what it saw.
void run_model(rocksdb::DB& db, uint32_t seed) {
  std::mt19937 random(seed);
  Model model;
  Model at_snapshot;
  const rocksdb::Snapshot* snapshot = nullptr;
  for (int i = 1; i <= 6000; ++i) {
    const std::string key = key_of(random() % (7 * 300));
    if (random() % 4 == 0) {
      REQUIRE(db.Delete(rocksdb::WriteOptions(), key).ok());
      model.erase(key);
    } else {
      const std::string value = "v" + std::to_string(i);
      REQUIRE(db.Put(rocksdb::WriteOptions(), key, value).ok());
      model[key] = value;
    }
    if (i == 3000) {
      snapshot = db.GetSnapshot();
      at_snapshot = model;
    }
    if (i % 1500 == 0) check_reads(db, model);
  }
  check_reads(db, at_snapshot, snapshot);
  db.ReleaseSnapshot(snapshot);
  REQUIRE(
      db.Flush(rocksdb::FlushOptions()).ok());  // the flush reads the memtable through an iterator
  check_reads(db, model);
}

TEST_CASE("memtable: reads match a model of random writes, without insert hints") {
  TempDir dir;
  Db db(dir.path());
  run_model(*db.db, 20261204);
}

TEST_CASE("memtable: reads match a model of random writes, with insert hints of 0 and 3 bytes") {
  for (const size_t prefix : {size_t{0}, size_t{3}}) {
    TempDir dir;
    Db db(dir.path(), prefix, true);
    run_model(*db.db, 7 + static_cast<uint32_t>(prefix));
  }
}

TEST_CASE("memtable: keys written in order, then the same keys again, read back in order") {
  TempDir dir;
  Db db(dir.path(), 0, true);
  Model model;
  for (int round = 0; round < 2; ++round) {
    for (int n = 0; n < 3000; ++n) {
      char key[16];
      std::snprintf(key, sizeof key, "k%08d", n);
      const std::string value = std::to_string(round);
      REQUIRE(db.db->Put(rocksdb::WriteOptions(), key, value).ok());
      model[key] = value;
    }
  }
  check_reads(*db.db, model);
}

TEST_CASE("memtable: readers beside the writer see keys in order, each with a value it wrote") {
  TempDir dir;
  Db db(dir.path(), 0, true);
  std::atomic<bool> done{false};
  std::atomic<int> scans{0};
  std::atomic<int> disorder{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      while (!done.load()) {
        std::unique_ptr<rocksdb::Iterator> iter(db.db->NewIterator(rocksdb::ReadOptions()));
        std::optional<std::string> last;
        for (iter->SeekToFirst(); iter->Valid(); iter->Next()) {
          const std::string key = iter->key().ToString();
          if ((last && *last >= key) || iter->value().ToString() != "value of " + key) {
            disorder.fetch_add(1);
          }
          last = key;
        }
        scans.fetch_add(1);
      }
    });
  }
  std::mt19937 random(99);
  for (int i = 0; i < 20000; ++i) {
    const std::string key = key_of(random() % (7 * 300)) + "/" + std::to_string(i % 97);
    REQUIRE(db.db->Put(rocksdb::WriteOptions(), key, "value of " + key).ok());
  }
  while (scans.load() < 4) std::this_thread::yield();
  done.store(true);
  for (std::thread& reader : readers) reader.join();
  CHECK(disorder.load() == 0);
}

TEST_CASE("memtable: the OPTIONS file names the factory, and loading it makes tarde's") {
  TempDir dir;
  { Db db(dir.path()); }
  rocksdb::DBOptions db_options;
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  rocksdb::ConfigOptions config;
  const rocksdb::Status status =
      rocksdb::LoadLatestOptions(config, dir.path(), &db_options, &families);
  REQUIRE_MESSAGE(status.ok(), status.ToString());
  REQUIRE(families.size() == 1);
  REQUIRE(families[0].options.memtable_factory != nullptr);
  CHECK(std::string(families[0].options.memtable_factory->Name()) ==
        skip_list_memtable_factory()->Name());
  // And the store opens again with it.
  Db again(dir.path());
  CHECK(again.db != nullptr);
}

}  // namespace
}  // namespace tarde::storage
