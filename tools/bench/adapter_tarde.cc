// The tarde adapter: net/PROTOCOL.md over one connection. A hand-out is
// RESERVE, success is RESPOND SUCCESS (an answer implies SENT, so the
// dispatcher skips SENT), a deferral is RESPOND CANCELLED (or TRANSIENT)
// with retry_after, and the announced due time is the next_fire_at of the
// reply.
#include <chrono>
#include <string>

#include "tools/bench/adapters.h"
#include "tools/bench/line_request.h"
#include "tools/bench/stream.h"
#include "tools/bench/text_reply.h"

namespace tarde::bench {
namespace {

// Attempts allowed per transaction: enough for W5's endless CANCELLED cycle.
constexpr int kMaxAttempts = 1000;
// How often pending() asks again while the server is still counting.
constexpr std::chrono::milliseconds kCountingPoll{100};

class TardeClient : public QueueClient {
 public:
  TardeClient(EventLoop* loop, const Target& target, int index)
      : loop_(loop), target_(target), stream_(loop, "tarde#" + std::to_string(index)) {}

  void open(bool first, Done done) override {
    if (!stream_.connect(target_.host, target_.port)) return;
    if (!first) return done();
    // The breaker would stop hand-outs once half the answers are TRANSIENT
    // (W5); the benchmark measures the store, not the breaker.
    line("CONFIG " + target_.queue + " breaker=0", "CONFIG", [done](auto&) { done(); });
  }

  void enqueue(uint64_t number, int64_t due_us, Announced done) override {
    std::string request = "ENQUEUE " + target_.queue + " " + tx_id(number) +
                          " max_attempts=" + std::to_string(kMaxAttempts);
    if (due_us > 0) {
      const int64_t delay_ms = std::max<int64_t>(0, (due_us - wall_now_us() + 999) / 1000);
      request += " delay=" + std::to_string(delay_ms) + "ms";
    }
    const std::string payload = job_payload(number, target_.payload_bytes);
    request += " " + std::to_string(payload.size()) + "\r\n" + payload;
    line(request, "CREATED", [done](const std::vector<std::string_view>& words) {
      done(words.size() == 6 ? parse_int(words[5]).value_or(0) * 1000 : 0);
    });
  }

  void reserve(int wait_ms, Reserved done) override {
    std::string request = "RESERVE " + target_.queue;
    if (wait_ms > 0) request += " wait=" + std::to_string(wait_ms) + "ms";
    request += "\r\n";
    stream_.request(request, [this, done](std::string_view input) -> size_t {
      const auto head = first_line(input);
      if (!head) return 0;
      if (head->text == "EMPTY") {
        done(std::nullopt);
        return head->bytes;
      }
      const auto words = split_words(head->text);
      const int64_t bytes = words.size() == 6 ? parse_int(words[5]).value_or(-1) : -1;
      if (words.empty() || words[0] != "REQUEST" || bytes < 0) {
        loop_->fail("tarde: RESERVE got: " + std::string(head->text));
        return head->bytes;
      }
      const size_t total = head->bytes + static_cast<size_t>(bytes) + 2;
      if (input.size() < total) return 0;
      Job job;
      job.handle = std::string(words[1]);
      job.attempt = static_cast<uint32_t>(parse_int(words[2]).value_or(0));
      const size_t dash = words[1].rfind('-');
      const auto number = parse_int(words[1].substr(dash == std::string_view::npos ? 0 : dash + 1));
      job.number = number ? static_cast<uint64_t>(*number) : 0;
      done(job);
      return total;
    });
  }

  void complete(const Job& job, Done done) override {
    line("RESPOND " + job.handle + " " + std::to_string(job.attempt) + " SUCCESS", "OK",
         [done](auto&) { done(); });
  }

  void defer(const Job& job, int64_t delay_ms, bool transient, Announced done) override {
    line("RESPOND " + job.handle + " " + std::to_string(job.attempt) +
             (transient ? " TRANSIENT" : " CANCELLED") +
             " retry_after=" + std::to_string(delay_ms) + "ms",
         "OK", [this, done](const std::vector<std::string_view>& words) {
           if (words.size() != 6 || words[2] != "SCHEDULED") {
             loop_->fail("tarde: deferral did not schedule a retry");
             return;
           }
           done(parse_int(words[5]).value_or(0) * 1000);
         });
  }

  void pending(Count done) override {
    stream_.request("STATS\r\n", [this, done](std::string_view input) -> size_t {
      const auto head = first_line(input);
      if (!head) return 0;
      const auto words = split_words(head->text);
      const int64_t lines = words.size() == 2 ? parse_int(words[1]).value_or(-1) : -1;
      if (words.empty() || words[0] != "STATS" || lines < 0) {
        loop_->fail("tarde: STATS got: " + std::string(head->text));
        return head->bytes;
      }
      size_t used = head->bytes;
      int64_t open = 0;
      bool counting = false;
      for (int64_t i = 0; i < lines; ++i) {
        const auto stat = first_line(input.substr(used));
        if (!stat) return 0;
        used += stat->bytes;
        const auto pair = split_words(stat->text);
        if (pair.size() != 2) continue;
        if (pair[0] == "sending" || pair[0] == "in_flight" || pair[0] == "scheduled") {
          open += parse_int(pair[1]).value_or(0);
        }
        if (pair[0] == "counting" && pair[1] != "0") counting = true;
      }
      if (counting) {
        // Right after a start the counts are still being made in the
        // background (STATS counting 1): ask again until they are whole.
        loop_->after(kCountingPoll, [this, done] { pending(done); });
      } else {
        done(open);
      }
      return used;
    });
  }

  void ping(Done done) override {
    line("PING", "PONG", [done](auto&) { done(); });
  }

 private:
  // One request line, one reply line starting with `expect`.
  void line(const std::string& request, std::string expect,
            std::function<void(const std::vector<std::string_view>&)> on_reply) {
    line_request(stream_, *loop_, "tarde", request, std::move(expect), std::move(on_reply));
  }

  // Transaction ids carry the run's tag, so runs against one server never
  // collide (an ENQUEUE of a known id would answer EXISTS).
  std::string tx_id(uint64_t number) const {
    return "J" + target_.run_tag + "-" + std::to_string(number);
  }

  EventLoop* loop_;
  Target target_;
  Stream stream_;
};

}  // namespace

std::unique_ptr<QueueClient> make_tarde_client(EventLoop* loop, const Target& target, int index) {
  return std::make_unique<TardeClient>(loop, target, index);
}

}  // namespace tarde::bench
