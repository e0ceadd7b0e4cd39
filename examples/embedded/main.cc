// Embeds tarde: opens a data directory in-process, enqueues a few
// transactions with a short backoff, and dispatches them with a callback
// that answers CANCELLED to each first attempt and SUCCESS to the retry.
// Prints every history, exits 0 once all succeeded (1 on any error).
//
//   tarde-embedded-example [DATA_DIR]      (default ./tarde-example-data)

#include <tarde/embedded.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

namespace {

int fail(const char* what, const tarde::Status& status) {
  std::fprintf(stderr, "%s: %s\n", what, status.to_string().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  tarde::Options options;
  options.data_dir = argc > 1 ? argv[1] : "./tarde-example-data";
  auto opened = tarde::Tarde::open(options);
  if (!opened.is_ok()) return fail("open", opened.status());
  std::unique_ptr<tarde::Tarde> engine = std::move(opened).value();

  // Retries 200 ms after a CANCELLED, without jitter.
  tarde::EnqueueOptions retry_soon;
  retry_soon.base = 200ms;
  retry_soon.jitter = 0.0;
  const std::vector<std::string> ids = {"TX-1", "TX-2", "TX-3"};
  for (const std::string& id : ids) {
    auto created = engine->enqueue("payments", id, R"({"amount":100})", retry_soon);
    if (!created.is_ok()) return fail("enqueue", created.status());
    std::printf("%s %s\n", tarde::outcome_name(created->outcome), id.c_str());
  }

  // The external service: "not now" to every first attempt, then "done".
  auto dispatcher =
      engine->dispatch("payments",
                       [](const tarde::Request& request) {
                         std::printf("calling the service with key %s\n", request.key.c_str());
                         return request.attempt == 1 ? tarde::Response::cancelled("not_now")
                                                     : tarde::Response::success();
                       },
                       {.concurrency = 2});
  if (!dispatcher.is_ok()) return fail("dispatch", dispatcher.status());

  const auto deadline = std::chrono::steady_clock::now() + 20s;
  for (const std::string& id : ids) {
    for (;;) {
      auto tx = engine->get(id);
      if (!tx.is_ok()) return fail("get", tx.status());
      if (tx->state == tarde::TxState::kSucceeded) break;
      if (std::chrono::steady_clock::now() > deadline) {
        std::fprintf(stderr, "%s is still %s\n", id.c_str(), tarde::state_name(tx->state));
        return 1;
      }
      std::this_thread::sleep_for(20ms);
    }
  }
  dispatcher.value()->stop();

  for (const std::string& id : ids) {
    auto events = engine->history(id);
    if (!events.is_ok()) return fail("history", events.status());
    std::printf("%s:\n", id.c_str());
    for (const tarde::Event& e : events.value()) {
      std::printf("  %-10s -> %-10s attempt %u next %u  %s %s\n", tarde::state_name(e.from),
                  tarde::state_name(e.to), e.attempt, e.next_attempt, e.cause.c_str(),
                  e.reason.empty() ? "-" : e.reason.c_str());
    }
  }
  engine->close();
  std::printf("all %zu transactions succeeded\n", ids.size());
  return 0;
}
