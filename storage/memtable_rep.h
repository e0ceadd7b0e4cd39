#pragma once

#include <memory>

namespace rocksdb {
class MemTableRepFactory;
}

namespace tarde::storage {

// The memtable every column family of a store keeps its newest writes in: a
// skip list like RocksDB's default, ordered the same way (user keys
// bytewise, then newest sequence first), and read the same way while one
// thread inserts. It exists because of how Debian builds RocksDB: without
// NDEBUG, RocksDB's skip list checks, after every insert, that its insert
// position brackets the new key at every level of the list, two key
// comparisons per level through two virtual calls. That check was most of
// the 30 key comparisons and about a quarter of the user-space instructions
// of a W1 command, and it turned the insert hints of rocks_kv.cc, which
// should make an insert next to the previous one nearly free, into a
// search's cost (docs/benchmarks.md).
//
// This list compares keys inline (tarde installs no comparator: every
// family orders its user keys bytewise, storage/FORMAT.md), and keeps the
// insert hints: an insert whose key falls right after the one its hint
// remembers checks two neighbours instead of searching. It changes nothing
// on disk: the WAL and table files are RocksDB's. Its factory's name is
// written in the store's OPTIONS file; RocksDB reads that file back only to
// check it, in the process that wrote it, where the factory is registered.
//
// One writer at a time (tarde opens its stores with
// allow_concurrent_memtable_write off); readers need no lock.
std::shared_ptr<rocksdb::MemTableRepFactory> skip_list_memtable_factory();

}  // namespace tarde::storage
