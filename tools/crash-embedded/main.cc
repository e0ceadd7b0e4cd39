// tarde-crash-embedded: the embedding program `tarde-crash --embedded` kills.
// It opens a data directory with the embedded engine (tarde/embedded.h) and
// runs tarde-crash's workload in-process on --clients threads, journaling
// every call (journal.h), until it is killed with SIGKILL. The harness then
// checks the directory with tarde-dump, starts the next life, and at the end
// checks the five guarantees against the journal.
//
//   tarde-crash-embedded DATA_DIR JOURNAL SEED LIFE CLIENTS BUDGET FIRST_CLIENT

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "tarde/embedded.h"
#include "tools/crash-embedded/journal.h"
#include "tools/crash-embedded/worker.h"

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(
        stderr,
        "usage: tarde-crash-embedded DATA_DIR JOURNAL SEED LIFE CLIENTS BUDGET FIRST_CLIENT\n");
    return 2;
  }
  tarde::Options options;
  options.data_dir = argv[1];
  options.retry_lead = std::chrono::milliseconds(10);  // as tarde-crash's server lives
  options.log_level = "warn";
  auto opened = tarde::Tarde::open(options);
  if (!opened.is_ok()) {
    std::fprintf(stderr, "tarde-crash-embedded: open: %s\n", opened.status().to_string().c_str());
    return 3;
  }
  std::unique_ptr<tarde::Tarde> engine = std::move(opened).value();
  tarde::crash_embedded::Journal journal(argv[2]);
  tarde::crash_embedded::Life life{.tarde = *engine, .journal = journal};
  life.seed = std::stoull(argv[3]);
  life.number = std::stoull(argv[4]);
  life.budget = std::stoll(argv[6]);
  life.first_client = std::stoi(argv[7]);
  std::vector<std::thread> threads;
  const int clients = std::stoi(argv[5]);
  for (int i = 0; i < clients; ++i) {
    threads.emplace_back([&life, i] { tarde::crash_embedded::Worker(life, i).run(); });
  }
  std::printf("running\n");
  std::fflush(stdout);
  for (auto& thread : threads) thread.join();  // never: the harness kills us
  return 0;
}
