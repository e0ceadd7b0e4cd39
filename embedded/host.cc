#include "embedded/host.h"

#include <spdlog/spdlog.h>

#include <vector>

#include "base/log_record.h"
#include "base/thread_name.h"

namespace tarde::embedded {

// A RESERVE with a wait, parked in the Core until its queue has a request
// or its timer runs out. Shared by the Core's line (weakly), the Host's
// registry (weakly) and its timer's handler. io thread only.
class ParkedReserve final : public net::ReserveWaiter,
                            public std::enable_shared_from_this<ParkedReserve> {
 public:
  using Reply = Result<std::optional<engine::HandOut>>;

  ParkedReserve(Host& host, std::string queue, uint64_t conn, std::promise<Reply>& promise)
      : host_(host), queue_(std::move(queue)), conn_(conn), timer_(*host.io_), promise_(promise) {}

  void start(int64_t wait_ms) {
    timer_.expires_after(std::chrono::milliseconds(wait_ms));
    timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
      if (ec != asio::error::operation_aborted) self->time_out();
    });
  }
  uint64_t conn() const { return conn_; }
  bool waits_on(const std::string& queue) const override { return waiting_ && queue == queue_; }
  bool try_take(const std::string& queue) override {
    auto got = host_.core_->engine().reserve(queue, conn_);
    if (got.is_ok() && !got.value()) return false;
    taken_ = std::move(got);
    return true;
  }
  void deliver() override {
    waiting_ = false;
    timer_.cancel();
    host_.parked_.erase(this);
    auto taken = std::make_shared<Reply>(std::move(taken_));
    std::promise<Reply>& promise = promise_;
    host_.when_durable(host_.core_->hand_out_seq(), [&promise, taken](bool ok) {
      if (ok) {
        promise.set_value(std::move(*taken));
      } else {
        promise.set_value(Status::io_error(kNotAcknowledged));
      }
    });
  }
  void time_out() {
    if (!waiting_) return;
    waiting_ = false;
    timer_.cancel();
    host_.parked_.erase(this);
    promise_.set_value(std::optional<engine::HandOut>());
  }

 private:
  Host& host_;
  std::string queue_;
  uint64_t conn_;
  asio::steady_timer timer_;
  std::promise<Reply>& promise_;  // lives in the caller's frame until set
  bool waiting_ = true;
  Reply taken_ = std::optional<engine::HandOut>();
};

void CallWaiters::add(uint64_t dep, std::function<void(bool ok)> done) {
  waiting_.emplace(dep, std::move(done));
  core_.wait_for_commit(shared_from_this(), waiting_.begin()->first);
}

void CallWaiters::on_commit(uint64_t seq, bool ok) {
  std::vector<std::function<void(bool)>> ready;
  std::vector<std::function<void(bool)>> failed;
  if (!ok) {
    // The failed group and everything staged after it were discarded.
    for (auto it = waiting_.lower_bound(seq); it != waiting_.end();) {
      failed.push_back(std::move(it->second));
      it = waiting_.erase(it);
    }
  }
  const uint64_t committed = core_.committed_seq();
  for (auto it = waiting_.begin(); it != waiting_.end() && it->first <= committed;) {
    ready.push_back(std::move(it->second));
    it = waiting_.erase(it);
  }
  if (!waiting_.empty()) core_.wait_for_commit(shared_from_this(), waiting_.begin()->first);
  for (auto& done : failed) done(false);
  for (auto& done : ready) done(true);
}

Host::Host(const Options& options) {
  if (options.io_context != nullptr) {
    io_ = options.io_context;
  } else {
    own_io_ = std::make_unique<asio::io_context>(1);
    io_ = own_io_.get();
    work_.emplace(asio::make_work_guard(*io_));
    thread_ = std::thread([this] {
      name_this_thread("tarde-io");
      io_->run();
    });
  }
}

Result<std::unique_ptr<Host>> Host::open(const Options& options) {
  if (!options.log_level.empty()) {
    spdlog::set_level(spdlog::level::from_str(options.log_level));
  }
  if (options.retry_lead.count() < 0 || options.retry_lead.count() > 1000) {
    return Status::invalid_argument("retry_lead must be between 0 and 1000 ms");
  }
  if (options.reconcile_every.count() < 0) {
    return Status::invalid_argument("reconcile_every must not be negative");
  }
  std::unique_ptr<Host> host(new Host(options));
  if (host->on_io_thread()) {
    return Status::busy("tarde cannot be opened on the io_context's own thread");
  }
  Status opened;
  host->run_on_io([&] {
    auto core = std::make_unique<net::Core>(*host->io_, host->figures_);
    opened = core->open(net::CoreOptions{.data_dir = options.data_dir,
                                         .sync = options.sync,
                                         .retry_lead_ms = options.retry_lead.count(),
                                         .backup_dir = {},  // no BACKUP in the embedded API
                                         .backup_rate_limit_bytes_per_s = 0,

                                         .reconcile_every_ms = options.reconcile_every.count()});
    if (!opened.is_ok()) {
      host->closed_ = true;
      return;
    }
    host->core_ = std::move(core);
    host->waiters_ = std::make_shared<CallWaiters>(*host->core_);
    host->core_->set_after_commands_hook([h = host.get()] { h->on_hook(); });
    host->core_->after_commands();  // arms the engine's timer
  });
  if (!opened.is_ok()) {
    host->close();
    return opened;
  }
  return host;
}

Host::~Host() { close(); }

bool Host::on_io_thread() const { return io_->get_executor().running_in_this_thread(); }

void Host::run_on_io(std::function<void()> fn) {
  std::promise<void> done;
  asio::post(*io_, [&] {
    fn();
    done.set_value();
  });
  done.get_future().get();
}

void Host::when_durable(uint64_t dep, std::function<void(bool ok)> done) {
  if (dep <= core_->committed_seq()) {
    done(true);
    return;
  }
  waiters_->add(dep, std::move(done));
}

uint64_t Host::new_holder() { return next_holder_++; }

Result<std::optional<engine::HandOut>> Host::reserve(const std::string& queue, uint64_t conn,
                                                     int64_t wait_ms) {
  using Reply = ParkedReserve::Reply;
  if (on_io_thread()) {
    return Status::busy("a blocking tarde call on its own io thread would wait for itself");
  }
  InFlight counted(*this);
  if (!accepting_) return Status::shutting_down("tarde is closed");
  std::promise<Reply> promise;
  auto future = promise.get_future();
  asio::post(*io_, [&, this] {
    if (closed_ || !core_) {
      promise.set_value(Status::shutting_down("tarde is closed"));
      return;
    }
    core_->reset_observed();
    auto got = core_->engine().reserve(queue, conn);
    if (!got.is_ok() || got.value() || wait_ms <= 0) {
      auto reply = std::make_shared<Reply>(std::move(got));
      when_durable(core_->hand_out_seq(), [&promise, reply](bool ok) {
        if (ok) {
          promise.set_value(std::move(*reply));
        } else {
          promise.set_value(Status::io_error(kNotAcknowledged));
        }
      });
    } else {
      auto parked = std::make_shared<ParkedReserve>(*this, queue, conn, promise);
      parked_[parked.get()] = parked;
      parked->start(wait_ms);
      core_->park(parked, queue);
    }
    core_->after_commands();
  });
  return future.get();
}

void Host::cancel_waits(uint64_t conn) {
  if (on_io_thread() || !accepting_) return;
  run_on_io([&] {
    std::vector<std::shared_ptr<ParkedReserve>> cancelled;
    for (auto& [raw, weak] : parked_) {
      auto parked = weak.lock();
      if (parked && parked->conn() == conn) cancelled.push_back(parked);
    }
    for (auto& parked : cancelled) parked->time_out();
  });
}

Status Host::holder_gone(uint64_t conn) {
  return call<bool>([conn](net::Core& core) -> Result<bool> {
           TARDE_RETURN_IF_ERROR(core.engine().connection_closed(conn));
           return true;
         })
      .status();
}

// io thread: once closing, the Core going idle ends close()'s wait.
void Host::on_hook() {
  if (idle_ && core_->idle()) {
    idle_->set_value();
    idle_.reset();
  }
}

void Host::close() {
  std::lock_guard<std::mutex> lock(close_mutex_);
  if (close_done_) return;
  close_done_ = true;
  if (on_io_thread()) {
    spdlog::error(LogRecord("close.on_io_thread").text("msg", "leaving the store open").line());
    return;
  }
  accepting_ = false;
  std::future<void> idle;
  run_on_io([&] {
    closed_ = true;
    std::vector<std::shared_ptr<ParkedReserve>> parked;
    for (auto& [raw, weak] : parked_) {
      if (auto p = weak.lock()) parked.push_back(p);
    }
    for (auto& p : parked) p->time_out();
    if (!core_) return;
    // Every lease still held goes back, as when connections close.
    const uint64_t holders = next_holder_.load();
    for (uint64_t conn = 1; conn < holders; ++conn) {
      Status status = core_->engine().connection_closed(conn);
      if (!status.is_ok()) {
        spdlog::error(LogRecord("release_leases.failed")
                          .number("conn", conn)
                          .text("error", status.to_string())
                          .line());
      }
    }
    core_->stop_timers();
    idle_.emplace();
    idle = idle_->get_future();
    core_->after_commands();
  });
  if (idle.valid()) idle.wait();
  // Callers that passed the accepting_ check before it changed get their
  // answer (shutting_down, or their commit's) before the io thread stops.
  while (in_flight_.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (own_io_) {
    work_.reset();
    io_->stop();
    if (thread_.joinable()) thread_.join();
    core_.reset();  // the io thread is gone: nothing else touches it
    waiters_.reset();
  } else {
    // Posted twice so that what the last commit posted runs first.
    run_on_io([this] {
      asio::post(*io_, [this] {
        core_.reset();
        waiters_.reset();
      });
    });
    run_on_io([] {});
  }
}

}  // namespace tarde::embedded
