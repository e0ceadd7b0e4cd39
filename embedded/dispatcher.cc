#include "embedded/dispatcher.h"

#include <cxxabi.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <exception>
#include <typeinfo>

#include "base/log_record.h"
#include "embedded/convert.h"
#include "net/wire/tokens.h"

namespace tarde::embedded {
namespace {

// After a failed RESERVE (a storage error), a worker waits this long before
// it tries again, so that a failing disk is not polled in a tight loop.
constexpr auto kRetryPause = std::chrono::milliseconds(100);
constexpr size_t kReasonChars = 64;
using net::kReasonBytesMax;

}  // namespace

std::string exception_reason() {
  const std::type_info* type = abi::__cxa_current_exception_type();
  if (type == nullptr) return "unknown_exception";
  int status = 0;
  char* demangled = abi::__cxa_demangle(type->name(), nullptr, nullptr, &status);
  std::string name = (status == 0 && demangled != nullptr) ? demangled : type->name();
  std::free(demangled);
  std::string reason;
  for (char c : name) {
    if (reason.size() >= kReasonChars) break;
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == ':' || c == '.' || c == '-';
    reason += keep ? c : '_';
  }
  return reason.empty() ? "unknown_exception" : reason;
}

DispatchLoop::DispatchLoop(Host& host, std::string queue, Handler handler, DispatchOptions options)
    : host_(host), queue_(std::move(queue)), handler_(std::move(handler)), options_(options) {
  const unsigned workers = std::max(1u, options_.concurrency);
  for (unsigned i = 0; i < workers; ++i) holders_.push_back(host_.new_holder());
  for (uint64_t holder : holders_) workers_.emplace_back([this, holder] { run(holder); });
}

DispatchLoop::~DispatchLoop() { stop(); }

void DispatchLoop::stop() {
  std::lock_guard<std::mutex> lock(stop_mutex_);
  // Once stopped, the Host is not touched again: it may be gone (the Tarde
  // stopped this loop when it closed, before the application's handle).
  if (stopped_) return;
  stopped_ = true;
  stopping_ = true;
  for (uint64_t holder : holders_) host_.cancel_waits(holder);
  for (std::thread& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
}

void DispatchLoop::run(uint64_t holder) {
  while (!stopping_) {
    auto got = host_.reserve(queue_, holder, options_.wait.count());
    if (!got.is_ok()) {
      if (got.status().code() == Status::Code::kShuttingDown) break;
      spdlog::warn(LogRecord("dispatch.reserve_failed")
                       .text("queue", queue_)
                       .text("error", got.status().to_string())
                       .line());
      std::this_thread::sleep_for(kRetryPause);
      continue;
    }
    if (!got.value()) continue;
    serve(holder, to_public(queue_, *got.value()));
  }
  // Leases a stopped worker still holds go back (none, unless an answer failed).
  Status gone = host_.holder_gone(holder);
  if (!gone.is_ok() && gone.code() != Status::Code::kShuttingDown) {
    spdlog::warn(LogRecord("dispatch.release_failed")
                     .text("queue", queue_)
                     .text("error", gone.to_string())
                     .line());
  }
}

void DispatchLoop::serve(uint64_t holder, const Request& request) {
  (void)holder;
  // SENT right before the call: from here on the request counts as out.
  auto sent = host_.call<engine::TxReply>(
      [&](net::Core& core) { return core.engine().sent(request.tx_id, request.attempt); });
  if (!sent.is_ok() || sent.value().outcome != engine::Outcome::kOk) {
    errors_++;  // not ours any more (lease expired), or the store refused
    return;
  }
  Response response;
  try {
    response = handler_(request);
  } catch (...) {
    response = Response::transient(exception_reason());
  }
  handled_++;
  // A reason is one printable token on the wire: anything else becomes '_'.
  for (char& c : response.reason) {
    if (c <= ' ' || c > '~') c = '_';
  }
  if (response.reason.size() > kReasonBytesMax) response.reason.resize(kReasonBytesMax);
  auto answered = host_.call<engine::TxReply>([&](net::Core& core) {
    std::optional<int64_t> retry_after;
    if (response.retry_after) retry_after = response.retry_after->count();
    return core.engine().respond(request.tx_id, request.attempt, to_engine(response.answer),
                                 response.reason, retry_after);
  });
  if (!answered.is_ok() || answered.value().outcome != engine::Outcome::kOk) errors_++;
}

}  // namespace tarde::embedded
