#include "storage/rocks_kv.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <rocksdb/compression_type.h>
#include <rocksdb/convenience.h>
#include <rocksdb/options.h>
#include <rocksdb/sst_file_reader.h>
#include <rocksdb/table_properties.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/temp_dir.h"

namespace tarde::storage {
namespace {

using tarde::testing::TempDir;

std::unique_ptr<RocksKv> open_or_fail(const std::string& dir, const RocksKv::Options& options) {
  Result<std::unique_ptr<RocksKv>> kv = RocksKv::open(dir, options);
  REQUIRE_MESSAGE(kv.is_ok(), kv.status().to_string());
  return std::move(kv).value();
}

RocksKv::Options fast() {
  RocksKv::Options options;
  options.sync = false;
  return options;
}

TEST_CASE("rocks_kv: multi_get answers in the order asked, from the memtable and table files") {
  TempDir dir;
  std::unique_ptr<RocksKv> kv = open_or_fail(dir.path(), fast());
  KvBatch first;
  for (int i = 0; i < 200; i += 2) first.put(Cf::kTx, "k" + std::to_string(1000 + i), "old");
  REQUIRE(kv->write(first).is_ok());
  kv.reset();
  kv = open_or_fail(dir.path(), fast());  // the log's replay leaves them in a table file
  KvBatch second;
  second.put(Cf::kTx, "k1000", "new");  // overwritten in the memtable
  second.put(Cf::kTx, "k1001", "fresh");
  second.del(Cf::kTx, "k1002");
  REQUIRE(kv->write(second).is_ok());

  const std::vector<std::string> keys = {"k1198", "k1001", "k1000", "zzz", "k1002", "k1004"};
  auto values = kv->multi_get(Cf::kTx, keys);
  REQUIRE(values.is_ok());
  const std::vector<std::optional<std::string>> expected = {"old",        "fresh",      "new",
                                                            std::nullopt, std::nullopt, "old"};
  CHECK(values.value() == expected);
  for (size_t i = 0; i < keys.size(); ++i) {
    auto one = kv->get(Cf::kTx, keys[i]);
    REQUIRE(one.is_ok());
    CHECK(one.value() == expected[i]);
  }
  auto none = kv->multi_get(Cf::kTx, {});
  REQUIRE(none.is_ok());
  CHECK(none.value().empty());
}

TEST_CASE("rocks_kv: tx table files hold 16 KB data blocks, compressed with zstd") {
  TempDir dir;
  std::unique_ptr<RocksKv> kv = open_or_fail(dir.path(), fast());
  // Records much alike, as tarde's are: 2,000 of about 200 bytes.
  KvBatch batch;
  for (int i = 0; i < 2000; ++i) {
    batch.put(Cf::kTx, "tx-" + std::to_string(100000 + i),
              "queue=payments state=SUCCEEDED attempt=1 payload=" + std::string(150, 'p') +
                  std::to_string(i));
  }
  REQUIRE(kv->write(batch).is_ok());
  kv.reset();
  kv = open_or_fail(dir.path(), fast());  // the log's replay leaves them in a table file
  kv.reset();

  int tx_files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    if (entry.path().extension() != ".sst") continue;
    rocksdb::Options options;
    rocksdb::SstFileReader reader(options);
    REQUIRE(reader.Open(entry.path().string()).ok());
    const std::shared_ptr<const rocksdb::TableProperties> props = reader.GetTableProperties();
    REQUIRE(props != nullptr);
    if (props->column_family_name != "tx") continue;
    ++tx_files;
    REQUIRE(props->num_data_blocks > 0);
    const uint64_t per_block =
        (props->raw_key_size + props->raw_value_size) / props->num_data_blocks;
    INFO("uncompressed bytes per data block: " << per_block);
    CHECK(per_block > 8192);  // RocksDB's default of 4 KB would give under 4,096
    const std::vector<rocksdb::CompressionType> built_in = rocksdb::GetSupportedCompressions();
    if (std::find(built_in.begin(), built_in.end(), rocksdb::kZSTD) != built_in.end()) {
      CHECK(props->compression_name == "ZSTD");
    }
  }
  CHECK(tx_files == 1);
}

TEST_CASE("rocks_kv: a second open of a dir in the same process fails clearly") {
  TempDir dir;
  std::unique_ptr<RocksKv> first = open_or_fail(dir.path(), fast());
  Result<std::unique_ptr<RocksKv>> second = RocksKv::open(dir.path(), fast());
  REQUIRE_FALSE(second.is_ok());
  CHECK(second.status().code() == Status::Code::kBusy);
  CHECK(second.status().message().find("is locked") != std::string::npos);
  CHECK(second.status().message().find(dir.path()) != std::string::npos);
  // Once the first closes, the dir opens again.
  REQUIRE(first->close().is_ok());
  CHECK(RocksKv::open(dir.path(), fast()).is_ok());
}

TEST_CASE("rocks_kv: a dir locked by another process fails clearly") {
  TempDir dir;
  open_or_fail(dir.path(), fast()).reset();  // creates the store and its LOCK file
  int ready_pipe[2];
  int release_pipe[2];
  REQUIRE(pipe(ready_pipe) == 0);
  REQUIRE(pipe(release_pipe) == 0);
  const std::string lock_path = dir.sub("LOCK");
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The child only takes the same fcntl lock RocksDB takes, then waits.
    const int fd = open(lock_path.c_str(), O_RDWR);
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    const char result = (fd >= 0 && fcntl(fd, F_SETLK, &lock) == 0) ? 'y' : 'n';
    ssize_t ignored = write(ready_pipe[1], &result, 1);
    char byte = 0;
    ignored = read(release_pipe[0], &byte, 1);
    (void)ignored;
    _exit(0);
  }
  char locked = 0;
  REQUIRE(read(ready_pipe[0], &locked, 1) == 1);
  REQUIRE(locked == 'y');
  Result<std::unique_ptr<RocksKv>> kv = RocksKv::open(dir.path(), fast());
  const char release = 'x';
  REQUIRE(write(release_pipe[1], &release, 1) == 1);
  int child_status = 0;
  waitpid(child, &child_status, 0);
  for (int fd : {ready_pipe[0], ready_pipe[1], release_pipe[0], release_pipe[1]}) close(fd);

  REQUIRE_FALSE(kv.is_ok());
  CHECK(kv.status().code() == Status::Code::kBusy);
  CHECK(kv.status().message().find("is locked") != std::string::npos);
  MESSAGE(kv.status().to_string());
  // With the other process gone the dir opens.
  CHECK(RocksKv::open(dir.path(), fast()).is_ok());
}

TEST_CASE("rocks_kv: profile_writes sums each write's parts; off, there is no profile") {
  TempDir dir;
  CHECK(open_or_fail(dir.sub("plain"), fast())->write_profile() == nullptr);
  RocksKv::Options options;  // sync: the fsync is timed too
  options.profile_writes = true;
  std::unique_ptr<RocksKv> kv = open_or_fail(dir.sub("profiled"), options);
  REQUIRE(kv->write_profile() != nullptr);
  for (int i = 0; i < 3; ++i) {
    KvBatch batch;
    batch.put(Cf::kReady, "a" + std::to_string(i), "value");
    batch.put(Cf::kReady, "b" + std::to_string(i), "value");
    REQUIRE(kv->write(batch).is_ok());
  }
  const WriteProfile::Totals t = kv->write_profile()->totals();
  CHECK(t.writes == 3);
  CHECK(t.keys == 6);
  CHECK(t.bytes > 6 * 6);
  CHECK(t.fsync_ns > 0);
  CHECK(t.wal_ns >= t.fsync_ns);  // RocksDB's WAL time holds the sync
  CHECK(t.memtable_ns > 0);
  CHECK(t.cpu_ns > 0);
  CHECK(t.wall_ns >= t.wal_ns + t.memtable_ns);
  // A read on the same thread afterwards is not counted, and counting is off again.
  REQUIRE(kv->get(Cf::kReady, "a0").is_ok());
  CHECK(kv->write_profile()->totals().writes == 3);
}

TEST_CASE("rocks_kv: writes from a second thread while the main thread reads") {
  TempDir dir;
  std::unique_ptr<RocksKv> kv = open_or_fail(dir.path(), fast());
  constexpr int kBatches = 2000;
  std::atomic<bool> write_failed{false};
  std::thread writer([&] {
    for (int i = 0; i < kBatches; ++i) {
      // Each batch puts a pair; a scan must never see half a pair.
      KvBatch batch;
      const std::string n = std::to_string(100000 + i);
      batch.put(Cf::kReady, "a" + n, n);
      batch.put(Cf::kReady, "b" + n, n);
      if (!kv->write(batch).is_ok()) write_failed = true;
    }
  });
  int scans = 0;
  bool torn = false;
  bool read_failed = false;
  for (bool done = false; !done; ++scans) {
    size_t a = 0;
    size_t b = 0;
    Status status = kv->scan(Cf::kReady, {}, {}, [&](std::string_view key, std::string_view) {
      (key[0] == 'a' ? a : b) += 1;
      return true;
    });
    read_failed = read_failed || !status.is_ok();
    torn = torn || a != b;
    done = a == kBatches;
    Result<std::optional<std::string>> first = kv->get(Cf::kReady, "a100000");
    read_failed = read_failed || !first.is_ok();
  }
  writer.join();
  CHECK_FALSE(write_failed);
  CHECK_FALSE(read_failed);
  CHECK_FALSE(torn);
  CHECK(scans >= 1);
}

TEST_CASE("rocks_kv: a secondary instance follows the primary's flushes after try_catch_up") {
  // A secondary reads each WAL file as it was when it first read it (its
  // reserved tail is zeros, which a reader cannot tell from a record still
  // being written: storage/wal_file_system.h), so what the primary wrote
  // later shows once the primary has moved on to a new WAL.
  TempDir dir;
  std::unique_ptr<RocksKv> primary = open_or_fail(dir.sub("db"), fast());
  KvBatch first;
  first.put(Cf::kTx, "before", "1");
  REQUIRE(primary->write(first).is_ok());

  RocksKv::Options secondary_options;
  secondary_options.secondary_path = dir.sub("secondary");
  std::unique_ptr<RocksKv> secondary = open_or_fail(dir.sub("db"), secondary_options);
  CHECK(secondary->get(Cf::kTx, "before").value() == std::optional<std::string>("1"));

  KvBatch second;
  second.put(Cf::kTx, "after", "2");
  REQUIRE(primary->write(second).is_ok());
  REQUIRE(secondary->try_catch_up().is_ok());
  // A reopened primary replays its WAL into table files and starts a new WAL.
  REQUIRE(primary->close().is_ok());
  primary = open_or_fail(dir.sub("db"), fast());
  REQUIRE(secondary->try_catch_up().is_ok());
  CHECK(secondary->get(Cf::kTx, "before").value() == std::optional<std::string>("1"));
  CHECK(secondary->get(Cf::kTx, "after").value() == std::optional<std::string>("2"));

  // A secondary refuses writes, and only a secondary catches up.
  CHECK(secondary->write(second).code() == Status::Code::kInvalidArgument);
  CHECK(primary->try_catch_up().code() == Status::Code::kInvalidArgument);
}

TEST_CASE("rocks_kv: a batch applies in its order: the last op of a key decides it") {
  TempDir dir;
  std::unique_ptr<RocksKv> kv = open_or_fail(dir.path(), fast());
  // Keys out of order, across families, each rewritten.
  KvBatch batch;
  batch.put(Cf::kTx, "z", "z1");
  batch.put(Cf::kState, "m", "m1");
  batch.put(Cf::kTx, "a", "a1");
  batch.del(Cf::kTx, "z");
  batch.put(Cf::kState, "b", "b1");
  batch.put(Cf::kTx, "z", "z2");
  batch.del(Cf::kState, "m");
  batch.put(Cf::kTx, "a", "a2");
  batch.put(Cf::kState, "b", "b2");
  batch.del(Cf::kState, "b");
  REQUIRE(kv->write(batch).is_ok());
  auto value = [&](Cf cf, std::string_view key) {
    Result<std::optional<std::string>> got = kv->get(cf, key);
    REQUIRE(got.is_ok());
    return got.value().value_or("<none>");
  };
  CHECK(value(Cf::kTx, "z") == "z2");
  CHECK(value(Cf::kTx, "a") == "a2");
  CHECK(value(Cf::kState, "m") == "<none>");
  CHECK(value(Cf::kState, "b") == "<none>");
}

TEST_CASE("rocks_kv: read-only open, missing dir, and scan bounds") {
  TempDir dir;
  RocksKv::Options no_create = fast();
  no_create.create_if_missing = false;
  Result<std::unique_ptr<RocksKv>> missing = RocksKv::open(dir.sub("absent"), no_create);
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().code() == Status::Code::kIoError);

  {
    std::unique_ptr<RocksKv> kv = open_or_fail(dir.path(), fast());
    KvBatch batch;
    for (std::string key : {"a", "b", "c", "d"}) batch.put(Cf::kDue, key, key);
    batch.del(Cf::kDue, "c");
    REQUIRE(kv->write(batch).is_ok());
  }
  RocksKv::Options read_only = fast();
  read_only.read_only = true;
  std::unique_ptr<RocksKv> kv = open_or_fail(dir.path(), read_only);
  std::string seen;
  REQUIRE(kv->scan(Cf::kDue, "b", "d", [&seen](std::string_view key, std::string_view) {
              seen += key;
              return true;
            }).is_ok());
  CHECK(seen == "b");
  seen.clear();
  REQUIRE(kv->scan(Cf::kDue, "", "", [&seen](std::string_view key, std::string_view value) {
              seen += std::string(key) + std::string(value);
              return key < "b";
            }).is_ok());
  CHECK(seen == "aabb");
  KvBatch batch;
  batch.put(Cf::kDue, "e", "e");
  CHECK(kv->write(batch).code() == Status::Code::kInvalidArgument);
  CHECK(kv->close().is_ok());
  CHECK(kv->close().is_ok());  // idempotent
}

// The nice values of this process's threads named `name`, from procfs.
std::vector<int> nice_of_threads(const std::string& name) {
  std::vector<int> nices;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string thread_name;
    std::getline(comm, thread_name);
    if (thread_name != name) continue;
    std::ifstream stat_file(task.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
    // The fields after the name start at the third; the nice value is the 19th.
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::string field;
    for (int index = 3; index <= 19; ++index) fields >> field;
    nices.push_back(std::stoi(field));
  }
  return nices;
}

TEST_CASE("rocks_kv: background_yields runs RocksDB's flushes at the lowest CPU priority") {
  // RocksDB's thread pools belong to the process: this is the one test that
  // asks for it, and a pool thread lowers itself before its next job.
  TempDir dir;
  RocksKv::Options options = fast();
  options.background_yields = true;
  std::unique_ptr<RocksKv> kv = open_or_fail(dir.path(), options);
  // More than a memtable holds: a flush runs on the pool's thread.
  const std::string value(1024, 'v');
  for (int round = 0; round < 6; ++round) {
    KvBatch batch;
    for (int i = 0; i < 1024; ++i) batch.put(Cf::kTx, std::to_string(round * 1024 + i), value);
    REQUIRE(kv->write(batch).is_ok());
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::vector<int> nices = nice_of_threads("rocksdb:high");
  while ((nices.empty() || nices.front() != 19) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    nices = nice_of_threads("rocksdb:high");
  }
  REQUIRE_FALSE(nices.empty());
  CHECK(nices.front() == 19);
}

}  // namespace
}  // namespace tarde::storage
