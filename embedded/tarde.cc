#include <mutex>
#include <vector>

#include "embedded/convert.h"
#include "embedded/dispatcher.h"
#include "embedded/host.h"
#include "net/core/config_args.h"
#include "net/wire/tokens.h"
#include "tarde/embedded.h"

namespace tarde {
namespace {

using embedded::Host;
using embedded::to_public;
using TxResult = Result<engine::TxReply>;

// A token the protocol refuses is refused here too, so that whatever the
// library stores, `tarde serve` can show over the wire.
Status check_token(Result<std::string> parsed) {
  if (parsed.is_ok()) return Status::ok();
  return Status::invalid_argument(parsed.status().message());
}

Result<Summary> summary_of(const TxResult& result) {
  if (!result.is_ok()) return result.status();
  return to_public(result.value());
}

// The Tarde of tarde/embedded.h: argument checks, then one Host call per
// command. Thread-safe through the Host.
class EmbeddedTarde final : public Tarde {
 public:
  explicit EmbeddedTarde(std::unique_ptr<Host> host)
      : host_(std::move(host)), holder_(host_->new_holder()) {}
  ~EmbeddedTarde() override { close(); }

  Result<Summary> enqueue(std::string_view queue, std::string_view tx_id, std::string_view payload,
                          const EnqueueOptions& options) override {
    TARDE_RETURN_IF_ERROR(check_token(net::parse_queue(queue)));
    TARDE_RETURN_IF_ERROR(check_token(net::parse_tx_id(tx_id)));
    engine::EnqueueArgs args;
    args.queue = std::string(queue);
    args.tx_id = std::string(tx_id);
    args.payload = std::string(payload);
    args.max_attempts = options.max_attempts;
    if (options.base) args.base_ms = options.base->count();
    args.factor = options.factor;
    if (options.cap) args.cap_ms = options.cap->count();
    args.jitter = options.jitter;
    args.strict_cap = options.strict_cap;
    if (options.deadline) args.deadline_ms = options.deadline->count();
    args.sent = options.sent;
    if (options.delay) args.delay_ms = options.delay->count();
    return summary_of(
        host_->call<engine::TxReply>([&](net::Core& core) { return core.engine().enqueue(args); }));
  }

  Result<std::optional<Request>> reserve(std::string_view queue,
                                         std::chrono::milliseconds wait) override {
    TARDE_RETURN_IF_ERROR(check_token(net::parse_queue(queue)));
    auto got = host_->reserve(std::string(queue), holder_, wait.count());
    if (!got.is_ok()) return got.status();
    if (!got.value()) return std::optional<Request>();
    return std::optional<Request>(to_public(std::string(queue), *got.value()));
  }

  Result<Summary> sent(std::string_view tx_id, uint32_t attempt) override {
    TARDE_RETURN_IF_ERROR(check_token(net::parse_tx_id(tx_id)));
    return summary_of(host_->call<engine::TxReply>(
        [&](net::Core& core) { return core.engine().sent(tx_id, attempt); }));
  }

  Result<Summary> release(std::string_view tx_id, uint32_t attempt, std::chrono::milliseconds delay,
                          std::string_view reason) override {
    TARDE_RETURN_IF_ERROR(check_token(net::parse_tx_id(tx_id)));
    if (!reason.empty()) TARDE_RETURN_IF_ERROR(check_token(net::parse_reason(reason)));
    if (delay.count() < 0) return Status::invalid_argument("delay must not be negative");
    return summary_of(host_->call<engine::TxReply>([&](net::Core& core) {
      return core.engine().release(holder_, tx_id, attempt, delay.count(), reason);
    }));
  }

  Result<Summary> respond(std::string_view tx_id, uint32_t attempt,
                          const Response& response) override {
    TARDE_RETURN_IF_ERROR(check_token(net::parse_tx_id(tx_id)));
    if (!response.reason.empty()) {
      TARDE_RETURN_IF_ERROR(check_token(net::parse_reason(response.reason)));
    }
    std::optional<int64_t> retry_after;
    if (response.retry_after) {
      if (response.retry_after->count() < 0) {
        return Status::invalid_argument("retry_after must not be negative");
      }
      retry_after = response.retry_after->count();
    }
    return summary_of(host_->call<engine::TxReply>([&](net::Core& core) {
      return core.engine().respond(tx_id, attempt, embedded::to_engine(response.answer),
                                   response.reason, retry_after);
    }));
  }

  Result<Summary> resolve(std::string_view tx_id, TxState terminal,
                          std::string_view reason) override {
    TARDE_RETURN_IF_ERROR(check_token(net::parse_tx_id(tx_id)));
    if (terminal != TxState::kSucceeded && terminal != TxState::kFailed) {
      return Status::invalid_argument("state must be SUCCEEDED or FAILED");
    }
    if (!reason.empty()) TARDE_RETURN_IF_ERROR(check_token(net::parse_reason(reason)));
    return summary_of(host_->call<engine::TxReply>([&](net::Core& core) {
      return core.engine().resolve(tx_id, embedded::to_storage(terminal), reason);
    }));
  }

  Result<Summary> redrive(std::string_view queue, std::string_view tx_id) override {
    TARDE_RETURN_IF_ERROR(check_token(net::parse_queue(queue)));
    TARDE_RETURN_IF_ERROR(check_token(net::parse_tx_id(tx_id)));
    return summary_of(host_->call<engine::TxReply>(
        [&](net::Core& core) { return core.engine().redrive(queue, tx_id); }));
  }

  Result<Transaction> get(std::string_view tx_id) override {
    TARDE_RETURN_IF_ERROR(check_token(net::parse_tx_id(tx_id)));
    return host_->call<Transaction>([&](net::Core& core) -> Result<Transaction> {
      auto found = core.engine().get(tx_id);
      if (!found.is_ok()) return found.status();
      if (!found.value()) return Status::not_found("no transaction " + std::string(tx_id));
      return to_public(*found.value());
    });
  }

  Result<std::vector<Event>> history(std::string_view tx_id, size_t limit) override {
    TARDE_RETURN_IF_ERROR(check_token(net::parse_tx_id(tx_id)));
    return host_->call<std::vector<Event>>([&](net::Core& core) -> Result<std::vector<Event>> {
      auto found = core.engine().get(tx_id);
      if (!found.is_ok()) return found.status();
      if (!found.value()) return Status::not_found("no transaction " + std::string(tx_id));
      std::vector<engine::HistoryEntry> events;
      TARDE_RETURN_IF_ERROR(core.engine().history(tx_id, limit, &events));
      std::vector<Event> out;
      for (const auto& e : events) out.push_back(to_public(e));
      return out;
    });
  }

  Result<std::vector<Letter>> dead_letters(std::string_view queue, size_t limit) override {
    TARDE_RETURN_IF_ERROR(check_token(net::parse_queue(queue)));
    return host_->call<std::vector<Letter>>([&](net::Core& core) -> Result<std::vector<Letter>> {
      std::vector<storage::DeadLetter> letters;
      TARDE_RETURN_IF_ERROR(core.engine().dead_letters(queue, limit, &letters));
      std::vector<Letter> out;
      for (const auto& l : letters) out.push_back(to_public(l));
      return out;
    });
  }

  Result<Settings> config(std::string_view queue, const Settings& changes) override {
    TARDE_RETURN_IF_ERROR(check_token(net::parse_queue(queue)));
    return host_->call<Settings>([&](net::Core& core) -> Result<Settings> {
      storage::QueueConfig config = core.engine().config(queue);
      std::vector<std::pair<std::string_view, std::string_view>> options;
      for (const auto& [name, value] : changes) options.emplace_back(name, value);
      if (auto problem = net::apply_config_options(options, &config)) {
        return Status::invalid_argument(problem->message);
      }
      if (!changes.empty()) TARDE_RETURN_IF_ERROR(core.engine().set_config(queue, config));
      return net::config_values(config);
    });
  }

  Result<Settings> stats() override {
    return host_->call<Settings>(
        [this](net::Core&) -> Result<Settings> { return host_figures().stats_lines(); });
  }

  Result<std::unique_ptr<Dispatcher>> dispatch(std::string_view queue, Handler handler,
                                               DispatchOptions options) override {
    TARDE_RETURN_IF_ERROR(check_token(net::parse_queue(queue)));
    if (!handler) return Status::invalid_argument("dispatch needs a handler");
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return Status::shutting_down("tarde is closed");
    auto loop = std::make_shared<embedded::DispatchLoop>(*host_, std::string(queue),
                                                         std::move(handler), options);
    loops_.push_back(loop);
    return std::unique_ptr<Dispatcher>(new DispatcherHandle(loop));
  }

  void close() override {
    std::vector<std::shared_ptr<embedded::DispatchLoop>> loops;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
      for (auto& weak : loops_) {
        if (auto loop = weak.lock()) loops.push_back(loop);
      }
      loops_.clear();
    }
    for (auto& loop : loops) loop->stop();
    host_->close();
  }

 private:
  // What dispatch() hands out: shares the loop with the Tarde, which stops
  // it at close() if the application has not.
  class DispatcherHandle final : public Dispatcher {
   public:
    explicit DispatcherHandle(std::shared_ptr<embedded::DispatchLoop> loop)
        : loop_(std::move(loop)) {}
    ~DispatcherHandle() override { loop_->stop(); }
    void stop() override { loop_->stop(); }
    uint64_t handled() const override { return loop_->handled(); }
    uint64_t errors() const override { return loop_->errors(); }

   private:
    std::shared_ptr<embedded::DispatchLoop> loop_;
  };

  const Figures& host_figures() const { return host_->figures(); }

  std::unique_ptr<Host> host_;
  const uint64_t holder_;  // the lease holder of reserve() and release()
  std::mutex mutex_;
  bool closed_ = false;                                       // guarded by mutex_
  std::vector<std::weak_ptr<embedded::DispatchLoop>> loops_;  // guarded by mutex_
};

}  // namespace

Result<std::unique_ptr<Tarde>> Tarde::open(Options options) {
  auto host = Host::open(options);
  if (!host.is_ok()) return host.status();
  return std::unique_ptr<Tarde>(new EmbeddedTarde(std::move(host).value()));
}

}  // namespace tarde
