// libFuzzer target for the wire protocol: net/wire/codec.h framing and the
// net/wire/tokens.h parsers applied to what it frames.
//
// Input layout: byte 0 picks the payload limit, byte 1 (mod 16) how many
// chunk sizes follow, then those chunk sizes (each 1-256 bytes), then the
// byte stream a client sends. The stream is decoded twice, the way a session
// does (append, decode until need-more, drop what was consumed): once whole
// and once arriving in chunks of the chosen sizes, cycled. Both must give
// the same results in the same order. Every framed command is also checked
// on its own (re-framing it gives it back) and run through every token
// parser, whose results must respect their documented ranges.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "net/wire/codec.h"
#include "net/wire/tokens.h"
#include "tests/fuzz/fuzz_check.h"

namespace tarde::net {
namespace {

// One decode result, as the session acts on it.
struct Event {
  DecodeResult::Kind kind;
  std::size_t consumed;
  Command command;
  ErrorCode error;
  std::string message;

  bool operator==(const Event&) const = default;
};

// What decoding a whole stream gave: its events, and how many of its bytes
// were never consumed when decoding stopped (need-more, or a closing error).
struct Decoded {
  std::vector<Event> events;
  bool closed = false;
  std::size_t unparsed_bytes = 0;
};

bool is_printable_line(std::string_view text) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte > 0x7E) return false;
  }
  return true;
}

void check_quote_token(std::string_view token) {
  const std::string quoted = quote_token(token);
  FUZZ_CHECK(quoted.size() >= 2);
  FUZZ_CHECK(quoted.size() <= 2 + 32 * 4 + 3);
  for (const char c : quoted) {
    const auto byte = static_cast<unsigned char>(c);
    FUZZ_CHECK(byte >= 0x21 && byte <= 0x7E);
  }
}

// Runs every token parser on `token`; each success must be in its range and,
// where a formatter exists, print back to a token that parses to the same value.
void check_token_parsers(std::string_view token) {
  check_quote_token(token);
  if (const auto tx_id = parse_tx_id(token); tx_id.is_ok()) {
    FUZZ_CHECK(tx_id.value() == token);
    FUZZ_CHECK(!token.empty() && token.size() <= kTxIdBytesMax);
  } else {
    FUZZ_CHECK(is_printable_line(tx_id.status().message()));
  }
  if (const auto queue = parse_queue(token); queue.is_ok()) {
    FUZZ_CHECK(queue.value() == token);
    FUZZ_CHECK(!token.empty() && token.size() <= kQueueBytesMax);
  }
  if (const auto attempt = parse_attempt(token); attempt.is_ok()) {
    FUZZ_CHECK(attempt.value() >= 1 && attempt.value() <= kAttemptMax);
  }
  if (const auto duration = parse_duration_ms(token, "delay"); duration.is_ok()) {
    FUZZ_CHECK(duration.value() >= 0 && duration.value() <= kDurationMsMax);
    const auto again = parse_duration_ms(format_duration_ms(duration.value()), "delay");
    FUZZ_CHECK(again.is_ok() && again.value() == duration.value());
  } else {
    FUZZ_CHECK(is_printable_line(duration.status().message()));
  }
  if (const auto decimal = parse_decimal(token, "factor"); decimal.is_ok()) {
    FUZZ_CHECK(decimal.value() >= 0);
    const auto again = parse_decimal(format_decimal(decimal.value()), "factor");
    FUZZ_CHECK(again.is_ok() && again.value() == decimal.value());
  }
  if (const auto number = parse_uint(token, "limit", 1000, 1); number.is_ok()) {
    FUZZ_CHECK(number.value() >= 1 && number.value() <= 1000);
  }
  if (const auto flag = parse_bool01(token, "sent"); flag.is_ok()) {
    FUZZ_CHECK(token == (flag.value() ? "1" : "0"));
  }
  if (const auto reason = parse_reason(token); reason.is_ok()) {
    FUZZ_CHECK(reason.value() == token);
  }
}

// Sorts the command's arguments the ways commands do and parses what comes out.
void check_args(const Command& command) {
  static constexpr std::string_view kNames[] = {"max_attempts", "base",  "factor",   "cap",
                                                "jitter",       "delay", "reason",   "limit",
                                                "retry_after",  "wait",  "deadline", "sent"};
  for (const char c : command.verb) FUZZ_CHECK(c != ' ' && c != '\n');
  check_token_parsers(command.verb);
  for (const std::string& arg : command.args) {
    FUZZ_CHECK(!arg.empty());
    FUZZ_CHECK(arg.find(' ') == std::string::npos);
    FUZZ_CHECK(arg.find('\n') == std::string::npos);
    check_token_parsers(arg);
  }
  for (std::size_t positional_count = 0; positional_count <= 3; ++positional_count) {
    const ArgsResult split = split_args(command.args, positional_count, kNames);
    if (!split.is_ok()) {
      const ArgError& error = split.error();
      FUZZ_CHECK(error.code == ErrorCode::kBadCommand || error.code == ErrorCode::kBadArgument);
      FUZZ_CHECK(!error.message.empty());
      FUZZ_CHECK(is_printable_line(error.message));
      continue;
    }
    const ParsedArgs& parsed = split.value();
    FUZZ_CHECK(parsed.positional.size() == positional_count);
    FUZZ_CHECK(parsed.positional.size() + parsed.options.size() == command.args.size());
    for (const auto& [name, value] : parsed.options) {
      FUZZ_CHECK(!name.empty());
      FUZZ_CHECK(!value.empty());
      FUZZ_CHECK(parsed.option(name).has_value());
      check_token_parsers(value);
    }
  }
}

// Frames `command` canonically (single spaces, CRLF); decoding that must give
// the command back, consuming exactly those bytes.
void check_reframes(const Decoder& decoder, const Command& command) {
  std::string bytes = command.verb;
  for (const std::string& arg : command.args) bytes += " " + arg;
  if (command.payload.has_value()) {
    bytes += " " + std::to_string(command.payload->size()) + "\r\n" + *command.payload;
  }
  bytes += "\r\n";
  const DecodeResult again = decoder.decode(bytes);
  FUZZ_CHECK(again.kind == DecodeResult::Kind::kCommand);
  FUZZ_CHECK(again.consumed == bytes.size());
  FUZZ_CHECK(again.command == command);
}

// Checks one result against the buffer it came from and the contract of
// DecodeResult; returns it as an Event. `deep` adds the re-framing and token
// checks of a command, which need doing once per command, not once per split.
Event check_result(const Decoder& decoder, std::string_view buffer, DecodeResult result,
                   bool deep) {
  FUZZ_CHECK(result.consumed <= buffer.size());
  switch (result.kind) {
    case DecodeResult::Kind::kNeedMore:
      FUZZ_CHECK(result.consumed == 0);
      // A valid prefix never exceeds one maximal request: what bounds a
      // session's unparsed input.
      FUZZ_CHECK(buffer.size() < kLineBytesMax + decoder.payload_bytes_max() + 2);
      break;
    case DecodeResult::Kind::kCommand: {
      FUZZ_CHECK(result.consumed > 0);
      FUZZ_CHECK(buffer[result.consumed - 1] == '\n');
      FUZZ_CHECK(!result.command.verb.empty());
      const bool is_payload_verb = result.command.verb == kPayloadVerb;
      FUZZ_CHECK(result.command.payload.has_value() == is_payload_verb);
      if (is_payload_verb)
        FUZZ_CHECK(result.command.payload->size() <= decoder.payload_bytes_max());
      const std::size_t line_bytes =
          static_cast<const char*>(std::memchr(buffer.data(), '\n', buffer.size())) -
          buffer.data() + 1;
      FUZZ_CHECK(line_bytes <= kLineBytesMax);
      if (deep) {
        check_reframes(decoder, result.command);
        check_args(result.command);
      }
      break;
    }
    case DecodeResult::Kind::kError:
      FUZZ_CHECK(!result.message.empty());
      FUZZ_CHECK(is_printable_line(result.message));
      FUZZ_CHECK(std::strlen(error_code_name(result.error)) > 0);
      if (closes_connection(result.error)) {
        FUZZ_CHECK(result.consumed == 0);
      } else {
        FUZZ_CHECK(result.error == ErrorCode::kBadCommand);
        FUZZ_CHECK(result.consumed > 0);
        FUZZ_CHECK(result.consumed <= kLineBytesMax);
        FUZZ_CHECK(buffer[result.consumed - 1] == '\n');
      }
      break;
  }
  return Event{result.kind, result.consumed, std::move(result.command), result.error,
               std::move(result.message)};
}

// Decodes `stream` arriving in chunks of `chunk_sizes` (cycled; empty means
// all at once) the way a session does.
Decoded decode_stream(const Decoder& decoder, std::string_view stream,
                      const std::vector<std::size_t>& chunk_sizes) {
  Decoded decoded;
  std::string buffer;
  std::size_t fed = 0;
  std::size_t next_chunk = 0;
  while (true) {
    const std::size_t chunk =
        chunk_sizes.empty() ? stream.size() - fed : chunk_sizes[next_chunk++ % chunk_sizes.size()];
    const std::size_t take = std::min(chunk, stream.size() - fed);
    buffer.append(stream.substr(fed, take));
    fed += take;
    while (!buffer.empty()) {
      Event event = check_result(decoder, buffer, decoder.decode(buffer), chunk_sizes.empty());
      if (event.kind == DecodeResult::Kind::kNeedMore) break;
      const bool closing =
          event.kind == DecodeResult::Kind::kError && closes_connection(event.error);
      buffer.erase(0, event.consumed);
      decoded.events.push_back(std::move(event));
      if (closing) {
        decoded.closed = true;
        decoded.unparsed_bytes = stream.size() - fed + buffer.size();
        return decoded;
      }
    }
    if (fed == stream.size()) break;
  }
  decoded.unparsed_bytes = buffer.size();
  return decoded;
}

}  // namespace
}  // namespace tarde::net

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tarde::net;
  constexpr std::size_t kBytewiseStreamBytesMax = 1024;
  if (size < 2) return 0;
  // Small limits reach PAYLOAD_TOO_LARGE with short inputs; the default is
  // what the server runs with.
  static constexpr std::size_t kPayloadLimits[] = {0, 5, 64, kDefaultPayloadBytesMax};
  const Decoder decoder(kPayloadLimits[data[0] % 4]);
  const std::size_t chunk_count = data[1] % 16;
  if (size < 2 + chunk_count) return 0;
  std::vector<std::size_t> chunk_sizes;
  for (std::size_t i = 0; i < chunk_count; ++i) chunk_sizes.push_back(std::size_t{data[2 + i]} + 1);
  const std::string_view stream(reinterpret_cast<const char*>(data) + 2 + chunk_count,
                                size - 2 - chunk_count);

  const Decoded whole = decode_stream(decoder, stream, {});
  const Decoded chunked = decode_stream(decoder, stream, chunk_sizes);
  FUZZ_CHECK(chunked.events == whole.events);
  FUZZ_CHECK(chunked.closed == whole.closed);
  FUZZ_CHECK(chunked.unparsed_bytes == whole.unparsed_bytes);
  // One byte per read is the harshest split; it costs a decode per byte, so
  // only short streams get it (long ones still get the chosen chunk sizes).
  if (stream.size() <= kBytewiseStreamBytesMax) {
    const Decoded bytewise = decode_stream(decoder, stream, {1});
    FUZZ_CHECK(bytewise.events == whole.events);
    FUZZ_CHECK(bytewise.closed == whole.closed);
    FUZZ_CHECK(bytewise.unparsed_bytes == whole.unparsed_bytes);
  }
  return 0;
}
