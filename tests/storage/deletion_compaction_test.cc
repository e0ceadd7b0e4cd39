// Which table files the compact-on-deletion collector marks
// (storage/deletion_compaction.h), fed the entries RocksDB would feed it.
#include "storage/deletion_compaction.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>

namespace tarde::storage {
namespace {

// Whether a file created at `level`, holding `deletions` deletions among
// `entries` entries (the deletions first), is marked for compaction.
bool marks(DeletionWatch watch, int level, int entries, int deletions) {
  rocksdb::TablePropertiesCollectorFactory::Context context;
  context.column_family_id = 1;
  context.level_at_creation = level;
  std::unique_ptr<rocksdb::TablePropertiesCollector> collector(
      compact_on_deletion(watch)->CreateTablePropertiesCollector(context));
  REQUIRE(collector != nullptr);
  for (int i = 0; i < entries; ++i) {
    const std::string key = "key" + std::to_string(100000 + i);
    const auto type = i < deletions ? rocksdb::kEntryDelete : rocksdb::kEntryPut;
    REQUIRE(collector->AddUserKey(key, "", type, static_cast<uint64_t>(i), 0).ok());
  }
  rocksdb::UserCollectedProperties properties;
  REQUIRE(collector->Finish(&properties).ok());
  return collector->NeedCompact();
}

TEST_CASE("deletion compaction: every file watched, flushed or compacted") {
  CHECK(marks(DeletionWatch::kEveryFile, 0, 20000, 10000));
  CHECK(marks(DeletionWatch::kEveryFile, 1, 20000, 10000));
  CHECK_FALSE(marks(DeletionWatch::kEveryFile, 0, 20000, 100));
}

TEST_CASE("deletion compaction: below level 0, a flushed file is never marked") {
  CHECK_FALSE(marks(DeletionWatch::kBelowLevel0, 0, 20000, 10000));
  CHECK_FALSE(marks(DeletionWatch::kBelowLevel0, 0, 20000, 20000));
}

TEST_CASE("deletion compaction: below level 0, compacted files are watched") {
  CHECK(marks(DeletionWatch::kBelowLevel0, 1, 20000, 10000));
  CHECK(marks(DeletionWatch::kBelowLevel0, 3, 20000, 10000));
  CHECK_FALSE(marks(DeletionWatch::kBelowLevel0, 1, 20000, 100));
  // A file whose level RocksDB does not know (an ingested one) is watched.
  CHECK(marks(DeletionWatch::kBelowLevel0,
              rocksdb::TablePropertiesCollectorFactory::Context::kUnknownLevelAtCreation, 20000,
              10000));
}

}  // namespace
}  // namespace tarde::storage
