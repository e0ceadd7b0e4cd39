#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/assert.h"
#include "base/quote_token.h"
#include "base/status.h"
#include "net/wire/codec.h"

// The token half of the wire protocol (net/PROTOCOL.md, "Tokens"): strict
// parsers from a framed command's raw tokens to typed values, the split of
// arguments into positionals and name=value options, and the formatters that
// print values back in the same forms. Pure functions; call from any thread.
//
// Every parser takes the token and the name it is known by on the wire
// ("attempt", "delay", ...) and fails with Status::invalid_argument whose
// message names that token and says what was expected, for example
//   attempt must be a whole number from 1 to 1000, got '0'
// Echoed tokens are shown through quote_token, so a message never carries a
// control byte or an unbounded length into a reply line.
namespace tarde::net {

// tx_id: 1 to 200 printable bytes (PROTOCOL.md "Tokens"). Long enough for any
// business key with a prefix; short enough to keep index keys small.
inline constexpr std::size_t kTxIdBytesMax = 200;
// queue: 1 to 64 bytes of A-Z a-z 0-9 _ . - (PROTOCOL.md "Tokens"); names
// appear in metrics and keys, so they stay short and shell-safe.
inline constexpr std::size_t kQueueBytesMax = 64;
// attempt: 1 to 1000 (PROTOCOL.md "Tokens"); more attempts than that is a
// configuration mistake, not a retry policy.
inline constexpr std::uint32_t kAttemptMax = 1000;
// DUR: at most 3650 days (PROTOCOL.md "Tokens"), which keeps now + duration
// far from int64 overflow for any epoch time in milliseconds.
inline constexpr std::int64_t kDurationMsMax = 3650LL * 24 * 60 * 60 * 1000;
// TOKEN (reason): 1 to 200 printable bytes (PROTOCOL.md "Tokens"), kept with
// the transaction and its events, so bounded like tx_id.
inline constexpr std::size_t kReasonBytesMax = 200;

static_assert(kTxIdBytesMax < kLineBytesMax, "a maximal tx_id must fit in a request line");
static_assert(kReasonBytesMax < kLineBytesMax, "a maximal reason must fit in a request line");
static_assert(kDurationMsMax < INT64_MAX / 4, "now + a maximal duration must not overflow");

// True when given equals expected (the AUTH token). Constant-time in what the
// client controls: it always walks all of expected and never exits early, so
// the time taken does not tell how much of a guessed token was right; only
// the expected token's length could be learnt from it.
bool same_token(std::string_view given, std::string_view expected);

// tx_id: 1-200 bytes, each 0x21-0x7E. Returns the tx_id as given.
Result<std::string> parse_tx_id(std::string_view token, std::string_view name = "tx_id");
// The same check, returning a view of `token` itself, which must outlive it:
// no copy for a command's own tokens.
Result<std::string_view> check_tx_id(std::string_view token, std::string_view name = "tx_id");

// queue: 1-64 bytes of A-Z a-z 0-9 _ . -. Returns the queue name as given.
Result<std::string> parse_queue(std::string_view token, std::string_view name = "queue");

// attempt: plain decimal digits, 1-1000.
Result<std::uint32_t> parse_attempt(std::string_view token, std::string_view name = "attempt");

// DUR: plain decimal digits, then optionally a unit ms, s, m, h or d (lower
// case; no unit means ms), at most 3650d. Returns milliseconds, 0 to
// kDurationMsMax. Never overflows, however many digits the token has.
Result<std::int64_t> parse_duration_ms(std::string_view token, std::string_view name);

// F: digits, optionally followed by '.' and at least one digit ("2", "1.6",
// "0.1"). No sign, exponent, leading or trailing '.'. Returns the nearest
// double; a value beyond double's range is an error. Range rules (factor >= 1,
// jitter <= 1) belong to the caller.
Result<double> parse_decimal(std::string_view token, std::string_view name);

// A plain decimal integer (digits only: no sign, no fraction, no exponent)
// from `min` to `max`. Leading zeros are accepted ("007" is 7).
// Requires: min <= max.
Result<std::uint64_t> parse_uint(std::string_view token, std::string_view name, std::uint64_t max,
                                 std::uint64_t min = 0);

// "0" or "1", exactly.
Result<bool> parse_bool01(std::string_view token, std::string_view name);

// TOKEN (a reason): 1-200 bytes, each 0x21-0x7E. Returns it as given.
Result<std::string> parse_reason(std::string_view token, std::string_view name = "reason");

// ArgError is a rejected request's reply code plus message: BAD_COMMAND when
// the arguments do not fit the command's shape (their count or order),
// BAD_ARGUMENT when one fails its form. Sessions turn it into one `ERR` line.
struct ArgError {
  ErrorCode code = ErrorCode::kBadArgument;
  std::string message;

  bool operator==(const ArgError&) const = default;
};

// A token parser's failure as the reply it calls for: BAD_ARGUMENT with the
// parser's message. Requires: !status.is_ok().
ArgError to_arg_error(const Status& status);

// ParsedArgs is a command's arguments sorted into positionals (in order) and
// name=value options (in the order given, names unique). It holds views into
// the Command::args it came from, which must outlive it: the positionals are
// their first elements, taken as they are.
struct ParsedArgs {
  std::span<const std::string> positional;
  std::vector<std::pair<std::string_view, std::string_view>> options;

  // The value of option `name`, or nullopt when it was not given.
  [[nodiscard]] std::optional<std::string_view> option(std::string_view name) const;
};

// ArgsResult is what split_args returns: the sorted arguments or the ArgError
// that rejects them.
class [[nodiscard]] ArgsResult {
 public:
  ArgsResult(ParsedArgs args) : value_(std::move(args)) {}  // NOLINT: implicit by design
  ArgsResult(ArgError error) : value_(std::move(error)) {}  // NOLINT: implicit by design

  [[nodiscard]] bool is_ok() const { return std::holds_alternative<ParsedArgs>(value_); }
  // Requires: is_ok() (asserted).
  [[nodiscard]] const ParsedArgs& value() const& {
    TARDE_ASSERT(is_ok());
    return *std::get_if<ParsedArgs>(&value_);
  }
  ParsedArgs&& value() && {
    TARDE_ASSERT(is_ok());
    return std::move(*std::get_if<ParsedArgs>(&value_));
  }
  // Requires: !is_ok() (asserted).
  [[nodiscard]] const ArgError& error() const {
    TARDE_ASSERT(!is_ok());
    return *std::get_if<ArgError>(&value_);
  }

 private:
  std::variant<ParsedArgs, ArgError> value_;
};

// Sorts `args` by position: the first `positional_count` are positionals
// whatever they contain (a tx_id may hold '='); every later arg must be
// name=value, split at its first '=' (the value may contain '=').
// Errors, checked in this order:
// - BAD_COMMAND: fewer than `positional_count` args; an arg after them
//   without '=' (too many positionals, or a positional after an option).
// - BAD_ARGUMENT: an option with an empty name ("=5"), a name not in
//   `allowed_names`, a name given twice, or an empty value ("delay=").
// Option values are not parsed here; pass them to the token parsers.
ArgsResult split_args(const std::vector<std::string>& args, std::size_t positional_count,
                      std::span<const std::string_view> allowed_names);
ArgsResult split_args(const std::vector<std::string>& args, std::size_t positional_count,
                      std::initializer_list<std::string_view> allowed_names);
// ParsedArgs would point into a destroyed temporary: pass the Command's args.
ArgsResult split_args(std::vector<std::string>&& args, std::size_t positional_count,
                      std::span<const std::string_view> allowed_names) = delete;
ArgsResult split_args(std::vector<std::string>&& args, std::size_t positional_count,
                      std::initializer_list<std::string_view> allowed_names) = delete;

// Prints a non-negative F in the shortest plain form that parses back to the
// same double: 2 -> "2", 1.6 -> "1.6", 0.1 -> "0.1"; never an exponent.
// Requires: value is finite and >= 0.
std::string format_decimal(double value);

// Prints a DUR in the largest unit that holds it exactly: 7200000 -> "2h",
// 90000 -> "90s", 1500 -> "1500ms", 0 -> "0ms". parse_duration_ms reads it
// back unchanged. Requires: duration_ms >= 0.
std::string format_duration_ms(std::int64_t duration_ms);

}  // namespace tarde::net
