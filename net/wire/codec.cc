#include "net/wire/codec.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include "base/assert.h"
#include "base/quote_token.h"

namespace tarde::net {
namespace {

// The longest plain-decimal length token worth reading: 20 digits hold every
// uint64_t, and any payload that large is refused long before.
constexpr std::size_t kLengthDigitsMax = 20;

// Room for the tokens of a usual line (ENQUEUE with a few options), reserved
// at once instead of grown three or four times; a longer line grows it.
constexpr std::size_t kTokensUsual = 8;

static_assert(kLineBytesMax >= 64, "a line must fit any command with its usual arguments");

DecodeResult make_error(ErrorCode code, std::size_t consumed, std::string message) {
  TARDE_DASSERT(closes_connection(code) ? consumed == 0 : consumed > 0);
  DecodeResult result;
  result.kind = DecodeResult::Kind::kError;
  result.consumed = consumed;
  result.error = code;
  result.message = std::move(message);
  return result;
}

// Splits `line` (terminator already removed) on runs of spaces. Only ' '
// separates: tabs, NUL and '\r' inside the line are token bytes, judged later.
void split_tokens(std::string_view line, std::vector<std::string_view>& tokens) {
  std::size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && line[pos] == ' ') ++pos;
    if (pos == line.size()) break;
    const std::size_t begin = pos;
    while (pos < line.size() && line[pos] != ' ') ++pos;
    tokens.push_back(line.substr(begin, pos - begin));
  }
}

// Parses a payload length: plain decimal digits only, no sign, no overflow.
std::optional<std::uint64_t> parse_length(std::string_view token) {
  if (token.empty() || token.size() > kLengthDigitsMax) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

}  // namespace

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kBadCommand:
      return "BAD_COMMAND";
    case ErrorCode::kBadArgument:
      return "BAD_ARGUMENT";
    case ErrorCode::kUnauthorized:
      return "UNAUTHORIZED";
    case ErrorCode::kInternal:
      return "INTERNAL";
    case ErrorCode::kLineTooLong:
      return "LINE_TOO_LONG";
    case ErrorCode::kPayloadTooLarge:
      return "PAYLOAD_TOO_LARGE";
    case ErrorCode::kBadPayload:
      return "BAD_PAYLOAD";
    case ErrorCode::kOverloaded:
      return "OVERLOADED";
    case ErrorCode::kShuttingDown:
      return "SHUTTING_DOWN";
    case ErrorCode::kNotConfigured:
      return "NOT_CONFIGURED";
    case ErrorCode::kBusy:
      return "BUSY";
    case ErrorCode::kBackupFailed:
      return "BACKUP_FAILED";
  }
  TARDE_ASSERT(false && "unknown ErrorCode");
  return "INTERNAL";
}

bool closes_connection(ErrorCode code) {
  switch (code) {
    case ErrorCode::kBadCommand:
    case ErrorCode::kBadArgument:
    case ErrorCode::kUnauthorized:
    case ErrorCode::kInternal:
    case ErrorCode::kNotConfigured:
    case ErrorCode::kBusy:
    case ErrorCode::kBackupFailed:
      return false;
    case ErrorCode::kLineTooLong:
    case ErrorCode::kPayloadTooLarge:
    case ErrorCode::kBadPayload:
    case ErrorCode::kOverloaded:
    case ErrorCode::kShuttingDown:
      return true;
  }
  TARDE_ASSERT(false && "unknown ErrorCode");
  return true;
}

Decoder::Decoder(std::size_t payload_bytes_max) : payload_bytes_max_(payload_bytes_max) {}

DecodeResult Decoder::decode(std::string_view buffer) const {
  // Only the first kLineBytesMax bytes can hold the '\n' of a legal line.
  const std::size_t window = buffer.size() < kLineBytesMax ? buffer.size() : kLineBytesMax;
  const void* newline = window == 0 ? nullptr : std::memchr(buffer.data(), '\n', window);
  if (newline == nullptr) {
    if (buffer.size() < kLineBytesMax) return DecodeResult{};  // kNeedMore
    return make_error(
        ErrorCode::kLineTooLong, 0,
        "line longer than " + std::to_string(kLineBytesMax) + " bytes including its terminator");
  }
  const auto newline_at =
      static_cast<std::size_t>(static_cast<const char*>(newline) - buffer.data());
  const std::size_t line_bytes = newline_at + 1;
  std::string_view line = buffer.substr(0, newline_at);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);

  // The token list of every decode on this thread: its room stays, so a
  // command costs no allocation for it (the views die with this call).
  thread_local std::vector<std::string_view> tokens;
  tokens.clear();
  tokens.reserve(kTokensUsual);
  split_tokens(line, tokens);
  if (tokens.empty()) {
    return make_error(ErrorCode::kBadCommand, line_bytes, "empty line: expected a command");
  }

  const bool has_payload = tokens.front() == kPayloadVerb;
  if (has_payload && tokens.size() == 1) {
    return make_error(ErrorCode::kBadCommand, line_bytes,
                      "ENQUEUE needs <queue> <tx_id> [name=value ...] <bytes>");
  }

  std::size_t total_bytes = line_bytes;
  std::optional<std::string> payload;
  if (has_payload) {
    const std::string_view length_token = tokens.back();
    const std::optional<std::uint64_t> length = parse_length(length_token);
    if (!length.has_value()) {
      return make_error(ErrorCode::kBadPayload, 0,
                        "payload length (the last token of ENQUEUE) must be plain decimal "
                        "digits, got " +
                            quote_token(length_token));
    }
    if (*length > payload_bytes_max_) {
      return make_error(ErrorCode::kPayloadTooLarge, 0,
                        "payload of " + std::to_string(*length) + " bytes is over the limit of " +
                            std::to_string(payload_bytes_max_) + " bytes");
    }
    const auto payload_bytes = static_cast<std::size_t>(*length);
    const std::size_t cr_at = line_bytes + payload_bytes;
    // After a payload only "\r\n" is accepted, never a bare "\n": with binary
    // payloads a lenient terminator would let a wrong length pass unnoticed.
    if (buffer.size() > cr_at && buffer[cr_at] != '\r') {
      return make_error(ErrorCode::kBadPayload, 0,
                        "payload of " + std::to_string(payload_bytes) +
                            " bytes must be followed by \\r\\n; check the length");
    }
    if (buffer.size() > cr_at + 1 && buffer[cr_at + 1] != '\n') {
      return make_error(ErrorCode::kBadPayload, 0,
                        "payload of " + std::to_string(payload_bytes) +
                            " bytes must be followed by \\r\\n; check the length");
    }
    if (buffer.size() < cr_at + 2) return DecodeResult{};  // kNeedMore
    payload.emplace(buffer.substr(line_bytes, payload_bytes));
    total_bytes = cr_at + 2;
    tokens.pop_back();
  }

  DecodeResult result;
  result.kind = DecodeResult::Kind::kCommand;
  result.consumed = total_bytes;
  result.command.verb.assign(tokens.front());
  result.command.args.reserve(tokens.size() - 1);
  for (std::size_t i = 1; i < tokens.size(); ++i) result.command.args.emplace_back(tokens[i]);
  result.command.payload = std::move(payload);
  return result;
}

}  // namespace tarde::net
