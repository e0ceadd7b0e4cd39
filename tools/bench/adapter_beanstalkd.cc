// The beanstalkd adapter (its text protocol, written out here: it is tiny).
// A tube per run; enqueue is `put` (with a delay in whole seconds: beanstalkd
// has no finer unit), a hand-out `reserve-with-timeout`, success `delete`,
// a deferral `release` with a delay. beanstalkd announces no due time, so
// the announced instant is the send time plus the delay: the earliest the
// server can have scheduled it.
#include <string>

#include "tools/bench/adapters.h"
#include "tools/bench/line_request.h"
#include "tools/bench/stream.h"
#include "tools/bench/text_reply.h"

namespace tarde::bench {
namespace {

// Seconds a reserved job may stay unanswered before beanstalkd re-queues it;
// far above any answer time of a run.
constexpr int kTimeToRunSeconds = 600;

int64_t whole_seconds_up(int64_t micros) {
  return micros <= 0 ? 0 : (micros + 999'999) / 1'000'000;
}

class BeanstalkdClient : public QueueClient {
 public:
  BeanstalkdClient(EventLoop* loop, const Target& target, int index)
      : loop_(loop), target_(target), stream_(loop, "beanstalkd#" + std::to_string(index)) {}

  void open(bool, Done done) override {
    if (!stream_.connect(target_.host, target_.port)) return;
    line("use " + target_.queue, "USING", [](auto&) {});
    line("watch " + target_.queue, "WATCHING", [](auto&) {});
    line("ignore default", "WATCHING", [done](auto&) { done(); });
  }

  void enqueue(uint64_t number, int64_t due_us, Announced done) override {
    const int64_t now_us = wall_now_us();
    const int64_t delay_s = due_us > 0 ? whole_seconds_up(due_us - now_us) : 0;
    const std::string payload = job_payload(number, target_.payload_bytes);
    const std::string request = "put 0 " + std::to_string(delay_s) + " " +
                                std::to_string(kTimeToRunSeconds) + " " +
                                std::to_string(payload.size()) + "\r\n" + payload;
    const int64_t announced = due_us > 0 ? now_us + delay_s * 1'000'000 : 0;
    line(request, "INSERTED", [done, announced](auto&) { done(announced); });
  }

  void reserve(int wait_ms, Reserved done) override {
    const int64_t wait_s = whole_seconds_up(int64_t{wait_ms} * 1000);
    stream_.request("reserve-with-timeout " + std::to_string(wait_s) + "\r\n",
                    [this, done](std::string_view input) -> size_t {
                      const auto head = first_line(input);
                      if (!head) return 0;
                      if (head->text == "TIMED_OUT" || head->text == "DEADLINE_SOON") {
                        done(std::nullopt);
                        return head->bytes;
                      }
                      const auto words = split_words(head->text);
                      const int64_t bytes =
                          words.size() == 3 ? parse_int(words[2]).value_or(-1) : -1;
                      if (words.empty() || words[0] != "RESERVED" || bytes < 0) {
                        loop_->fail("beanstalkd: reserve got: " + std::string(head->text));
                        return head->bytes;
                      }
                      const size_t total = head->bytes + static_cast<size_t>(bytes) + 2;
                      if (input.size() < total) return 0;
                      const auto number = payload_number(input.substr(head->bytes, bytes));
                      if (!number) {
                        loop_->fail("beanstalkd: a job without a job number");
                        return total;
                      }
                      Job job;
                      job.number = *number;
                      job.handle = std::string(words[1]);
                      done(job);
                      return total;
                    });
  }

  void complete(const Job& job, Done done) override {
    line("delete " + job.handle, "DELETED", [done](auto&) { done(); });
  }

  void defer(const Job& job, int64_t delay_ms, bool, Announced done) override {
    const int64_t now_us = wall_now_us();
    const int64_t delay_s = whole_seconds_up(delay_ms * 1000);
    line("release " + job.handle + " 0 " + std::to_string(delay_s), "RELEASED",
         [done, announced = now_us + delay_s * 1'000'000](auto&) { done(announced); });
  }

  void pending(Count done) override {
    stream_.request(
        "stats-tube " + target_.queue + "\r\n", [this, done](std::string_view input) -> size_t {
          const auto head = first_line(input);
          if (!head) return 0;
          const auto words = split_words(head->text);
          const int64_t bytes = words.size() == 2 ? parse_int(words[1]).value_or(-1) : -1;
          if (words.empty() || words[0] != "OK" || bytes < 0) {
            loop_->fail("beanstalkd: stats-tube got: " + std::string(head->text));
            return head->bytes;
          }
          const size_t total = head->bytes + static_cast<size_t>(bytes) + 2;
          if (input.size() < total) return 0;
          done(sum_current_jobs(input.substr(head->bytes, bytes)));
          return total;
        });
  }

  void ping(Done done) override {
    line("list-tube-used", "USING", [done](auto&) { done(); });
  }

 private:
  // Adds the `current-jobs-*` counts of a stats-tube YAML body.
  static int64_t sum_current_jobs(std::string_view yaml) {
    int64_t total = 0;
    size_t at = 0;
    while (at < yaml.size()) {
      size_t end = yaml.find('\n', at);
      if (end == std::string_view::npos) end = yaml.size();
      const std::string_view row = yaml.substr(at, end - at);
      const size_t colon = row.find(": ");
      if (row.rfind("current-jobs-", 0) == 0 && colon != std::string_view::npos &&
          row.substr(0, colon) != "current-jobs-urgent") {
        total += parse_int(row.substr(colon + 2)).value_or(0);
      }
      at = end + 1;
    }
    return total;
  }

  void line(const std::string& request, std::string expect,
            std::function<void(const std::vector<std::string_view>&)> on_reply) {
    line_request(stream_, *loop_, "beanstalkd", request, std::move(expect), std::move(on_reply));
  }

  EventLoop* loop_;
  Target target_;
  Stream stream_;
};

}  // namespace

std::unique_ptr<QueueClient> make_beanstalkd_client(EventLoop* loop, const Target& target,
                                                    int index) {
  return std::make_unique<BeanstalkdClient>(loop, target, index);
}

}  // namespace tarde::bench
