// BACKUP over the protocol, against the real server: the reply, its errors
// (no --backup-dir, AUTH, busy, a backup directory that cannot be made), the
// io thread serving while a backup runs, and a shutdown in the middle of one.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>

#include "tests/support/raw_client.h"
#include "tests/support/run_tool.h"
#include "tests/support/server_process.h"
#include "tests/support/slowdown.h"
#include "tests/support/temp_dir.h"

namespace tarde::testing {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Incompressible payloads, so that the store's table files are as large as
// what was enqueued and a rate-limited backup takes a known while.
std::string noise(size_t bytes, uint32_t seed) {
  std::mt19937 random(seed);
  std::string text(bytes, '\0');
  for (char& c : text) c = static_cast<char>('!' + random() % 90);
  return text;
}

// The fields of `BACKUP id=1 bytes=... files=... took_ms=...`.
std::map<std::string, std::string> backup_fields(const std::string& line) {
  REQUIRE_MESSAGE(starts_with(line, "BACKUP id="), line);
  return parse_fields(line);
}

// A server whose backups copy `bytes_per_s` and a store of about `bytes`, so
// that one backup takes about bytes / bytes_per_s seconds.
void fill(RawClient& c, size_t bytes) {
  constexpr size_t kPayloadBytes = 100'000;
  for (size_t i = 0; i * kPayloadBytes < bytes; ++i) {
    const std::string id = "big-" + std::to_string(i);
    REQUIRE(starts_with(c.enqueue("q " + id, noise(kPayloadBytes, static_cast<uint32_t>(i))),
                        "CREATED " + id + " "));
  }
}

TEST_CASE("BACKUP answers its id, size, files and time, and numbers backups 1, 2, ...") {
  TempDir backups;
  const std::string dir = backups.sub("nested/backups");
  ServerProcess server({"--backup-dir", dir});
  RawClient c(server.port());
  REQUIRE(starts_with(c.enqueue("q tx-1"), "CREATED tx-1 "));
  const auto first = backup_fields(c.command("BACKUP"));
  CHECK(first.at("id") == "1");
  CHECK(std::stoull(first.at("bytes")) > 0);
  CHECK(std::stoull(first.at("files")) > 0);
  CHECK(first.count("took_ms") == 1);
  CHECK(std::filesystem::is_directory(dir));
  REQUIRE(starts_with(c.enqueue("q tx-2"), "CREATED tx-2 "));
  CHECK(backup_fields(c.command("BACKUP")).at("id") == "2");
  CHECK(starts_with(c.command("BACKUP now"), "ERR BAD_COMMAND "));
  CHECK(c.command("PING") == "PONG");
  CHECK(server.log().find("backup.made id=2 ") != std::string::npos);
  // Nothing is written but the backup directory: the data directory holds
  // no backup files.
  CHECK_FALSE(std::filesystem::exists(server.data_dir() + "/meta"));
  CHECK_FALSE(std::filesystem::exists(server.data_dir() + "/shared_checksum"));
}

TEST_CASE("BACKUP without --backup-dir is ERR NOT_CONFIGURED and the connection stays") {
  ServerProcess server;
  RawClient c(server.port());
  CHECK(c.command("BACKUP") ==
        "ERR NOT_CONFIGURED BACKUP needs a backup directory: start the server with "
        "--backup-dir DIR");
  CHECK(c.command("PING") == "PONG");
}

TEST_CASE("BACKUP needs AUTH when the server has a token") {
  TempDir secrets;
  const std::string token_file = secrets.sub("token");
  std::ofstream(token_file) << "s3cret\n";
  REQUIRE(chmod(token_file.c_str(), 0600) == 0);
  ServerProcess server({"--auth-token-file", token_file, "--backup-dir", secrets.sub("backups")});
  RawClient c(server.port());
  CHECK(starts_with(c.command("BACKUP"), "ERR UNAUTHORIZED "));
  CHECK_FALSE(std::filesystem::exists(secrets.sub("backups")));
  CHECK(c.command("AUTH s3cret") == "OK");
  CHECK(backup_fields(c.command("BACKUP")).at("id") == "1");
}

TEST_CASE("a backup directory that cannot be made is ERR BACKUP_FAILED") {
  TempDir dir;
  std::ofstream(dir.sub("a-file")) << "not a directory";
  ServerProcess server({"--backup-dir", dir.sub("a-file/backups")});
  RawClient c(server.port());
  const std::string reply = c.command("BACKUP");
  CHECK(starts_with(reply, "ERR BACKUP_FAILED no backup was recorded: "));
  CHECK(reply.find("cannot create the backup directory") != std::string::npos);
  CHECK(c.command("PING") == "PONG");
  CHECK(server.log().find("failed") != std::string::npos);
}

TEST_CASE("while a backup runs the server serves, a second BACKUP is BUSY, and the first answers") {
  TempDir dir;
  // About 600 kB at 400 kB/s: the backup runs well over a second.
  ServerProcess server({"--backup-dir", dir.sub("backups"), "--backup-rate-limit", "400000"});
  RawClient loader(server.port());
  fill(loader, 600'000);
  RawClient first(server.port());
  first.send("BACKUP\r\nPING\r\n");  // the PING waits behind the BACKUP's reply
  // The backup has started once the server logged it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server.log().find("backup.started conn=") == std::string::npos) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  RawClient second(server.port());
  const auto asked = std::chrono::steady_clock::now();
  CHECK(second.command("BACKUP") ==
        "ERR BUSY a backup is already running; BACKUP again once it has answered");
  // The io thread is not held by the backup: commands answer at once.
  CHECK(second.command("PING") == "PONG");
  CHECK(starts_with(second.enqueue("q during-backup"), "CREATED during-backup "));
  CHECK(std::chrono::steady_clock::now() - asked < std::chrono::milliseconds(500 * kSlowdown));
  const auto made = backup_fields(first.read_line());
  CHECK(made.at("id") == "1");
  CHECK(std::stoll(made.at("took_ms")) >= 500);
  CHECK(first.read_line() == "PONG");
  CHECK(backup_fields(second.command("BACKUP")).at("id") == "2");
}

TEST_CASE("SIGTERM during a backup: the waiting BACKUP is told, and the server exits 0 promptly") {
  TempDir dir;
  // About 600 kB at 100 kB/s: six seconds unless abandoned.
  ServerProcess server({"--backup-dir", dir.sub("backups"), "--backup-rate-limit", "100000"});
  RawClient loader(server.port());
  fill(loader, 600'000);
  RawClient c(server.port());
  c.send("BACKUP\r\n");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server.log().find("backup.started conn=") == std::string::npos) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto stopping = std::chrono::steady_clock::now();
  server.kill(SIGTERM);
  CHECK(c.read_line() == "ERR SHUTTING_DOWN the server is stopping; the backup was abandoned");
  CHECK(c.is_closed_by_peer());
  const int status = server.wait_exit(std::chrono::seconds(10));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(std::chrono::steady_clock::now() - stopping < std::chrono::seconds(3 * kSlowdown));
  CHECK(server.log().find("abandoning the backup under way") != std::string::npos);
  // No backup was recorded, and the next one (a restart, unlimited) is whole.
  const ToolRun none = run_tool("dump", "backups " + dir.sub("backups"));
  CHECK_MESSAGE(none.status == 0, none.out);
  CHECK(none.out.find("(0 backups in ") != std::string::npos);
  ServerProcess restarted({"--data", server.data_dir(), "--backup-dir", dir.sub("backups")});
  RawClient again(restarted.port());
  CHECK(backup_fields(again.command("BACKUP")).at("id") == "1");
  const ToolRun listed = run_tool("dump", "backups " + dir.sub("backups"));
  CHECK_MESSAGE(listed.status == 0, listed.out);
  CHECK(listed.out.find("(1 backup in ") != std::string::npos);
}

}  // namespace
}  // namespace tarde::testing
