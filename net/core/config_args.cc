#include "net/core/config_args.h"

#include <cmath>

namespace tarde::net {
namespace {

// Upper bounds that keep a queue's settings meaningful: attempts and
// deliveries as PROTOCOL.md bounds attempt numbers; a rate that a single
// server could never exceed anyway.
constexpr uint64_t kMaxAttempts = 1000;
constexpr uint64_t kMaxDeliveries = 1000;
constexpr uint64_t kMaxTransient = 1000;
constexpr double kMaxRate = 10'000'000;
constexpr uint64_t kHistoryMax = 1'000'000;

template <typename T>
std::optional<ArgError> set(Result<T> parsed, T* field) {
  if (!parsed.is_ok()) return to_arg_error(parsed.status());
  *field = parsed.value();
  return std::nullopt;
}

std::optional<ArgError> set_count(std::string_view name, std::string_view value, uint64_t min,
                                  uint64_t max, uint32_t* field) {
  auto parsed = parse_uint(value, name, max, min);
  if (!parsed.is_ok()) return to_arg_error(parsed.status());
  *field = static_cast<uint32_t>(parsed.value());
  return std::nullopt;
}

std::optional<ArgError> set_ratio(std::string_view name, std::string_view value, double min,
                                  double max, double* field) {
  auto parsed = parse_decimal(value, name);
  if (!parsed.is_ok()) return to_arg_error(parsed.status());
  const double v = parsed.value();
  if (!(v >= min && v <= max)) {
    return ArgError{
        ErrorCode::kBadArgument,
        std::string(name) + " must be from " + format_decimal(min) + " to " + format_decimal(max)};
  }
  *field = v;
  return std::nullopt;
}

std::optional<ArgError> apply_one(std::string_view name, std::string_view value,
                                  storage::QueueConfig* c) {
  storage::RetryPolicy& p = c->policy;
  if (name == "max_attempts") return set_count(name, value, 1, kMaxAttempts, &p.max_attempts);
  if (name == "base") return set(parse_duration_ms(value, name), &p.base_ms);
  if (name == "factor") return set_ratio(name, value, 1, 1000, &p.factor);
  if (name == "cap") return set(parse_duration_ms(value, name), &p.cap_ms);
  if (name == "jitter") return set_ratio(name, value, 0, 1, &p.jitter);
  if (name == "strict_cap") return set(parse_bool01(value, name), &p.strict_cap);
  if (name == "transient_base") return set(parse_duration_ms(value, name), &p.transient_base_ms);
  if (name == "transient_factor") return set_ratio(name, value, 1, 1000, &p.transient_factor);
  if (name == "transient_cap") return set(parse_duration_ms(value, name), &p.transient_cap_ms);
  if (name == "max_transient") return set_count(name, value, 0, kMaxTransient, &p.max_transient);
  if (name == "lease") {
    auto lease = parse_duration_ms(value, name);
    if (lease.is_ok() && lease.value() == 0) {
      return ArgError{ErrorCode::kBadArgument, "lease must be above 0"};
    }
    return set(std::move(lease), &c->lease_ms);
  }
  if (name == "max_deliveries") {
    return set_count(name, value, 1, kMaxDeliveries, &c->max_deliveries);
  }
  if (name == "rate") return set_ratio(name, value, 0, kMaxRate, &c->rate);
  if (name == "response_timeout")
    return set(parse_duration_ms(value, name), &c->response_timeout_ms);
  if (name == "breaker") return set(parse_bool01(value, name), &c->breaker);
  if (name == "retention") return set(parse_duration_ms(value, name), &c->retention_ms);
  if (name == "history_max") return set_count(name, value, 2, kHistoryMax, &c->history_max);
  if (name == "stuck_after") return set(parse_duration_ms(value, name), &c->stuck_after_ms);
  return ArgError{ErrorCode::kBadArgument, "unknown setting '" + std::string(name) + "'"};
}

}  // namespace

const std::vector<std::string_view> kConfigNames = {"max_attempts",   "base",
                                                    "factor",         "cap",
                                                    "jitter",         "strict_cap",
                                                    "transient_base", "transient_factor",
                                                    "transient_cap",  "max_transient",
                                                    "lease",          "max_deliveries",
                                                    "rate",           "response_timeout",
                                                    "breaker",        "retention",
                                                    "history_max",    "stuck_after"};

std::optional<ArgError> apply_config_options(
    const std::vector<std::pair<std::string_view, std::string_view>>& options,
    storage::QueueConfig* config) {
  storage::QueueConfig updated = *config;
  for (const auto& [name, value] : options) {
    if (auto error = apply_one(name, value, &updated)) return error;
  }
  *config = updated;
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> config_values(const storage::QueueConfig& c) {
  const storage::RetryPolicy& p = c.policy;
  return {
      {"max_attempts", std::to_string(p.max_attempts)},
      {"base", format_duration_ms(p.base_ms)},
      {"factor", format_decimal(p.factor)},
      {"cap", format_duration_ms(p.cap_ms)},
      {"jitter", format_decimal(p.jitter)},
      {"strict_cap", p.strict_cap ? "1" : "0"},
      {"transient_base", format_duration_ms(p.transient_base_ms)},
      {"transient_factor", format_decimal(p.transient_factor)},
      {"transient_cap", format_duration_ms(p.transient_cap_ms)},
      {"max_transient", std::to_string(p.max_transient)},
      {"lease", format_duration_ms(c.lease_ms)},
      {"max_deliveries", std::to_string(c.max_deliveries)},
      {"rate", format_decimal(c.rate)},
      {"response_timeout", format_duration_ms(c.response_timeout_ms)},
      {"breaker", c.breaker ? "1" : "0"},
      {"retention", format_duration_ms(c.retention_ms)},
      {"history_max", std::to_string(c.history_max)},
      {"stuck_after", format_duration_ms(c.stuck_after_ms)},
      {"paused", c.paused ? "1" : "0"},
  };
}

}  // namespace tarde::net
