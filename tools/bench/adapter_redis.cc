// The Redis adapter: a sorted-set delayed queue as Sidekiq and BullMQ build
// it. Keys per run: <q>:delayed (a sorted set scored by due time in epoch
// ms), <q>:ready (a list) and <q>:active (the list of handed-out jobs, so a
// worker's crash loses nothing: BullMQ's reliable hand-out). Enqueue is
// LPUSH (due now) or ZADD (later); a hand-out is BLMOVE ready→active (the
// reliable form of BRPOP); success is LREM active; a deferral is one Lua
// script (LREM active + ZADD delayed). A mover (RedisMover below) runs an
// atomic Lua script that moves due members to the ready list, re-armed for
// the next due score. The member is the job's payload, which starts with
// the job number; the announced due time is the score the client set.
#include <string>

#include "tools/bench/adapters.h"
#include "tools/bench/resp.h"
#include "tools/bench/stream.h"

namespace tarde::bench {
namespace {

constexpr const char* kDeferScript =
    "if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end "
    "redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1]) return 1";
constexpr const char* kMoveScript =
    "local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2]) "
    "if #due > 0 then redis.call('ZREM', KEYS[1], unpack(due)) "
    "redis.call('LPUSH', KEYS[2], unpack(due)) end "
    "local nxt = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES') "
    "return {#due, nxt[2] or '-1'}";
constexpr const char* kPendingScript =
    "return redis.call('ZCARD', KEYS[1]) + redis.call('LLEN', KEYS[2]) + "
    "redis.call('LLEN', KEYS[3])";
// Members moved per script call: bounded so one call never blocks Redis for
// long (and below Lua's unpack limit).
constexpr int kMoveBatch = 1000;

int64_t due_ms_of(int64_t due_us) { return (due_us + 999) / 1000; }

// Sends RESP commands on a Stream and checks each reply's type.
class RespChannel {
 public:
  RespChannel(EventLoop* loop, std::string name) : loop_(loop), stream_(loop, name), name_(name) {}
  bool connect(const Target& target) { return stream_.connect(target.host, target.port); }

  void call(std::initializer_list<std::string_view> words,
            std::function<void(const RespValue&)> on_reply) {
    const std::string what(*words.begin());
    stream_.request(resp_command(words),
                    [this, what, on_reply = std::move(on_reply)](std::string_view input) -> size_t {
                      RespValue value;
                      const size_t used = resp_parse(input, &value);
                      if (used == 0) return 0;
                      if (used == SIZE_MAX || value.type == '-') {
                        loop_->fail(name_ + ": " + what +
                                    " failed: " + (used == SIZE_MAX ? "bad reply" : value.text));
                        return used == SIZE_MAX ? input.size() : used;
                      }
                      on_reply(value);
                      return used;
                    });
  }

 private:
  EventLoop* loop_;
  Stream stream_;
  std::string name_;
};

class RedisClient : public QueueClient {
 public:
  RedisClient(EventLoop* loop, const Target& target, int index)
      : loop_(loop),
        target_(target),
        channel_(loop, "redis#" + std::to_string(index)),
        delayed_(target.queue + ":delayed"),
        ready_(target.queue + ":ready"),
        active_(target.queue + ":active") {}

  void open(bool, Done done) override {
    if (!channel_.connect(target_)) return;
    channel_.call({"SCRIPT", "LOAD", kDeferScript}, [this, done](const RespValue& sha) {
      defer_sha_ = sha.text;
      done();
    });
  }

  void enqueue(uint64_t number, int64_t due_us, Announced done) override {
    const std::string member = job_payload(number, target_.payload_bytes);
    if (due_us == 0) {
      channel_.call({"LPUSH", ready_, member}, [done](const RespValue&) { done(0); });
      return;
    }
    const int64_t due_ms = due_ms_of(due_us);
    channel_.call({"ZADD", delayed_, std::to_string(due_ms), member},
                  [done, due_ms](const RespValue&) { done(due_ms * 1000); });
  }

  void reserve(int wait_ms, Reserved done) override {
    auto on_reply = [this, done](const RespValue& value) {
      if (value.nil) return done(std::nullopt);
      const auto number = payload_number(value.text);
      if (!number) return loop_->fail("redis: a member without a job number");
      Job job;
      job.number = *number;
      job.handle = value.text;
      done(job);
    };
    if (wait_ms <= 0) {
      channel_.call({"LMOVE", ready_, active_, "RIGHT", "LEFT"}, on_reply);
      return;
    }
    const std::string timeout = std::to_string(wait_ms / 1000.0);
    channel_.call({"BLMOVE", ready_, active_, "RIGHT", "LEFT", timeout}, on_reply);
  }

  void complete(const Job& job, Done done) override {
    channel_.call({"LREM", active_, "1", job.handle}, [this, done](const RespValue& removed) {
      if (removed.integer != 1) return loop_->fail("redis: LREM removed nothing");
      done();
    });
  }

  void defer(const Job& job, int64_t delay_ms, bool, Announced done) override {
    const int64_t due_ms = due_ms_of(wall_now_us()) + delay_ms;
    channel_.call(
        {"EVALSHA", defer_sha_, "2", active_, delayed_, job.handle, std::to_string(due_ms)},
        [this, done, due_ms](const RespValue& moved) {
          if (moved.integer != 1) return loop_->fail("redis: deferral found no job");
          done(due_ms * 1000);
        });
  }

  void pending(Count done) override {
    channel_.call({"EVAL", kPendingScript, "3", delayed_, ready_, active_},
                  [done](const RespValue& count) { done(count.integer); });
  }

  void ping(Done done) override {
    channel_.call({"PING"}, [done](const RespValue&) { done(); });
  }

 private:
  EventLoop* loop_;
  Target target_;
  RespChannel channel_;
  std::string delayed_, ready_, active_;
  std::string defer_sha_;
};

// Moves due members from the sorted set to the ready list, on its own
// connection: once at start, then again at the next due score (or after
// Target::poll_interval_ms when nothing is scheduled sooner), and at once
// again while a call moved a full batch.
class RedisMover : public Background {
 public:
  RedisMover(EventLoop* loop, const Target& target)
      : loop_(loop),
        target_(target),
        channel_(loop, "redis-mover"),
        delayed_(target.queue + ":delayed"),
        ready_(target.queue + ":ready") {
    if (!channel_.connect(target_)) return;
    channel_.call({"SCRIPT", "LOAD", kMoveScript}, [this](const RespValue& sha) {
      move_sha_ = sha.text;
      move();
    });
  }

 private:
  void move() {
    const std::string now_ms = std::to_string(wall_now_us() / 1000);
    channel_.call({"EVALSHA", move_sha_, "2", delayed_, ready_, now_ms, std::to_string(kMoveBatch)},
                  [this](const RespValue& reply) {
                    if (reply.elements.size() != 2) return loop_->fail("redis: mover reply");
                    if (reply.elements[0].integer == kMoveBatch) return move();
                    const double next_ms = std::stod(reply.elements[1].text);
                    int64_t sleep_us = int64_t{target_.poll_interval_ms} * 1000;
                    if (next_ms >= 0) {
                      sleep_us = std::min<int64_t>(
                          sleep_us, static_cast<int64_t>(next_ms) * 1000 - wall_now_us());
                    }
                    loop_->after(std::chrono::microseconds(std::max<int64_t>(0, sleep_us)),
                                 [this] { move(); });
                  });
  }

  EventLoop* loop_;
  Target target_;
  RespChannel channel_;
  std::string delayed_, ready_;
  std::string move_sha_;
};

}  // namespace

std::unique_ptr<QueueClient> make_redis_client(EventLoop* loop, const Target& target, int index) {
  return std::make_unique<RedisClient>(loop, target, index);
}

std::unique_ptr<Background> make_redis_mover(EventLoop* loop, const Target& target) {
  return std::make_unique<RedisMover>(loop, target);
}

}  // namespace tarde::bench
