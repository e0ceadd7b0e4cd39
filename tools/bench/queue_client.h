#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "tools/bench/event_loop.h"

// The one client code path of tarde-bench: every workload speaks to every
// system through this interface, so the figures of the four systems come
// from the same loop, the same timing and the same checks. An adapter per
// system (adapter_*.cc) maps the five operations onto that system's own
// protocol. One QueueClient is one connection; calls are asynchronous, one
// at a time per client (closed loop), and their callbacks run on the loop
// thread. A failure (an error reply, a lost connection, an unexpected
// answer) calls EventLoop::fail() and the callback never runs.
namespace tarde::bench {

// A job as handed out: the generator's own job number (every adapter
// carries it through the server), the attempt the server says this is (1 if
// the system does not count), and the handle the system needs to finish it.
struct Job {
  uint64_t number = 0;
  uint32_t attempt = 1;
  std::string handle;
};

// Where and how to reach the server under test, and how it is set up.
struct Target {
  std::string system;  // tarde | beanstalkd | redis | postgres
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::string queue = "bench";  // queue, tube, key prefix or table tag
  std::string run_tag;          // unique per invocation: keeps job ids of runs apart
  size_t payload_bytes = 128;
  // PostgreSQL: poll interval of an empty reserve; Redis: longest sleep of
  // the due-job mover when nothing is due.
  int poll_interval_ms = 10;
  // PostgreSQL: jobs claimed per poll (LIMIT n); handed out one by one.
  int claim_batch = 1;
};

class QueueClient {
 public:
  using Done = std::function<void()>;
  // `announced_us`: the due instant the system stored, wall-clock µs.
  using Announced = std::function<void(int64_t announced_us)>;
  using Reserved = std::function<void(std::optional<Job>)>;
  using Count = std::function<void(int64_t)>;

  virtual ~QueueClient() = default;

  // Connects and prepares the connection (select the tube, prepare
  // statements, load scripts). `first` is true for the first connection of
  // a run, which also creates what the run needs (table, queue settings).
  virtual void open(bool first, Done done) = 0;

  // Adds job `number`; due now when due_us is 0, else at wall-clock due_us
  // (systems with relative delays get the difference at send time).
  virtual void enqueue(uint64_t number, int64_t due_us, Announced done) = 0;

  // Takes the next ready job, waiting up to wait_ms for one; nullopt if none
  // came.
  virtual void reserve(int wait_ms, Reserved done) = 0;

  // Ends the job successfully (SUCCESS, delete, LREM, DELETE).
  virtual void complete(const Job& job, Done done) = 0;

  // Hands the job back to run again after delay_ms (CANCELLED with
  // retry_after, or TRANSIENT when `transient`; release with delay; ZADD;
  // UPDATE next_fire_at).
  virtual void defer(const Job& job, int64_t delay_ms, bool transient, Announced done) = 0;

  // Jobs the system still holds (ready, reserved or delayed).
  virtual void pending(Count done) = 0;

  // The cheapest round trip, to see that the server answers.
  virtual void ping(Done done) = 0;
};

// Background work a system needs besides its clients: Redis's mover of due
// members. Started once per run, after the first client opened.
class Background {
 public:
  virtual ~Background() = default;
};

std::unique_ptr<QueueClient> make_client(EventLoop* loop, const Target& target, int index);
// nullptr when the system needs nothing in the background.
std::unique_ptr<Background> make_background(EventLoop* loop, const Target& target);

// The payload every adapter sends: `payload_bytes` bytes that start with the
// job number, so that systems that only return the body (beanstalkd, Redis)
// give the number back.
std::string job_payload(uint64_t number, size_t payload_bytes);
// The job number at the front of a payload; nullopt if there is none.
std::optional<uint64_t> payload_number(std::string_view payload);

}  // namespace tarde::bench
