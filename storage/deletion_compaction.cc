#include "storage/deletion_compaction.h"

#include <rocksdb/utilities/table_properties_collectors.h>

namespace tarde::storage {
namespace {

// A file is marked when any window of kDeletionWindowEntries consecutive
// entries holds kDeletionTriggerEntries deletions, or when deletions are
// kDeletionRatio of the whole file. The numbers are moderate: a window big
// enough to ignore scattered deletes, a trigger of half the window.
constexpr size_t kDeletionWindowEntries = 10000;
constexpr size_t kDeletionTriggerEntries = 5000;
constexpr double kDeletionRatio = 0.5;
static_assert(kDeletionTriggerEntries <= kDeletionWindowEntries);

// Collects nothing and marks nothing: what a flushed file of a family
// watched below level 0 gets (RocksDB 7.8 does not document a null collector).
class NoMarks final : public rocksdb::TablePropertiesCollector {
 public:
  rocksdb::Status AddUserKey(const rocksdb::Slice& /*key*/, const rocksdb::Slice& /*value*/,
                             rocksdb::EntryType /*type*/, rocksdb::SequenceNumber /*seq*/,
                             uint64_t /*file_size*/) override {
    return rocksdb::Status::OK();
  }
  rocksdb::Status Finish(rocksdb::UserCollectedProperties* /*properties*/) override {
    return rocksdb::Status::OK();
  }
  rocksdb::UserCollectedProperties GetReadableProperties() const override { return {}; }
  const char* Name() const override { return "tarde.NoMarks"; }
};

// Hands files created at level 0 (flushes) a NoMarks, every other file the
// deletion collector. A file of unknown level is watched.
class BelowLevel0 final : public rocksdb::TablePropertiesCollectorFactory {
 public:
  explicit BelowLevel0(std::shared_ptr<rocksdb::TablePropertiesCollectorFactory> watched)
      : watched_(std::move(watched)) {}

  rocksdb::TablePropertiesCollector* CreateTablePropertiesCollector(
      rocksdb::TablePropertiesCollectorFactory::Context context) override {
    if (context.level_at_creation == 0) return new NoMarks();
    return watched_->CreateTablePropertiesCollector(context);
  }
  const char* Name() const override { return "tarde.CompactOnDeletionBelowLevel0"; }

 private:
  std::shared_ptr<rocksdb::TablePropertiesCollectorFactory> watched_;
};

}  // namespace

std::shared_ptr<rocksdb::TablePropertiesCollectorFactory> compact_on_deletion(DeletionWatch watch) {
  std::shared_ptr<rocksdb::TablePropertiesCollectorFactory> every_file =
      rocksdb::NewCompactOnDeletionCollectorFactory(kDeletionWindowEntries, kDeletionTriggerEntries,
                                                    kDeletionRatio);
  if (watch == DeletionWatch::kEveryFile) return every_file;
  return std::make_shared<BelowLevel0>(std::move(every_file));
}

}  // namespace tarde::storage
