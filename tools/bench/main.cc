// tarde-bench: a closed-loop load generator for a running tarde server.
//
//   tarde-bench cycle --port P [--host H] [--connections N] [--seconds S] [--payload BYTES]
//
// `cycle` runs N connections, each repeating ENQUEUE -> RESERVE -> SENT ->
// RESPOND SUCCESS on its own transactions as fast as replies come back, and
// prints cycles per second and per-command latency percentiles. Each reply
// of a mutating command arrives only after its commit (and fsync with
// --sync=always), so the figures include durability.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "net/client.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string host = "127.0.0.1";
  uint16_t port = 7400;
  int connections = 16;
  int seconds = 10;
  size_t payload_bytes = 128;
};

// Latencies of one command, in microseconds, from every connection.
struct Samples {
  std::vector<int64_t> enqueue, reserve, sent, respond;
};

int64_t micros_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
}

std::string percentile(std::vector<int64_t>& values, double p) {
  if (values.empty()) return "-";
  const size_t index = std::min(values.size() - 1, static_cast<size_t>(p * values.size()));
  std::nth_element(values.begin(), values.begin() + index, values.end());
  char out[32];
  std::snprintf(out, sizeof out, "%.2f", values[index] / 1000.0);
  return out;
}

// One connection's loop; returns its completed cycles.
uint64_t run_connection(const Options& o, int id, Clock::time_point end, Samples* samples,
                        std::atomic<bool>* failed) {
  auto client = tarde::net::Client::connect(o.host, o.port);
  if (!client.is_ok()) {
    std::fprintf(stderr, "connect: %s\n", client.status().to_string().c_str());
    failed->store(true);
    return 0;
  }
  auto& c = *client.value();
  const std::string queue = "bench" + std::to_string(id);
  const std::string payload(o.payload_bytes, 'x');
  const std::string prefix =
      "B" + std::to_string(Clock::now().time_since_epoch().count()) + "-" + std::to_string(id) + "-";
  uint64_t cycles = 0;
  while (Clock::now() < end && !failed->load()) {
    const std::string tx = prefix + std::to_string(cycles);
    auto t = Clock::now();
    auto created = c.enqueue(queue, tx, payload);
    samples->enqueue.push_back(micros_since(t));
    t = Clock::now();
    auto got = c.reserve(queue);
    samples->reserve.push_back(micros_since(t));
    if (!created.is_ok() || !got.is_ok() || !got.value()) {
      std::fprintf(stderr, "cycle failed on %s\n", tx.c_str());
      failed->store(true);
      break;
    }
    t = Clock::now();
    auto sent = c.sent(tx, 1);
    samples->sent.push_back(micros_since(t));
    t = Clock::now();
    auto answered = c.respond(tx, 1, tarde::net::Answer::kSuccess);
    samples->respond.push_back(micros_since(t));
    if (!sent.is_ok() || !answered.is_ok()) {
      failed->store(true);
      break;
    }
    cycles += 1;
  }
  return cycles;
}

int usage() {
  std::fputs(
      "usage: tarde-bench cycle --port P [--host H] [--connections N] [--seconds S] "
      "[--payload BYTES]\n",
      stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] != "cycle") return usage();
  Options o;
  for (size_t i = 1; i + 1 < args.size(); i += 2) {
    const std::string& flag = args[i];
    const std::string& value = args[i + 1];
    if (flag == "--host") o.host = value;
    else if (flag == "--port") o.port = static_cast<uint16_t>(std::atoi(value.c_str()));
    else if (flag == "--connections") o.connections = std::max(1, std::atoi(value.c_str()));
    else if (flag == "--seconds") o.seconds = std::max(1, std::atoi(value.c_str()));
    else if (flag == "--payload") o.payload_bytes = std::strtoull(value.c_str(), nullptr, 10);
    else return usage();
  }
  const auto start = Clock::now();
  const auto end = start + std::chrono::seconds(o.seconds);
  std::vector<Samples> samples(o.connections);
  std::vector<uint64_t> cycles(o.connections);
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < o.connections; ++i) {
    threads.emplace_back([&, i] { cycles[i] = run_connection(o, i, end, &samples[i], &failed); });
  }
  for (auto& t : threads) t.join();
  const double elapsed = micros_since(start) / 1e6;
  uint64_t total = 0;
  Samples all;
  for (int i = 0; i < o.connections; ++i) {
    total += cycles[i];
    for (auto [from, to] : {std::pair{&samples[i].enqueue, &all.enqueue},
                            std::pair{&samples[i].reserve, &all.reserve},
                            std::pair{&samples[i].sent, &all.sent},
                            std::pair{&samples[i].respond, &all.respond}}) {
      to->insert(to->end(), from->begin(), from->end());
    }
  }
  std::printf("cycle: %d connections, %.1f s, %llu cycles, %.0f cycles/s\n", o.connections,
              elapsed, static_cast<unsigned long long>(total), total / elapsed);
  std::printf("%-8s %10s %10s %10s\n", "command", "p50 ms", "p99 ms", "max ms");
  for (auto [name, values] : {std::pair{"ENQUEUE", &all.enqueue}, std::pair{"RESERVE", &all.reserve},
                              std::pair{"SENT", &all.sent}, std::pair{"RESPOND", &all.respond}}) {
    std::printf("%-8s %10s %10s %10s\n", name, percentile(*values, 0.50).c_str(),
                percentile(*values, 0.99).c_str(), percentile(*values, 1.0).c_str());
  }
  return failed.load() ? 1 : 0;
}
