// Damaged and foreign data directories: `tarde serve` must refuse each with
// one error line naming the problem and what to do, a distinct exit code, no
// crash, and without changing a byte of what it refused. Real binaries, real
// RocksDB directories damaged on disk.
#include <doctest/doctest.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "storage/codec.h"
#include "storage/keys.h"
#include "storage/rocks_kv.h"
#include "storage/store.h"
#include "tests/support/cli_spawn.h"
#include "tests/support/raw_client.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wal_file.h"

namespace tarde::testing {
namespace {

namespace fs = std::filesystem;

// The exit codes of `tarde serve --help`.
constexpr int kExitLocked = 4;
constexpr int kExitNewerFormat = 5;
constexpr int kExitForeign = 6;
constexpr int kExitDamaged = 7;
constexpr int kExitUnreadable = 8;

// Every regular file under dir, by relative path, with its bytes.
std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    files[fs::relative(entry.path(), dir).string()] = bytes.str();
  }
  return files;
}

// `tarde serve` on dir, expected to refuse it; a server that starts anyway is
// stopped after 20 s by timeout(1) and fails the exit code check.
CliRun serve_refused(const std::string& dir) {
  return run_program("/usr/bin/timeout", {"20", std::string(TARDE_BIN_DIR) + "/tarde", "serve",
                                          "--listen", "127.0.0.1:0", "--data", dir});
}

// The one line the refusal logged: exactly one error line, naming `what`.
void check_refusal(const CliRun& run, int exit_code, std::string_view what) {
  const std::string log = run.out + run.err;
  INFO("log: " << log);
  CHECK(run.exit_code == exit_code);
  CHECK(log.find("cannot start: ") != std::string::npos);
  CHECK(log.find(what) != std::string::npos);
  size_t lines = 0;
  for (char c : log) lines += c == '\n' ? 1 : 0;
  CHECK(lines == 1);
}

// A data dir written by the real server: `count` transactions, the server
// killed with SIGKILL so that they are all still in the WAL.
void fill_and_kill(ServerProcess& server, int count) {
  RawClient c(server.port());
  for (int i = 0; i < count; ++i) {
    const std::string id = "tx-" + std::to_string(i);
    REQUIRE(c.enqueue("pagos " + id, std::string(200, 'p')).rfind("CREATED " + id, 0) == 0);
  }
  server.kill(SIGKILL);
  server.wait_exit();
}

std::vector<fs::path> files_ending(const std::string& dir, std::string_view suffix) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(suffix)) found.push_back(entry.path());
  }
  return found;
}

// The WAL's bytes up to the end of its last record: a WAL that a killed
// server left is longer, its reserved tail reading as zeros.
std::string wal_data(const fs::path& wal) {
  std::string bytes = file_bytes(wal);
  bytes.resize(wal_data_end(bytes));
  return bytes;
}

fs::path only_wal(const std::string& dir) {
  std::vector<fs::path> wals = files_ending(dir, ".log");
  std::erase_if(wals, [](const fs::path& p) { return fs::file_size(p) == 0; });
  REQUIRE(wals.size() == 1);
  return wals.front();
}

TEST_CASE("a data dir of a newer format version is refused, exit 5, left as it was") {
  TempDir dir;
  const std::string data = dir.sub("data");
  {
    auto kv = storage::RocksKv::open(data, storage::RocksKv::Options{});
    REQUIRE(kv.is_ok());
    storage::KvBatch batch;
    batch.put(storage::Cf::kMeta, std::string(storage::kMetaFormatKey),
              storage::encode_format_version(storage::kFormatVersion + 1));
    REQUIRE(kv.value()->write(batch).is_ok());
    REQUIRE(kv.value()->close().is_ok());
  }
  const auto before = snapshot(data);
  check_refusal(serve_refused(data), kExitNewerFormat, "is newer than this build's");
  CHECK(snapshot(data) == before);
}

TEST_CASE("a RocksDB that is not a tarde store is refused, exit 6, nothing created in it") {
  TempDir dir;
  const std::string data = dir.sub("data");
  {
    rocksdb::Options options;
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    std::vector<rocksdb::ColumnFamilyDescriptor> families = {
        {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
        {"users", rocksdb::ColumnFamilyOptions()}};
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    REQUIRE(rocksdb::DB::Open(options, data, families, &handles, &db).ok());
    REQUIRE(db->Put(rocksdb::WriteOptions(), handles[0], "config", "x").ok());
    REQUIRE(db->Put(rocksdb::WriteOptions(), handles[1], "alice", "y").ok());
    for (auto* handle : handles) REQUIRE(db->DestroyColumnFamilyHandle(handle).ok());
    delete db;
  }
  const auto before = snapshot(data);
  check_refusal(serve_refused(data), kExitForeign, "column families: default, users");
  CHECK(snapshot(data) == before);

  SUBCASE("tarde-dump says so and lists its column families") {
    CliRun dump = run_program(std::string(TARDE_BIN_DIR) + "/tarde-dump", {data, "summary"});
    INFO(dump.out << dump.err);
    CHECK(dump.exit_code == 3);
    CHECK(dump.err.find("not a tarde store") != std::string::npos);
    CHECK(dump.err.find("default, users") != std::string::npos);
    CHECK(snapshot(data) == before);
  }
}

TEST_CASE("a RocksDB with only the default column family holding data is refused, exit 6") {
  TempDir dir;
  const std::string data = dir.sub("data");
  {
    rocksdb::Options options;
    options.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    REQUIRE(rocksdb::DB::Open(options, data, &db).ok());
    REQUIRE(db->Put(rocksdb::WriteOptions(), "k", "v").ok());
    delete db;
  }
  const auto before = snapshot(data);
  check_refusal(serve_refused(data), kExitForeign, "not a tarde one");
  CHECK(snapshot(data) == before);
}

TEST_CASE("a directory of other files is refused, exit 6; a file as --data, exit 8") {
  TempDir dir;
  const std::string data = dir.sub("data");
  fs::create_directory(data);
  std::ofstream(data + "/notes.txt") << "my notes\n";
  const auto before = snapshot(data);
  check_refusal(serve_refused(data), kExitForeign, "not a tarde store");
  CHECK(snapshot(data) == before);

  const std::string file = dir.sub("a-file");
  std::ofstream(file) << "not a directory\n";
  check_refusal(serve_refused(file), kExitUnreadable, "is not a directory");
  check_refusal(serve_refused(file + "/data"), kExitUnreadable, "cannot be used");
}

TEST_CASE("a WAL cut short at its end is a write never acknowledged: the server starts") {
  ServerProcess server;
  fill_and_kill(server, 20);
  const fs::path wal = only_wal(server.data_dir());
  fs::resize_file(wal, wal_data(wal).size() - 7);  // a torn last record
  server.restart();
  RawClient c(server.port());
  for (int i = 0; i < 19; ++i) {
    CHECK(c.command("GET tx-" + std::to_string(i)).rfind("TX id=tx-", 0) == 0);
  }
  CHECK(c.command("GET tx-19") == "NOT_FOUND tx-19");
  CHECK(server.log().find("ends with a record cut short, which was dropped") != std::string::npos);
}

TEST_CASE("a WAL whose last record was torn in its reserved blocks is a write never acknowledged") {
  // Power lost during the last commit's fdatasync: the record's first bytes
  // reached the disk, the rest of it still reads as the zeros reserved.
  ServerProcess server;
  fill_and_kill(server, 20);
  const fs::path wal = only_wal(server.data_dir());
  const std::string data = wal_data(wal);
  REQUIRE(fs::file_size(wal) > data.size());  // reserved blocks follow the data
  {
    std::fstream file(wal, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(data.size() - 100));
    file.write(std::string(100, '\0').data(), 100);
  }
  server.restart();
  RawClient c(server.port());
  for (int i = 0; i < 19; ++i) {
    CHECK(c.command("GET tx-" + std::to_string(i)).rfind("TX id=tx-", 0) == 0);
  }
  CHECK(c.command("GET tx-19") == "NOT_FOUND tx-19");
}

TEST_CASE("a WAL damaged in the middle is refused, exit 7, left as it was") {
  ServerProcess server;
  fill_and_kill(server, 40);
  const fs::path wal = only_wal(server.data_dir());
  {
    // Inside the payload of a record near the middle, so that the record's
    // checksum no longer matches. (Damage to a record's length field in the
    // WAL's last 32 KiB block looks like a write cut short to RocksDB: see
    // docs/design.md.)
    std::fstream file(wal, std::ios::in | std::ios::out | std::ios::binary);
    const std::string bytes = wal_data(wal);
    const size_t payload = bytes.find(std::string(200, 'p'), bytes.size() / 2);
    REQUIRE(payload != std::string::npos);
    file.seekp(static_cast<std::streamoff>(payload + 50));
    file.write("\xde\xad\xbe\xef\xde\xad\xbe\xef", 8);
  }
  const auto before = snapshot(server.data_dir());
  check_refusal(serve_refused(server.data_dir()), kExitDamaged, "restore it from a backup");
  CHECK(snapshot(server.data_dir()) == before);

  SUBCASE("tarde-dump reads what comes before the damage and says what is wrong") {
    CliRun dump =
        run_program(std::string(TARDE_BIN_DIR) + "/tarde-dump", {server.data_dir(), "list"});
    INFO(dump.out << dump.err);
    CHECK(dump.err.find("damaged") != std::string::npos);
    CHECK(dump.out.find("tx-0 ") != std::string::npos);
    CHECK(dump.out.find("tx-39 ") == std::string::npos);
    CHECK(snapshot(server.data_dir()) == before);
  }
}

TEST_CASE("missing SST, MANIFEST or CURRENT files are refused, exit 7, left as they were") {
  ServerProcess server;
  fill_and_kill(server, 10);
  server.restart();  // replays the WAL into a table file
  server.kill(SIGTERM);
  REQUIRE(WEXITSTATUS(server.wait_exit()) == 0);
  const std::string data = server.data_dir();
  REQUIRE(!files_ending(data, ".sst").empty());

  std::string missing;
  std::string what;
  SUBCASE("sst") {
    // Every table file in turn, whichever column family it belongs to: the
    // format check before the writable open reads the meta family alone.
    const std::vector<fs::path> tables = files_ending(data, ".sst");
    REQUIRE(tables.size() > 1);
    for (size_t i = 1; i < tables.size(); ++i) {
      CAPTURE(tables[i].filename().string());
      TempDir copy;
      fs::copy(data, copy.path(), fs::copy_options::recursive);
      REQUIRE(fs::remove(copy.path() + "/" + tables[i].filename().string()));
      const auto before = snapshot(copy.path());
      check_refusal(serve_refused(copy.path()), kExitDamaged, "No such file");
      CHECK(snapshot(copy.path()) == before);
    }
    missing = tables.front().string();
    what = "No such file";
  }
  SUBCASE("manifest") {
    for (const auto& entry : fs::directory_iterator(data)) {
      if (entry.path().filename().string().rfind("MANIFEST-", 0) == 0) {
        missing = entry.path().string();
      }
    }
    what = "MANIFEST";
  }
  SUBCASE("current") {
    missing = data + "/CURRENT";
    what = "no CURRENT file";
  }
  REQUIRE(fs::remove(missing));
  const auto before = snapshot(data);
  check_refusal(serve_refused(data), kExitDamaged, what);
  CHECK(snapshot(data) == before);
}

TEST_CASE("a data dir in use by another server is refused, exit 4") {
  ServerProcess server;
  check_refusal(serve_refused(server.data_dir()), kExitLocked, "stop the other tarde");
  RawClient c(server.port());
  CHECK(c.command("PING") == "PONG");
}

TEST_CASE("tarde serve --help lists the exit codes") {
  CliRun help = run_program(std::string(TARDE_BIN_DIR) + "/tarde", {"serve", "--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("Exit codes of serve") != std::string::npos);
  CHECK(help.out.find("7  the data directory is damaged") != std::string::npos);
}

}  // namespace
}  // namespace tarde::testing
