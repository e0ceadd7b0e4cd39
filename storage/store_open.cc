#include "storage/store_open.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "storage/keys.h"
#include "storage/store.h"

namespace tarde::storage {
namespace {

OpenedStore refused(OpenProblem problem, std::string message) {
  return OpenedStore{nullptr, problem, Status::invalid_argument(std::move(message)), ""};
}

// A directory RocksDB cannot read, with RocksDB's reason.
OpenedStore unreadable_store(const std::string& dir, const std::string& why) {
  return refused(OpenProblem::kDamaged, "data directory " + dir + " cannot be read: " + why +
                                            "; restore it from a backup or move it away");
}

bool is_rocksdb_file(const std::string& name) {
  return name.rfind("MANIFEST-", 0) == 0 || name.rfind("OPTIONS-", 0) == 0 ||
         name.ends_with(".sst") || name.ends_with(".log") || name == "IDENTITY";
}

// A directory without a CURRENT file: new (absent or empty), damaged (RocksDB
// files are there but CURRENT is not), or something else altogether.
OpenedStore examine_without_current(const std::string& dir) {
  std::error_code ec;
  bool rocksdb_files = false;
  bool other_files = false;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (is_rocksdb_file(name)) {
      rocksdb_files = true;
    } else if (name != "LOCK" && name.rfind("LOG", 0) != 0) {
      other_files = true;
    }
  }
  if (ec) {
    return refused(OpenProblem::kUnreadable,
                   "cannot read data directory " + dir + ": " + ec.message() +
                       "; check its permissions or point --data elsewhere");
  }
  if (rocksdb_files) {
    return refused(OpenProblem::kDamaged,
                   "data directory " + dir +
                       " holds RocksDB files but no CURRENT file: the store is damaged; restore "
                       "it from a backup or move it away");
  }
  if (other_files) {
    return refused(OpenProblem::kForeign,
                   "data directory " + dir +
                       " holds files that are not a tarde store; point --data at an empty or "
                       "new directory");
  }
  return OpenedStore{};  // empty: a new store
}

bool is_tarde_column_family(const std::string& name) {
  if (name == "default") return true;
  for (size_t i = 0; i < kCfCount; ++i) {
    if (name == cf_name(static_cast<Cf>(i))) return true;
  }
  return false;
}

// Refuses a RocksDB whose column families are not tarde's, unless it holds no
// data at all in the ones it has (a store whose creation was cut short). The
// names come from the MANIFEST alone; only an unexpected set is opened.
OpenedStore examine_column_families(const std::string& dir) {
  auto names = RocksKv::list_column_families(dir);
  if (!names.is_ok()) return unreadable_store(dir, names.status().message());
  std::vector<RocksKv::ColumnFamilyInfo> listed;
  for (const std::string& name : names.value()) listed.push_back({name, false});
  if (has_tarde_column_families(listed)) return OpenedStore{};
  auto families = RocksKv::read_column_families(dir);
  if (!families.is_ok()) return unreadable_store(dir, families.status().message());
  bool foreign = false;
  bool any_data = false;
  for (const auto& family : families.value()) {
    foreign = foreign || !is_tarde_column_family(family.name);
    any_data = any_data || family.has_keys;
  }
  if (foreign || any_data) {
    return refused(OpenProblem::kForeign, "data directory " + dir +
                                              " is a RocksDB store but not a tarde one (column "
                                              "families: " +
                                              column_family_names(families.value()) +
                                              "); point --data at a tarde data directory");
  }
  return OpenedStore{};
}

// Reads the format record through a read-only open of the meta column family
// alone. The first read replays the WAL strictly; when only that fails, the
// WAL ends with a record cut short (a write interrupted by a crash, never
// acknowledged): the tolerant replay that serving uses drops it, and
// *warning says so. A store without the record is examined whole, through a
// read-only open of every column family: only an empty one is tarde's.
OpenedStore examine_format(const std::string& dir, std::string* warning) {
  auto record = RocksKv::read_one(dir, Cf::kMeta, kMetaFormatKey, /*strict_wal=*/true);
  if (!record.is_ok()) {
    const std::string strict_message = record.status().message();
    record = RocksKv::read_one(dir, Cf::kMeta, kMetaFormatKey, /*strict_wal=*/false);
    if (record.is_ok()) {
      *warning = "the WAL of " + dir +
                 " ends with a record cut short, which was dropped: a write interrupted by a "
                 "crash before it was acknowledged (RocksDB says: " +
                 strict_message + ")";
    }
  }
  if (!record.is_ok()) return unreadable_store(dir, record.status().message());
  Result<Store::FormatCheck> check = Store::FormatCheck{};
  if (record->has_value()) {
    check = Store::format_of(record->value());
  } else {
    RocksKv::Options read_only;
    read_only.read_only = true;
    read_only.create_if_missing = false;
    auto kv = RocksKv::open(dir, read_only);
    if (!kv.is_ok()) return unreadable_store(dir, kv.status().message());
    check = Store(*kv.value()).check_format();
    if (!check.is_ok()) return unreadable_store(dir, check.status().message());
  }
  switch (check->format) {
    case Store::Format::kCurrent:
    case Store::Format::kOlder:  // upgraded once open (Store::ensure_format)
    case Store::Format::kEmpty:
      return OpenedStore{};
    case Store::Format::kNewer:
      return refused(OpenProblem::kNewerFormat, "data directory " + dir + ": " + check->detail +
                                                    "; run a tarde release that reads it");
    case Store::Format::kNotTarde:
      return refused(OpenProblem::kForeign, "data directory " + dir + ": " + check->detail +
                                                "; point --data at a tarde data directory");
    case Store::Format::kBadRecord:
      return refused(OpenProblem::kDamaged, "data directory " + dir + ": " + check->detail +
                                                "; restore it from a backup or move it away");
  }
  return OpenedStore{};
}

}  // namespace

bool has_tarde_column_families(const std::vector<RocksKv::ColumnFamilyInfo>& families) {
  // A store of format version 1 has every family but `state`, which the
  // writable open adds before the upgrade fills it.
  const bool without_state = std::none_of(
      families.begin(), families.end(),
      [](const RocksKv::ColumnFamilyInfo& f) { return f.name == cf_name(Cf::kState); });
  if (families.size() != kCfCount + 1 - (without_state ? 1 : 0)) return false;
  return std::all_of(families.begin(), families.end(), [](const RocksKv::ColumnFamilyInfo& f) {
    return is_tarde_column_family(f.name);
  });
}

std::string column_family_names(const std::vector<RocksKv::ColumnFamilyInfo>& families) {
  std::string names;
  for (const auto& family : families) names += (names.empty() ? "" : ", ") + family.name;
  return names;
}

OpenedStore open_for_serving(const std::string& dir, const RocksKv::Options& options) {
  std::string warning;
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0 && errno != ENOENT) {
    return refused(OpenProblem::kUnreadable, "data directory " + dir +
                                                 " cannot be used: " + std::strerror(errno) +
                                                 "; point --data at a directory");
  }
  if (::stat(dir.c_str(), &info) == 0) {
    if (!S_ISDIR(info.st_mode)) {
      return refused(OpenProblem::kUnreadable,
                     "data directory " + dir + " is not a directory; point --data at a directory");
    }
    const std::string current = dir + "/CURRENT";
    if (::access(dir.c_str(), R_OK | W_OK | X_OK) != 0) {
      return refused(OpenProblem::kUnreadable,
                     "data directory " + dir +
                         " is not readable and writable by this user; fix its permissions");
    }
    OpenedStore examined = ::stat(current.c_str(), &info) == 0 ? examine_column_families(dir)
                                                               : examine_without_current(dir);
    const bool existing = ::stat(current.c_str(), &info) == 0;
    if (examined.problem == OpenProblem::kNone && existing) {
      examined = examine_format(dir, &warning);
    }
    if (examined.problem != OpenProblem::kNone) return examined;
  }
  auto kv = RocksKv::open(dir, options);
  if (!kv.is_ok()) {
    if (kv.status().code() == Status::Code::kBusy) {
      return refused(OpenProblem::kLocked,
                     kv.status().message() + "; stop the other tarde or point --data elsewhere");
    }
    return refused(OpenProblem::kDamaged, "cannot open data directory " + dir + ": " +
                                              kv.status().message() +
                                              "; restore it from a backup or move it away");
  }
  return OpenedStore{std::move(kv).value(), OpenProblem::kNone, Status::ok(), warning};
}

}  // namespace tarde::storage
