#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "storage/rocks_kv.h"

namespace tarde::storage {

// Why a data directory was refused. `tarde serve` turns each into its own exit
// code (README.md, "Exit codes"), so that a script or an operator can tell a
// busy directory from a damaged one without parsing the message.
enum class OpenProblem {
  kNone = 0,
  kLocked,       // another process holds the directory's lock
  kNewerFormat,  // written by a newer tarde
  kForeign,      // not a tarde store: another RocksDB, or unrelated files
  kDamaged,      // a tarde store with missing or corrupt files
  kUnreadable,   // not a directory, or not readable
};

// The outcome of open_for_serving: the opened store, or the problem and a
// one-line message naming it and saying what to do.
struct OpenedStore {
  std::unique_ptr<RocksKv> kv;
  OpenProblem problem = OpenProblem::kNone;
  Status status;
  // Set when the store opened but its WAL ended with a record cut short,
  // which the replay dropped: one line for the log.
  std::string warning;
};

// True when families are exactly tarde's column families and "default".
bool has_tarde_column_families(const std::vector<RocksKv::ColumnFamilyInfo>& families);
// The names of families, comma-separated, for messages.
std::string column_family_names(const std::vector<RocksKv::ColumnFamilyInfo>& families);

// Opens the data directory for `tarde serve`. A directory that does not exist
// or is empty becomes a new store. Anything else is first examined without
// writing into it (read-only opens, RocksDB's info log discarded): its column
// families, its WAL and its format record. Only a tarde store of a format this
// build reads (or an empty RocksDB with no column family but tarde's) is then
// opened for writing, which is when RocksDB writes its own files (a new
// MANIFEST, an OPTIONS file, a new WAL). The format record of a new store is
// written later, by Store::ensure_format.
[[nodiscard]] OpenedStore open_for_serving(const std::string& dir, const RocksKv::Options& options);

}  // namespace tarde::storage
