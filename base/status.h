#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace tarde {

// Status is how every module boundary reports success or an operating error.
// Exceptions never cross a module boundary: third-party throwers are caught at
// the closest wrapper and turned into a Status. A Status is a plain value;
// copy it freely on any thread.
class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk = 0,
    kNotFound,
    kInvalidArgument,
    kCorruption,
    kIoError,
    kBusy,
    kShuttingDown,
  };

  Status() = default;
  static Status ok() { return Status(); }
  static Status not_found(std::string message) { return {Code::kNotFound, std::move(message)}; }
  static Status invalid_argument(std::string message) {
    return {Code::kInvalidArgument, std::move(message)};
  }
  static Status corruption(std::string message) { return {Code::kCorruption, std::move(message)}; }
  static Status io_error(std::string message) { return {Code::kIoError, std::move(message)}; }
  static Status busy(std::string message) { return {Code::kBusy, std::move(message)}; }
  static Status shutting_down(std::string message) {
    return {Code::kShuttingDown, std::move(message)};
  }

  bool is_ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // A short text for logs: "corruption: bad record in tx".
  std::string to_string() const;

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

// Result<T> carries either a value or the Status that explains its absence.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT: implicit by design

  bool is_ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace tarde

// TARDE_RETURN_IF_ERROR(expr) returns the Status of expr from the enclosing
// function when it is not ok.
#define TARDE_RETURN_IF_ERROR(expr)                   \
  do {                                                \
    ::tarde::Status tarde_status_ = (expr);           \
    if (!tarde_status_.is_ok()) return tarde_status_; \
  } while (0)
