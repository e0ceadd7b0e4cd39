// The embedded engine (tarde/embedded.h) on a real data directory: every
// call, leases and their holders, waits, the dispatcher, group commit across
// caller threads, an application's io_context, and the shared format.

#include "tarde/embedded.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <asio.hpp>
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tests/support/temp_dir.h"

using namespace std::chrono_literals;

namespace {

std::unique_ptr<tarde::Tarde> open_at(const std::string& dir, asio::io_context* io = nullptr) {
  tarde::Options options;
  options.data_dir = dir;
  options.io_context = io;
  options.log_level = "off";
  auto opened = tarde::Tarde::open(options);
  REQUIRE_MESSAGE(opened.is_ok(), opened.status().to_string());
  return std::move(opened).value();
}

tarde::EnqueueOptions soon() {
  tarde::EnqueueOptions options;
  options.base = 50ms;
  options.jitter = 0.0;
  return options;
}

uint64_t stat(tarde::Tarde& t, const std::string& name) {
  auto stats = t.stats();
  REQUIRE(stats.is_ok());
  for (const auto& [key, value] : stats.value()) {
    if (key == name) return std::stoull(value);
  }
  FAIL("no figure " << name);
  return 0;
}

}  // namespace

TEST_SUITE("embedded") {
  TEST_CASE("a lifecycle through the pull-style calls") {
    tarde::testing::TempDir dir;
    auto t = open_at(dir.sub("data"));
    auto created = t->enqueue("pay", "TX-1", "hello", soon());
    REQUIRE(created.is_ok());
    CHECK(created->outcome == tarde::Outcome::kCreated);
    CHECK(created->state == tarde::TxState::kSending);
    CHECK(t->enqueue("pay", "TX-1", "hello", soon())->outcome == tarde::Outcome::kExists);

    auto got = t->reserve("pay");
    REQUIRE(got.is_ok());
    REQUIRE(got.value().has_value());
    CHECK(got.value()->key == "TX-1#1");
    CHECK(got.value()->payload == "hello");
    CHECK(t->sent("TX-1", 1)->state == tarde::TxState::kInFlight);
    auto scheduled = t->respond("TX-1", 1, tarde::Response::cancelled("busy"));
    REQUIRE(scheduled.is_ok());
    CHECK(scheduled->state == tarde::TxState::kScheduled);
    CHECK(scheduled->next_attempt == 2);

    // The retry fires by itself; a waiting reserve gets it at its instant.
    auto retry = t->reserve("pay", 2s);
    REQUIRE(retry.is_ok());
    REQUIRE(retry.value().has_value());
    CHECK(retry.value()->attempt == 2);
    CHECK(tarde::Tarde::open({.data_dir = dir.sub("data"), .log_level = "off"}).status().code() !=
          tarde::Status::Code::kOk);  // locked by this process
    CHECK(t->respond("TX-1", 2, tarde::Response::success())->state == tarde::TxState::kSucceeded);
    CHECK(t->respond("TX-1", 2, tarde::Response::success())->outcome == tarde::Outcome::kStale);

    auto tx = t->get("TX-1");
    REQUIRE(tx.is_ok());
    CHECK(tx->state == tarde::TxState::kSucceeded);
    CHECK(tx->attempt == 2);
    CHECK(t->get("nope").status().code() == tarde::Status::Code::kNotFound);
    auto events = t->history("TX-1");
    REQUIRE(events.is_ok());
    REQUIRE(events->size() >= 5);
    CHECK(events->front().cause == "ENQUEUE");
    CHECK(events->front().seq == 0);
    CHECK(events->back().to == tarde::TxState::kSucceeded);
    CHECK(events->back().seq == events->size() - 1);  // nothing dropped
    bool fired = false;
    for (const tarde::Event& e : events.value()) {
      CHECK(e.dropped_before == 0);
      if (e.cause != "timer") continue;
      fired = true;  // the retry's fire carries its instant and lateness
      CHECK(e.due_at_ms == scheduled->next_fire_at_ms);
      REQUIRE(e.late_ms.has_value());
      CHECK(*e.late_ms == std::max<int64_t>(0, e.at_ms - e.due_at_ms));
    }
    CHECK(fired);
    CHECK(t->reserve("pay").value() == std::nullopt);
  }

  TEST_CASE("options out of range are refused at open") {
    tarde::testing::TempDir dir;
    auto lead =
        tarde::Tarde::open({.data_dir = dir.sub("data"), .retry_lead = 2000ms, .log_level = "off"});
    CHECK(lead.status().code() == tarde::Status::Code::kInvalidArgument);
    auto every = tarde::Tarde::open(
        {.data_dir = dir.sub("data"), .reconcile_every = -1ms, .log_level = "off"});
    CHECK(every.status().code() == tarde::Status::Code::kInvalidArgument);
    CHECK(every.status().message() == "reconcile_every must not be negative");
    auto off = tarde::Tarde::open(
        {.data_dir = dir.sub("data"), .reconcile_every = 0ms, .log_level = "off"});
    CHECK(off.is_ok());
  }

  TEST_CASE("arguments the protocol refuses are refused") {
    tarde::testing::TempDir dir;
    auto t = open_at(dir.sub("data"));
    CHECK(t->enqueue("pay", "has space", "").status().code() ==
          tarde::Status::Code::kInvalidArgument);
    CHECK(t->enqueue("", "TX", "").status().code() == tarde::Status::Code::kInvalidArgument);
    CHECK(t->respond("TX", 1, tarde::Response::cancelled("two words")).status().code() ==
          tarde::Status::Code::kInvalidArgument);
    CHECK(t->resolve("TX", tarde::TxState::kSending).status().code() ==
          tarde::Status::Code::kInvalidArgument);
    CHECK(t->config("pay", {{"factor", "x"}}).status().code() ==
          tarde::Status::Code::kInvalidArgument);
  }

  TEST_CASE("release, resolve, dead letters, redrive and config") {
    tarde::testing::TempDir dir;
    auto t = open_at(dir.sub("data"));
    auto settings = t->config("pay", {{"max_deliveries", "1"}, {"base", "5s"}});
    REQUIRE(settings.is_ok());
    bool saw = false;
    for (const auto& [name, value] : settings.value()) {
      if (name == "base") saw = value == "5s";
    }
    CHECK(saw);
    REQUIRE(t->enqueue("pay", "TX-D", "p").is_ok());
    auto got = t->reserve("pay");
    REQUIRE(got.value().has_value());
    CHECK(t->release("TX-D", 1, 0ms, "not_mine")->outcome == tarde::Outcome::kBuried);
    auto letters = t->dead_letters("pay");
    REQUIRE(letters.is_ok());
    REQUIRE(letters->size() == 1);
    CHECK(letters->front().tx_id == "TX-D");
    CHECK(t->redrive("pay", "TX-D")->outcome == tarde::Outcome::kOk);
    CHECK(t->dead_letters("pay")->empty());
    // A dead letter may also be settled by hand.
    REQUIRE(t->enqueue("pay", "TX-E", "p").is_ok());
    auto again = t->reserve("pay");
    REQUIRE(again.value().has_value());
    CHECK(again.value()->tx_id == "TX-D");
    auto next = t->reserve("pay");
    REQUIRE(next.value().has_value());
    CHECK(t->release("TX-E", 1)->outcome == tarde::Outcome::kBuried);
    auto failed = t->resolve("TX-E", tarde::TxState::kFailed, "by_hand");
    REQUIRE(failed.is_ok());
    CHECK(failed->state == tarde::TxState::kFailed);
  }

  TEST_CASE("close gives leases back, and the directory opens again") {
    tarde::testing::TempDir dir;
    {
      auto t = open_at(dir.sub("data"));
      REQUIRE(t->enqueue("pay", "TX-L", "p").is_ok());
      REQUIRE(t->reserve("pay").value().has_value());
      t->close();
      CHECK(t->get("TX-L").status().code() == tarde::Status::Code::kShuttingDown);
    }
    auto t = open_at(dir.sub("data"));
    auto events = t->history("TX-L");
    REQUIRE(events.is_ok());
    CHECK(events->back().cause == "lease");
    CHECK(events->back().reason == "DISCONNECTED");
    auto again = t->reserve("pay");
    REQUIRE(again.value().has_value());
    CHECK(again.value()->deliveries == 2);
  }

  TEST_CASE("a dispatcher calls the handler after SENT and answers with its response") {
    tarde::testing::TempDir dir;
    auto t = open_at(dir.sub("data"));
    for (int i = 0; i < 20; ++i) {
      REQUIRE(t->enqueue("pay", "TX-" + std::to_string(i), "p", soon()).is_ok());
    }
    REQUIRE(t->enqueue("pay", "BOOM", "p", soon()).is_ok());
    std::atomic<int> calls{0};
    std::atomic<bool> thrown{false};
    auto d = t->dispatch("pay",
                         [&](const tarde::Request& r) {
                           calls++;
                           if (r.tx_id == "BOOM" && !thrown.exchange(true))
                             throw std::runtime_error("down");
                           return r.attempt == 1 ? tarde::Response::cancelled()
                                                 : tarde::Response::success();
                         },
                         {.concurrency = 4, .wait = 200ms});
    REQUIRE(d.is_ok());
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    auto all_done = [&] {
      for (int i = 0; i < 20; ++i) {
        if (t->get("TX-" + std::to_string(i))->state != tarde::TxState::kSucceeded) return false;
      }
      return t->get("BOOM")->state == tarde::TxState::kSucceeded;
    };
    while (!all_done() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(20ms);
    CHECK(all_done());
    d.value()->stop();
    CHECK(d.value()->handled() >= 41);
    auto events = t->history("BOOM");
    REQUIRE(events.is_ok());
    bool transient = false;
    for (const auto& e : events.value()) {
      if (e.cause == "RESPOND" && e.reason == "std::runtime_error") transient = true;
    }
    CHECK(transient);
  }

  TEST_CASE("a dispatcher outliving its Tarde was stopped by close()") {
    tarde::testing::TempDir dir;
    auto t = open_at(dir.sub("data"));
    REQUIRE(t->enqueue("pay", "TX-O", "p").is_ok());
    auto d = t->dispatch("pay", [](const tarde::Request&) { return tarde::Response::success(); },
                         {.concurrency = 2, .wait = 50ms});
    REQUIRE(d.is_ok());
    t.reset();          // stops the dispatcher, closes the store
    d.value()->stop();  // a no-op now
    CHECK(t == nullptr);
    auto reopened = open_at(dir.sub("data"));
    CHECK(reopened->get("TX-O").is_ok());
  }

  TEST_CASE("callers on many threads share group commits") {
    tarde::testing::TempDir dir;
    auto t = open_at(dir.sub("data"));
    const uint64_t commits_before = stat(*t, "commits");
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int k = 0; k < 16; ++k) {
      threads.emplace_back([&, k] {
        for (int i = 0; i < 50; ++i) {
          if (!t->enqueue("pay", "T" + std::to_string(k) + "-" + std::to_string(i), "p").is_ok()) {
            failures++;
          }
        }
      });
    }
    for (auto& thread : threads) thread.join();
    CHECK(failures == 0);
    const uint64_t commits = stat(*t, "commits") - commits_before;
    MESSAGE("800 enqueues in " << commits << " commits");
    CHECK(commits < 800);
  }

  TEST_CASE("on an application's io_context") {
    tarde::testing::TempDir dir;
    asio::io_context io;
    auto guard = asio::make_work_guard(io);
    std::thread runner([&] { io.run(); });
    {
      auto t = open_at(dir.sub("data"), &io);
      REQUIRE(t->enqueue("pay", "TX-IO", "p", soon()).is_ok());
      auto got = t->reserve("pay", 1s);
      REQUIRE(got.value().has_value());
      // A blocking call from the io thread itself is refused, not a deadlock.
      std::promise<tarde::Status::Code> code;
      asio::post(io, [&] { code.set_value(t->get("TX-IO").status().code()); });
      CHECK(code.get_future().get() == tarde::Status::Code::kBusy);
      CHECK(t->respond("TX-IO", 1, tarde::Response::success())->outcome == tarde::Outcome::kOk);
    }
    guard.reset();
    runner.join();
  }
}
