#include "net/core/reconcile_loop.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "base/log_record.h"

namespace tarde::net {

ReconcileLoop::ReconcileLoop(asio::io_context& io, engine::Engine& engine, storage::Store& store,
                             Clock& clock, std::function<bool()> may_run,
                             std::function<void()> after_slice)
    : io_(io),
      timer_(io),
      reconciler_(engine, store, clock),
      may_run_(std::move(may_run)),
      after_slice_(std::move(after_slice)) {}

ReconcileLoop::~ReconcileLoop() { stop(); }

void ReconcileLoop::start(int64_t every_ms) {
  every_ms_ = every_ms;
  if (every_ms_ <= 0) return;
  arm(every_ms_);
}

void ReconcileLoop::stop() {
  *alive_ = false;
  timer_.cancel();
}

void ReconcileLoop::arm(int64_t delay_ms) {
  if (!*alive_) return;
  timer_.expires_after(std::chrono::milliseconds(delay_ms));
  timer_.async_wait([this, alive = alive_](const asio::error_code& ec) {
    if (ec == asio::error::operation_aborted || !*alive) return;
    if (!reconciler_.in_pass() && !may_run_()) {
      arm(every_ms_);  // the start-up sweep (or a storage fault) first
      return;
    }
    run_slice();
  });
}

void ReconcileLoop::run_slice() {
  engine::Reconciler::SliceReport report;
  Status status = reconciler_.slice(&report);
  for (const std::string& line : report.repairs) {
    spdlog::warn(LogRecord("reconcile.repair").text("msg", line).line());
  }
  for (const std::string& line : report.alerts) {
    spdlog::warn(LogRecord("alert.stuck").text("msg", line).line());
  }
  after_slice_();
  if (!status.is_ok()) {
    spdlog::error(LogRecord("reconcile.failed")
                      .text("error", status.to_string())
                      .number("retry_in_ms", every_ms_)
                      .line());
    arm(every_ms_);
    return;
  }
  if (report.pass_done) {
    spdlog::debug(LogRecord("reconcile.pass_done")
                      .number("took_ms", reconciler_.last_pass_ms())
                      .number("examined", reconciler_.last_pass_examined())
                      .number("repairs_total", reconciler_.repairs())
                      .line());
    arm(every_ms_);
    return;
  }
  // The next slice after what is already queued: commands come first.
  asio::post(io_, [this, alive = alive_] {
    if (*alive) run_slice();
  });
}

}  // namespace tarde::net
