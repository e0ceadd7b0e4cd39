// tarde-bench against the real server: every workload runs its checks (no
// lost, duplicated or unfinished job) and prints its RESULT lines, and the
// report renders them. Short runs: this tests the generator, not speed.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "tests/support/run_tool.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

using namespace tarde;

namespace {

using testing::ToolRun;

ToolRun bench(const std::string& args) { return testing::run_tool("bench", args); }

std::string target(const testing::ServerProcess& server) {
  return " --system tarde --port " + std::to_string(server.port()) + " --server-pid " +
         std::to_string(server.pid()) + " --data-dir " + server.data_dir();
}

bool has(const ToolRun& ran, const std::string& text) {
  return ran.out.find(text) != std::string::npos;
}

}  // namespace

TEST_CASE("tarde-bench workloads check every job and print their figures") {
  testing::ServerProcess server;
  std::string results;

  const ToolRun w1 = bench("w1 --connections 4 --seconds 1" + target(server));
  INFO(w1.out);
  CHECK(w1.status == 0);
  CHECK(has(w1, "0 jobs not as expected"));
  CHECK(has(w1, "\tcycles_per_s\t"));
  results += w1.out;

  const ToolRun old_usage =
      bench("cycle --connections 2 --seconds 1 --port " + std::to_string(server.port()));
  INFO(old_usage.out);
  CHECK(old_usage.status == 0);
  CHECK(has(old_usage, "\tcycles_per_s\t"));

  const ToolRun w2 =
      bench("w2 --rate 100 --connections 4 --seconds 1.5 --delay-ms 300" + target(server));
  INFO(w2.out);
  CHECK(w2.status == 0);
  CHECK(has(w2, "0 jobs not as expected"));
  CHECK(has(w2, "\tlateness_p99\t"));
  CHECK(has(w2, "\tcpu_ms_per_1000_retries\t"));

  const ToolRun w3 = bench("w3 --count 300 --connections 8 --queue burst" + target(server));
  INFO(w3.out);
  CHECK(w3.status == 0);
  CHECK(has(w3, "\tdrain_s\t"));
  CHECK(has(w3, "\trss_peak_mb\t"));

  const ToolRun w5 = bench(
      "w5 --count 100 --connections 4 --seconds 1 --sample-s 0.5 --delay-ms 100 "
      "--queue churn" +
      target(server));
  INFO(w5.out);
  CHECK(w5.status == 0);
  CHECK(has(w5, "\tdisk_end_mb\t"));

  testing::TempDir dir;
  const std::string file = dir.path() + "/results.tsv";
  std::ofstream(file) << results;
  const ToolRun report = bench("report " + file);
  CHECK(report.status == 0);
  CHECK(has(report, "### w1, 4 connections"));
  CHECK(has(report, "| cycles_per_s | 1/s |"));
}

TEST_CASE("tarde-bench report takes medians over rounds, and each ratio within its round") {
  // Round 2 is slow for both systems (a busy machine): their ratio in that
  // round is still 2, and the median ratio ignores the round's absolute level.
  const std::string results =
      "RESULT\tw1\ttarde\t16\tserver_cpu_us_per_cycle\t40\tus\t1\n"
      "RESULT\tw1\tredis-always\t16\tserver_cpu_us_per_cycle\t20\tus\t1\n"
      "RESULT\tw1\tredis-always\t16\tserver_cpu_us_per_cycle\t100\tus\t2\n"
      "RESULT\tw1\ttarde\t16\tserver_cpu_us_per_cycle\t200\tus\t2\n"
      "RESULT\tw1\ttarde\t16\tserver_cpu_us_per_cycle\t45\tus\t3\n"
      "RESULT\tw1\tredis-always\t16\tserver_cpu_us_per_cycle\t30\tus\t3\n"
      "RESULT\tw1\tredis-always\t16\tcycles_per_s\t1000\t1/s\t4\n";
  testing::TempDir dir;
  const std::string file = dir.path() + "/results.tsv";
  std::ofstream(file) << results;
  const ToolRun report = bench("report " + file);
  INFO(report.out);
  CHECK(report.status == 0);
  CHECK(has(report, "the median of 4 rounds"));
  // Medians 45 and 30; ratios 2, 2, 1.5: median 2 (not 45 / 30).
  CHECK(has(report, "| server_cpu_us_per_cycle | us | 45.0 | 30.0 (2.00×) |"));
  // A round that measured only the peer gives no ratio.
  CHECK(has(report, "| cycles_per_s | 1/s | - | 1000 |"));
}

TEST_CASE("tarde-bench w4 finds the whole backlog and the overdue probe after kill -9") {
  testing::ServerProcess server;
  const ToolRun load = bench("w4-load --count 200 --connections 4" + target(server));
  INFO(load.out);
  REQUIRE(load.status == 0);
  CHECK(has(load, "\trss_mb\t"));
  server.kill(SIGKILL);
  server.wait_exit();
  std::this_thread::sleep_for(std::chrono::milliseconds(2200));  // the probe comes due
  const auto since = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  server.restart();
  const ToolRun restart =
      bench("w4-restart --count 200 --since-ns " + std::to_string(since) + target(server));
  INFO(restart.out);
  CHECK(restart.status == 0);
  CHECK(has(restart, "\trestart_first_fire_ms\t"));
  CHECK(has(restart, "200 jobs held after the probe"));
}

TEST_CASE("tarde-bench refuses a bad command line with exit status 2 and says why") {
  const ToolRun unknown = bench("w1 --port 7400 --bogus 1");
  CHECK(unknown.status == 2);
  CHECK(has(unknown, "tarde-bench: unknown flag --bogus (see tarde-bench --help)"));
  const ToolRun missing = bench("w1 --port");
  CHECK(missing.status == 2);
  CHECK(has(missing, "tarde-bench: --port needs a value (P)"));
  const ToolRun bad_port = bench("w1 --port=http");
  CHECK(bad_port.status == 2);
  CHECK(has(bad_port, "--port expects a whole number from 1 to 65535, got 'http'"));
  const ToolRun bad_seconds = bench("w1 --port 7400 --seconds ten");
  CHECK(bad_seconds.status == 2);
  CHECK(has(bad_seconds, "--seconds must be a decimal number"));
  const ToolRun bad_system = bench("w1 --port 7400 --system kafka");
  CHECK(bad_system.status == 2);
  CHECK(has(bad_system, "--system expects tarde, beanstalkd, redis or postgres, got 'kafka'"));
  const ToolRun no_port = bench("w1 --connections 2");
  CHECK(no_port.status == 2);
  CHECK(has(no_port, "--port is needed for w1"));
  const ToolRun unknown_workload = bench("w9 --port 7400");
  CHECK(unknown_workload.status == 2);
  CHECK(has(unknown_workload, "unknown workload 'w9'"));
  CHECK(bench("").status == 2);
  CHECK(bench("report").status == 2);

  const ToolRun help = bench("--help");
  CHECK(help.status == 0);
  for (const char* text : {"usage: tarde-bench WORKLOAD", "--connections N", "(default 16)",
                           "--seconds S", "(default 10)", "--delay-ms MS", "--claim-batch N"}) {
    CHECK_MESSAGE(has(help, text), text);
  }
}
