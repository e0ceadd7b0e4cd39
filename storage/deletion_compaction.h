#pragma once

#include <rocksdb/table_properties.h>

#include <memory>

namespace tarde::storage {

// Which table files of a column family are watched for crowded deletions.
enum class DeletionWatch {
  // Every file, flushed or compacted: for the queue-shaped families (`due`,
  // `ready`) and `events`, whose tombstones sit where every scan starts.
  kEveryFile,
  // Only files that compaction writes below level 0: for `state`, where half
  // of every flushed file is deletions (each transition moves a key), so
  // watching level 0 compacted each flush at once (docs/benchmarks.md).
  kBelowLevel0,
};

// RocksDB's compact-on-deletion collector with tarde's thresholds: a table
// file whose deletions crowd it is marked for compaction, which drops them
// (RocksDB issues #5265, #10300: tombstones left where scans start slow every
// scan). Shared by the column families that use it; thread-safe, as RocksDB
// requires of a collector factory.
std::shared_ptr<rocksdb::TablePropertiesCollectorFactory> compact_on_deletion(DeletionWatch watch);

}  // namespace tarde::storage
