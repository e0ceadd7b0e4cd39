#pragma once

// tarde as a library: durable deferred retries inside your process, on a
// data directory of your own, with the guarantees of `tarde serve` and no
// server to run. The directory has the server's format: `tarde serve --data
// DIR` can serve it later and `tarde-dump DIR check` reads it (never while
// this process has it open for writing; tarde-dump may read it meanwhile).
//
//   auto opened = tarde::Tarde::open({.data_dir = "./retries"});
//   if (!opened.is_ok()) { /* opened.status().to_string() */ }
//   std::unique_ptr<tarde::Tarde> engine = std::move(opened).value();
//   engine->enqueue("payments", "TX-1", R"({"amount":100})");
//   auto dispatcher = engine->dispatch("payments", [](const tarde::Request& r) {
//     return call_the_service(r.key, r.payload) ? tarde::Response::success()
//                                               : tarde::Response::cancelled();
//   });
//
// Errors: every call returns a Status or a Result (tarde/base/status.h);
// nothing throws. invalid_argument for arguments the protocol refuses (its
// message is the protocol's BAD_ARGUMENT text), io_error when the store
// refused the write (nothing was acknowledged: get() tells whether it
// happened), shutting_down after close(), busy for a blocking call made on
// the engine's own io thread (it would wait for itself).
//
// Durability: a call that changes something returns once the change is on
// disk (fsynced unless Options::sync is false). Calls made at the same time
// from many threads share group commits, exactly as connections to the
// server do. One exception, as for the server: reserve() hands out a retry
// whose timer just fired without waiting for the commit of its move to
// SENDING. The retry's timer stays on disk until that commit, so a crash
// before it only means the retry fires, and is handed out, again.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tarde/types.h"

namespace asio {
class io_context;  // standalone Asio's; only a pointer is taken
}

namespace tarde {

// How to open a data directory.
struct Options {
  std::string data_dir = "./tarde-data";
  bool sync = true;  // fsync every group commit (false: --sync=none)
  // How long before its instant a retry is moved to SENDING (--retry-lead).
  std::chrono::milliseconds retry_lead{10};
  // The periodic reconciler (--reconcile-every): a pass this long after the
  // previous one ended repairs lost timers and requests and logs an alert
  // for each transaction stuck longer than its queue's stuck_after. 0: off.
  std::chrono::milliseconds reconcile_every{60'000};
  // Null: the engine runs its own io thread. Otherwise the engine runs on
  // this io_context, which the application must run on exactly one thread
  // (the engine takes no locks), keep running until the Tarde is closed,
  // and outlive it. open() and close() block until that thread ran them.
  asio::io_context* io_context = nullptr;
  // spdlog level for tarde's log lines ("trace" .. "off"); empty: leave the
  // default logger as it is. spdlog's default logger is process-wide.
  std::string log_level = "warn";
};

// What dispatch() runs.
struct DispatchOptions {
  unsigned concurrency = 1;  // worker threads, each with its own leases
  // How long one RESERVE waits before the worker looks at stop() again; a
  // stop() cuts the wait short anyway.
  std::chrono::milliseconds wait{1000};
};

// Called on a dispatcher worker thread for each request, after SENT was
// acknowledged; its Response is RESPONDed. An exception is answered
// TRANSIENT with its class name as the reason.
using Handler = std::function<Response(const Request& request)>;

// A running dispatch loop (Tarde::dispatch). stop() and the destructor end
// it gracefully: the workers stop reserving, finish the handler calls under
// way, answer them, and return. Thread-safe; the destructor must not run on
// a worker thread (inside the handler).
class Dispatcher {
 public:
  virtual ~Dispatcher() = default;
  // Graceful stop, blocking until every worker returned. Idempotent.
  virtual void stop() = 0;
  // Requests the handler was called for, and how many answers the engine
  // refused (a storage error, or a late answer after the lease expired).
  virtual uint64_t handled() const = 0;
  virtual uint64_t errors() const = 0;
};

// Tarde is one open data directory. Thread-safe: any number of threads may
// call it at once; each call runs on the engine's io thread and blocks until
// its reply (and the commit it depends on) is ready. Calls must not be made
// from that io thread itself (with Options::io_context, from handlers the
// application runs on it): they answer busy instead of deadlocking.
//
// Leases: the requests reserve() hands out are leased to this Tarde (as to
// one connection of the server); release() gives one back, and close() gives
// back every one still held (recorded as a failed delivery, DISCONNECTED).
// Each dispatcher worker holds its own leases the same way.
//
// Destroying the Tarde closes it (see close()). One process may open a data
// directory once: a second open answers that it is locked.
class Tarde {
 public:
  // Opens (or creates) the data directory and starts the engine: recovery,
  // timers, the background invariant sweep. The error says what is wrong
  // with a refused directory (locked, newer format, not a tarde store,
  // damaged), as `tarde serve`'s exit codes do.
  static Result<std::unique_ptr<Tarde>> open(Options options);

  virtual ~Tarde() = default;

  // ENQUEUE: creates a transaction; its first request is queued (after
  // EnqueueOptions::delay). kExists for a tx_id already there.
  virtual Result<Summary> enqueue(std::string_view queue, std::string_view tx_id,
                                  std::string_view payload, const EnqueueOptions& options = {}) = 0;
  // RESERVE: the queue's next request, waiting up to `wait` for one; nullopt
  // when none came.
  virtual Result<std::optional<Request>> reserve(
      std::string_view queue, std::chrono::milliseconds wait = std::chrono::milliseconds(0)) = 0;
  // SENT: the request of `attempt` went out to the external service.
  virtual Result<Summary> sent(std::string_view tx_id, uint32_t attempt) = 0;
  // RELEASE: gives a leased request back, ready again after `delay`.
  virtual Result<Summary> release(std::string_view tx_id, uint32_t attempt,
                                  std::chrono::milliseconds delay = std::chrono::milliseconds(0),
                                  std::string_view reason = {}) = 0;
  // RESPOND: what the external service answered for `attempt`.
  virtual Result<Summary> respond(std::string_view tx_id, uint32_t attempt,
                                  const Response& response) = 0;
  // RESOLVE: ends a transaction by hand, kSucceeded or kFailed.
  virtual Result<Summary> resolve(std::string_view tx_id, TxState terminal,
                                  std::string_view reason = {}) = 0;
  // REDRIVE: puts a dead letter of `queue` back in the ready queue.
  virtual Result<Summary> redrive(std::string_view queue, std::string_view tx_id) = 0;
  // GET: not_found when there is no such transaction.
  virtual Result<Transaction> get(std::string_view tx_id) = 0;
  // HISTORY: the newest `limit` events (0: all kept), oldest first;
  // not_found when there is no such transaction.
  virtual Result<std::vector<Event>> history(std::string_view tx_id, size_t limit = 0) = 0;
  // DEADLETTERS: at most `limit` letters of the queue.
  virtual Result<std::vector<Letter>> dead_letters(std::string_view queue, size_t limit = 1000) = 0;
  // CONFIG: sets the given settings (PROTOCOL.md's names and values, e.g.
  // {"base", "5s"}; none: only reads) and returns every setting.
  virtual Result<Settings> config(std::string_view queue, const Settings& changes = {}) = 0;
  // STATS: (name, value) pairs, as the protocol's STATS lists them.
  virtual Result<Settings> stats() = 0;

  // Runs `handler` for every request of `queue`, on `options.concurrency`
  // threads, until the Dispatcher is stopped: RESERVE, SENT (right before
  // the call), the handler, RESPOND with what it returned. The Dispatcher
  // must be stopped or destroyed before this Tarde is (close() stops those
  // still running).
  virtual Result<std::unique_ptr<Dispatcher>> dispatch(std::string_view queue, Handler handler,
                                                       DispatchOptions options = {}) = 0;

  // Stops every dispatcher, gives back the leases this Tarde holds, waits
  // for the last commit, and closes the store. Later calls answer
  // shutting_down. Idempotent; the destructor calls it.
  virtual void close() = 0;
};

}  // namespace tarde
