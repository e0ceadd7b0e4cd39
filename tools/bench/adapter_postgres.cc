// The PostgreSQL adapter: a jobs table with next_fire_at (epoch ms) and a
// poller, through libpq's asynchronous API so that its connections share the
// generator's event loop like the others. A hand-out claims due rows with
// UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED LIMIT n) RETURNING;
// when nothing is due it polls again after Target::poll_interval_ms until the
// wait runs out. Success is DELETE, a deferral an UPDATE of next_fire_at.
// Every statement is its own transaction, committed under the server's
// synchronous_commit=on. The announced due time is the next_fire_at set.
#include <libpq-fe.h>
#include <sys/epoll.h>

#include <deque>
#include <string>

#include "tools/bench/adapters.h"

namespace tarde::bench {
namespace {

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS jobs (id text PRIMARY KEY, payload text NOT NULL, "
    "next_fire_at bigint NOT NULL, reserved boolean NOT NULL DEFAULT false); "
    "CREATE INDEX IF NOT EXISTS jobs_due ON jobs (next_fire_at) WHERE NOT reserved";

struct Statement {
  const char* name;
  const char* sql;
};
constexpr Statement kStatements[] = {
    {"enqueue", "INSERT INTO jobs (id, payload, next_fire_at) VALUES ($1, $2, $3)"},
    {"claim",
     "UPDATE jobs SET reserved = true WHERE id IN (SELECT id FROM jobs WHERE NOT reserved AND "
     "next_fire_at <= $1 ORDER BY next_fire_at LIMIT $2 FOR UPDATE SKIP LOCKED) "
     "RETURNING id, payload"},
    {"complete", "DELETE FROM jobs WHERE id = $1"},
    {"defer", "UPDATE jobs SET reserved = false, next_fire_at = $2 WHERE id = $1 AND reserved"},
    {"pending", "SELECT count(*) FROM jobs"},
    {"ping", "SELECT 1"},
};

class PostgresClient : public QueueClient, public FdHandler {
 public:
  using OnResult = std::function<void(PGresult*)>;

  PostgresClient(EventLoop* loop, const Target& target, int index)
      : loop_(loop), target_(target), name_("postgres#" + std::to_string(index)) {}
  ~PostgresClient() override {
    if (conn_ != nullptr) {
      loop_->unwatch(PQsocket(conn_));
      PQfinish(conn_);
    }
  }

  void open(bool first, Done done) override {
    const std::string info =
        "host=" + target_.host + " port=" + std::to_string(target_.port) +
        " user=postgres dbname=postgres options='-c client_min_messages=warning'";
    conn_ = PQconnectdb(info.c_str());
    if (PQstatus(conn_) != CONNECTION_OK) return fail("connect");
    if (first && !exec_blocking(kSchema)) return;
    for (const Statement& s : kStatements) {
      PGresult* result = PQprepare(conn_, s.name, s.sql, 0, nullptr);
      const bool ok = PQresultStatus(result) == PGRES_COMMAND_OK;
      PQclear(result);
      if (!ok) return fail(std::string("prepare ") + s.name);
    }
    PQsetnonblocking(conn_, 1);
    loop_->watch(PQsocket(conn_), EPOLLIN, this);
    done();
  }

  void enqueue(uint64_t number, int64_t due_us, Announced done) override {
    const int64_t due_ms = due_us > 0 ? (due_us + 999) / 1000 : wall_now_us() / 1000;
    send("enqueue",
         {id_of(number), job_payload(number, target_.payload_bytes), std::to_string(due_ms)},
         [done, due_us, due_ms](PGresult*) { done(due_us > 0 ? due_ms * 1000 : 0); });
  }

  void reserve(int wait_ms, Reserved done) override {
    claim(SteadyClock::now() + std::chrono::milliseconds(wait_ms), std::move(done));
  }

  void complete(const Job& job, Done done) override {
    send("complete", {job.handle}, [this, done](PGresult* result) {
      if (std::string(PQcmdTuples(result)) != "1") return loop_->fail(name_ + ": DELETE missed");
      done();
    });
  }

  void defer(const Job& job, int64_t delay_ms, bool, Announced done) override {
    const int64_t due_ms = wall_now_us() / 1000 + delay_ms;
    send("defer", {job.handle, std::to_string(due_ms)}, [this, done, due_ms](PGresult* result) {
      if (std::string(PQcmdTuples(result)) != "1") return loop_->fail(name_ + ": UPDATE missed");
      done(due_ms * 1000);
    });
  }

  void pending(Count done) override {
    send("pending", {}, [done](PGresult* result) { done(std::stoll(PQgetvalue(result, 0, 0))); });
  }

  void ping(Done done) override {
    send("ping", {}, [done](PGresult*) { done(); });
  }

  void on_ready(uint32_t events) override {
    if (events & EPOLLOUT) flush();
    if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR))) return;
    if (PQconsumeInput(conn_) == 0) return fail("read");
    while (on_result_ && PQisBusy(conn_) == 0) {
      PGresult* result = PQgetResult(conn_);
      if (result != nullptr) {
        const auto status = PQresultStatus(result);
        if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
          const std::string message = PQresultErrorMessage(result);
          PQclear(result);
          return loop_->fail(name_ + ": " + message);
        }
        if (result_ != nullptr) PQclear(result_);
        result_ = result;
        continue;
      }
      // The statement is over: hand its result on.
      OnResult on_result = std::move(on_result_);
      on_result_ = nullptr;
      PGresult* last = result_;
      result_ = nullptr;
      on_result(last);
      PQclear(last);
    }
  }

 private:
  // Claims up to claim_batch due rows, hands out one and keeps the rest for
  // the next reserve; polls again while nothing is due and time is left.
  void claim(SteadyClock::time_point deadline, Reserved done) {
    if (!claimed_.empty()) {
      Job job = std::move(claimed_.front());
      claimed_.pop_front();
      return done(std::move(job));
    }
    send("claim", {std::to_string(wall_now_us() / 1000), std::to_string(target_.claim_batch)},
         [this, deadline, done](PGresult* result) {
           for (int row = 0; row < PQntuples(result); ++row) {
             Job job;
             job.handle = PQgetvalue(result, row, 0);
             const auto number = payload_number(PQgetvalue(result, row, 1));
             if (!number) return loop_->fail(name_ + ": a row without a job number");
             job.number = *number;
             claimed_.push_back(std::move(job));
           }
           if (!claimed_.empty() || SteadyClock::now() >= deadline) {
             if (claimed_.empty()) return done(std::nullopt);
             return claim(deadline, done);
           }
           loop_->after(std::chrono::milliseconds(target_.poll_interval_ms),
                        [this, deadline, done] { claim(deadline, done); });
         });
  }

  void send(const char* statement, std::vector<std::string> params, OnResult on_result) {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p.c_str());
    on_result_ = std::move(on_result);
    if (PQsendQueryPrepared(conn_, statement, static_cast<int>(values.size()), values.data(),
                            nullptr, nullptr, 0) == 0) {
      return fail(std::string("send ") + statement);
    }
    flush();
  }

  void flush() {
    const int state = PQflush(conn_);
    if (state < 0) return fail("flush");
    loop_->watch(PQsocket(conn_), EPOLLIN | (state == 1 ? EPOLLOUT : 0u), this);
  }

  bool exec_blocking(const char* sql) {
    PGresult* result = PQexec(conn_, sql);
    const bool ok = PQresultStatus(result) == PGRES_COMMAND_OK;
    PQclear(result);
    if (!ok) fail("schema");
    return ok;
  }

  void fail(const std::string& what) {
    loop_->fail(name_ + ": " + what + ": " + PQerrorMessage(conn_));
  }

  std::string id_of(uint64_t number) const {
    return target_.run_tag + "-" + std::to_string(number);
  }

  EventLoop* loop_;
  Target target_;
  std::string name_;
  PGconn* conn_ = nullptr;
  OnResult on_result_;
  PGresult* result_ = nullptr;
  std::deque<Job> claimed_;
};

}  // namespace

std::unique_ptr<QueueClient> make_postgres_client(EventLoop* loop, const Target& target,
                                                  int index) {
  return std::make_unique<PostgresClient>(loop, target, index);
}

}  // namespace tarde::bench
