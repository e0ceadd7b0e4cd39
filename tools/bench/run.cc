#include "tools/bench/run.h"

#include <cstdio>

namespace tarde::bench {

Run::Run(const Options& options) : options_(options) {}
Run::~Run() = default;

ResultSink Run::sink() const {
  return ResultSink{options_.workload,
                    options_.label.empty() ? options_.target.system : options_.label,
                    options_.connections};
}

void Run::progress(const std::string& line) const {
  std::fprintf(stderr, "[%s %s c=%d] %s\n", options_.workload.c_str(), sink().label.c_str(),
               options_.connections, line.c_str());
}

bool Run::open(int connections) {
  int opened = 0;
  for (int i = 0; i < connections && !loop_.failed(); ++i) {
    clients_.push_back(make_client(&loop_, options_.target, i));
    if (!clients_.back()) return false;
    clients_.back()->open(i == 0, [&opened] { opened += 1; });
    // The first connection creates the table or the queue settings: wait
    // for it before the others start.
    if (i == 0 && !drive([&] { return opened == 1; }, std::chrono::seconds(30), "open")) {
      return false;
    }
  }
  if (!drive([&] { return opened == connections; }, std::chrono::seconds(30), "open")) return false;
  background_ = make_background(&loop_, options_.target);
  return !loop_.failed();
}

int64_t Run::micros_since(SteadyClock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - start).count();
}

void Run::enqueue(int c, uint64_t number, int64_t due_us, QueueClient::Announced done) {
  const auto start = SteadyClock::now();
  client(c).enqueue(number, due_us, [this, start, done = std::move(done)](int64_t announced) {
    samples(Op::kEnqueue).push_back(micros_since(start));
    done(announced);
  });
}

void Run::reserve(int c, int wait_ms, QueueClient::Reserved done) {
  const auto start = SteadyClock::now();
  client(c).reserve(wait_ms, [this, start, done = std::move(done)](std::optional<Job> job) {
    if (job) {
      samples(Op::kReserve).push_back(micros_since(start));
      std::string problem;
      if (!ledger_.handed_out(*job, &problem)) return loop_.fail(problem);
    }
    done(std::move(job));
  });
}

void Run::complete(int c, const Job& job, QueueClient::Done done) {
  const auto start = SteadyClock::now();
  const uint64_t number = job.number;
  client(c).complete(job, [this, start, number, done = std::move(done)] {
    samples(Op::kComplete).push_back(micros_since(start));
    if (!ledger_.completed(number)) return loop_.fail("completion of a job not held");
    done();
  });
}

void Run::defer(int c, const Job& job, int64_t delay_ms, bool transient,
                QueueClient::Announced done) {
  const auto start = SteadyClock::now();
  const uint64_t number = job.number;
  client(c).defer(job, delay_ms, transient,
                  [this, start, number, done = std::move(done)](int64_t announced) {
                    samples(Op::kDefer).push_back(micros_since(start));
                    if (!ledger_.deferred(number)) return loop_.fail("deferral of a job not held");
                    ledger_.announce(number, announced);
                    done(announced);
                  });
}

bool Run::drive(const std::function<bool()>& done, std::chrono::milliseconds timeout,
                const char* what) {
  const auto deadline = SteadyClock::now() + timeout;
  loop_.run([&] { return done() || SteadyClock::now() >= deadline; });
  if (loop_.failed()) {
    if (quiet_) return false;
    progress(std::string("FAILED during ") + what + ": " + loop_.error());
    return false;
  }
  if (!done()) {
    if (quiet_) return false;
    progress(std::string("FAILED: ") + what + " did not finish in time");
    return false;
  }
  return true;
}

int64_t Run::pending() {
  int64_t count = -1;
  if (clients_.empty()) return -1;
  clients_[0]->pending([&count](int64_t value) { count = value; });
  // Long: after a restart with ten million jobs, tarde's background count
  // takes tens of seconds, and peers may be slow to answer a count too.
  if (!drive([&] { return count >= 0; }, std::chrono::minutes(10), "pending count")) return -1;
  return count;
}

void Run::emit_latencies() {
  const char* names[] = {"enqueue", "reserve", "complete", "defer"};
  for (size_t i = 0; i < 4; ++i) {
    if (!samples_[i].empty()) emit_percentiles(sink(), names[i], samples_[i], false);
  }
}

}  // namespace tarde::bench
