#pragma once

#include <rocksdb/env.h>

namespace tarde::storage {

// The Env tarde opens its stores with, for serving and for tolerant reads.
// It differs from RocksDB's default in two ways that go together:
//
// - A WAL file is given its size ahead of its data, 256 KiB at a time,
//   with a plain fallocate that sets the file's size, so that nearly every
//   fdatasync finds the size unchanged and flushes the data alone. RocksDB's
//   own reservation keeps the size (FALLOC_FL_KEEP_SIZE), and a WAL that
//   grows with each commit makes each fdatasync write the inode too: on our
//   disk about 200 µs per commit instead of about 120 µs (docs/design.md,
//   "Disk"). Each reservation is then written with zeros before the data
//   reaches it (storage/wal_zeros.h), so that the first data in a block
//   does not make its fdatasync write the extent map too. Table and
//   MANIFEST files are not reserved.
// - A WAL is replayed up to the end find_wal_tail() finds: after a crash
//   the reserved part reads as zeros, and a record torn by a power loss
//   (its rest reading as zeros) is dropped like a record cut short at the
//   end of a growing file, while damage before the tail is still refused.
//
// A clean close trims a WAL to its data. Strict replays (the format
// check's first read) use RocksDB's default Env, so that they still see a
// dropped tail and the start can say so. The Env lives as long as the
// process.
rocksdb::Env* tarde_env();

}  // namespace tarde::storage
