#include "net/wire/tokens.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

#include "base/assert.h"
#include "base/quote_token.h"

namespace tarde::net {
namespace {

constexpr std::int64_t kMsPerSecond = 1000;
constexpr std::int64_t kMsPerMinute = 60 * kMsPerSecond;
constexpr std::int64_t kMsPerHour = 60 * kMsPerMinute;
constexpr std::int64_t kMsPerDay = 24 * kMsPerHour;

// A duration unit as written on the wire, largest first so that
// format_duration_ms picks the largest exact one.
struct DurationUnit {
  std::string_view suffix;
  std::int64_t ms;
};
constexpr std::array<DurationUnit, 5> kDurationUnits = {{
    {"d", kMsPerDay},
    {"h", kMsPerHour},
    {"m", kMsPerMinute},
    {"s", kMsPerSecond},
    {"ms", 1},
}};

static_assert(kDurationMsMax == 3650 * kMsPerDay, "DUR is bounded by 3650d");

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_printable(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte >= 0x21 && byte <= 0x7E;
}

bool is_queue_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || is_digit(c) || c == '_' || c == '.' ||
         c == '-';
}

// Reads plain decimal digits into a uint64_t; nullopt for an empty token, any
// other byte, or a value beyond uint64_t.
std::optional<std::uint64_t> read_digits(std::string_view digits) {
  if (digits.empty()) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : digits) {
    if (!is_digit(c)) return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

std::string got(std::string_view token) { return ", got " + quote_token(token); }

// The check shared by tx_id and reason: 1 to `bytes_max` printable bytes.
// Its message is built only on failure: it runs for every command.
Status check_printable(std::string_view token, std::string_view name, std::size_t bytes_max) {
  auto form = [&] {
    return std::string(name) + " must be 1 to " + std::to_string(bytes_max) +
           " printable ASCII bytes (0x21-0x7E, no spaces)";
  };
  if (token.empty()) return Status::invalid_argument(form() + ", got an empty token");
  if (token.size() > bytes_max) {
    return Status::invalid_argument(form() + ", got " + std::to_string(token.size()) + " bytes");
  }
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (!is_printable(token[i])) {
      return Status::invalid_argument(form() + ", got a bad byte at offset " + std::to_string(i) +
                                      " of " + quote_token(token));
    }
  }
  return Status::ok();
}

}  // namespace

Result<std::string> parse_tx_id(std::string_view token, std::string_view name) {
  TARDE_RETURN_IF_ERROR(check_printable(token, name, kTxIdBytesMax));
  return std::string(token);
}

Result<std::string_view> check_tx_id(std::string_view token, std::string_view name) {
  TARDE_RETURN_IF_ERROR(check_printable(token, name, kTxIdBytesMax));
  return token;
}

Result<std::string> parse_queue(std::string_view token, std::string_view name) {
  auto form = [name] {
    return std::string(name) + " must be 1 to " + std::to_string(kQueueBytesMax) +
           " bytes of A-Z a-z 0-9 _ . -";
  };
  if (token.empty()) return Status::invalid_argument(form() + ", got an empty token");
  if (token.size() > kQueueBytesMax) {
    return Status::invalid_argument(form() + ", got " + std::to_string(token.size()) + " bytes");
  }
  for (const char c : token) {
    if (!is_queue_char(c)) return Status::invalid_argument(form() + got(token));
  }
  return std::string(token);
}

Result<std::uint32_t> parse_attempt(std::string_view token, std::string_view name) {
  Result<std::uint64_t> attempt = parse_uint(token, name, kAttemptMax, 1);
  if (!attempt.is_ok()) return attempt.status();
  return static_cast<std::uint32_t>(attempt.value());
}

Result<std::int64_t> parse_duration_ms(std::string_view token, std::string_view name) {
  std::size_t digits_end = 0;
  while (digits_end < token.size() && is_digit(token[digits_end])) ++digits_end;
  const std::string_view digits = token.substr(0, digits_end);
  const std::string_view suffix = token.substr(digits_end);

  std::int64_t unit_ms = 0;
  if (suffix.empty()) unit_ms = 1;  // a bare integer is milliseconds
  for (const DurationUnit& unit : kDurationUnits) {
    if (suffix == unit.suffix) unit_ms = unit.ms;
  }
  if (digits.empty() || unit_ms == 0) {
    return Status::invalid_argument(std::string(name) +
                                    " must be a whole number with an optional unit ms, s, m, h "
                                    "or d (such as 1500ms or 2h)" +
                                    got(token));
  }
  const std::optional<std::uint64_t> count = read_digits(digits);
  // Dividing the bound (not multiplying the count) is what keeps this overflow-free;
  // the bound is a whole number of days, so the division is exact for every unit.
  const auto count_max = static_cast<std::uint64_t>(kDurationMsMax / unit_ms);
  if (!count.has_value() || *count > count_max) {
    return Status::invalid_argument(std::string(name) + " must be at most 3650d" + got(token));
  }
  return static_cast<std::int64_t>(*count) * unit_ms;
}

Result<double> parse_decimal(std::string_view token, std::string_view name) {
  auto form = [name] {
    return std::string(name) + " must be a decimal number such as 2, 1.6 or 0.1";
  };
  const std::size_t dot = token.find('.');
  const std::string_view whole = token.substr(0, dot);
  const std::string_view fraction =
      dot == std::string_view::npos ? std::string_view("0") : token.substr(dot + 1);
  const auto all_digits = [](std::string_view part) {
    if (part.empty()) return false;
    for (const char c : part) {
      if (!is_digit(c)) return false;
    }
    return true;
  };
  // A second '.' lands in `fraction` and fails all_digits there.
  if (!all_digits(whole) || !all_digits(fraction)) {
    return Status::invalid_argument(form() + got(token));
  }
  double value = 0;
  const auto [end, error] =
      std::from_chars(token.data(), token.data() + token.size(), value, std::chars_format::fixed);
  if (error != std::errc() || end != token.data() + token.size() || !std::isfinite(value)) {
    return Status::invalid_argument(form() + " within the range of a double" + got(token));
  }
  return value;
}

Result<std::uint64_t> parse_uint(std::string_view token, std::string_view name, std::uint64_t max,
                                 std::uint64_t min) {
  TARDE_ASSERT(min <= max);
  const std::optional<std::uint64_t> value = read_digits(token);
  if (!value.has_value() || *value < min || *value > max) {
    return Status::invalid_argument(std::string(name) + " must be a whole number from " +
                                    std::to_string(min) + " to " + std::to_string(max) +
                                    got(token));
  }
  return *value;
}

Result<bool> parse_bool01(std::string_view token, std::string_view name) {
  if (token == "0") return false;
  if (token == "1") return true;
  return Status::invalid_argument(std::string(name) + " must be 0 or 1" + got(token));
}

Result<std::string> parse_reason(std::string_view token, std::string_view name) {
  TARDE_RETURN_IF_ERROR(check_printable(token, name, kReasonBytesMax));
  return std::string(token);
}

ArgError to_arg_error(const Status& status) {
  TARDE_ASSERT(!status.is_ok());
  return ArgError{ErrorCode::kBadArgument, status.message()};
}

std::optional<std::string_view> ParsedArgs::option(std::string_view name) const {
  for (const auto& [option_name, value] : options) {
    if (option_name == name) return value;
  }
  return std::nullopt;
}

ArgsResult split_args(const std::vector<std::string>& args, std::size_t positional_count,
                      std::span<const std::string_view> allowed_names) {
  // The messages are built only for a reply that needs them: split_args runs
  // for every command.
  auto expected = [positional_count] {
    return "expected " + std::to_string(positional_count) +
           " argument(s) before any name=value option";
  };
  if (args.size() < positional_count) {
    return ArgError{ErrorCode::kBadCommand, expected() + ", got " + std::to_string(args.size())};
  }
  ParsedArgs parsed;
  parsed.positional = std::span<const std::string>(args.data(), positional_count);
  // Shape first: every arg after the positionals must be name=value.
  for (std::size_t i = positional_count; i < args.size(); ++i) {
    if (args[i].find('=') != std::string::npos) continue;
    const bool after_option = i > positional_count;
    return ArgError{ErrorCode::kBadCommand,
                    (after_option ? "positional argument " + quote_token(args[i]) +
                                        " after a name=value option; " + expected()
                                  : "too many arguments: " + expected() + ", got extra " +
                                        quote_token(args[i]))};
  }
  for (std::size_t i = positional_count; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    const std::size_t equals = arg.find('=');
    const std::string_view name = arg.substr(0, equals);
    const std::string_view value = arg.substr(equals + 1);
    if (name.empty()) {
      return ArgError{ErrorCode::kBadArgument, "option " + quote_token(arg) + " has no name"};
    }
    const bool allowed =
        std::find(allowed_names.begin(), allowed_names.end(), name) != allowed_names.end();
    if (!allowed) {
      std::string allowed_list;
      for (const std::string_view allowed_name : allowed_names) {
        allowed_list += (allowed_list.empty() ? "" : ", ") + std::string(allowed_name);
      }
      return ArgError{ErrorCode::kBadArgument,
                      "unknown option " + quote_token(name) +
                          (allowed_list.empty() ? "; this command takes no options"
                                                : "; allowed: " + allowed_list)};
    }
    if (parsed.option(name).has_value()) {
      return ArgError{ErrorCode::kBadArgument, "option " + quote_token(name) + " given twice"};
    }
    if (value.empty()) {
      return ArgError{ErrorCode::kBadArgument,
                      "option " + quote_token(name) + " has an empty value"};
    }
    parsed.options.emplace_back(name, value);
  }
  return parsed;
}

ArgsResult split_args(const std::vector<std::string>& args, std::size_t positional_count,
                      std::initializer_list<std::string_view> allowed_names) {
  return split_args(args, positional_count,
                    std::span<const std::string_view>(allowed_names.begin(), allowed_names.size()));
}

std::string format_decimal(double value) {
  TARDE_ASSERT(std::isfinite(value));
  TARDE_ASSERT(value >= 0);
  if (value == 0) return "0";  // also for -0.0, which to_chars prints as "-0"
  // Fixed notation of the smallest subnormal needs about 330 characters.
  std::array<char, 512> buffer{};
  const auto [end, error] =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::fixed);
  TARDE_ASSERT(error == std::errc());
  return std::string(buffer.data(), end);
}

std::string format_duration_ms(std::int64_t duration_ms) {
  TARDE_ASSERT(duration_ms >= 0);
  if (duration_ms == 0) return "0ms";
  for (const DurationUnit& unit : kDurationUnits) {
    if (duration_ms % unit.ms == 0)
      return std::to_string(duration_ms / unit.ms) + std::string(unit.suffix);
  }
  TARDE_ASSERT(false && "every duration is a whole number of ms");
  return "0ms";
}

bool same_token(std::string_view given, std::string_view expected) {
  // One OR of differences per byte of expected, whatever was given; a length
  // mismatch is folded in the same way instead of returning early.
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    const char g = i < given.size() ? given[i] : 0;
    diff |= static_cast<unsigned char>(g ^ expected[i]);
  }
  return diff == 0;
}

}  // namespace tarde::net
