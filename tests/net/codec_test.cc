#include "net/wire/codec.h"

#include <doctest/doctest.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tarde::net {
namespace {

using Kind = DecodeResult::Kind;
using namespace std::string_literals;

constexpr std::size_t kTestPayloadMax = 64;

Command make_command(std::string verb, std::vector<std::string> args,
                     std::optional<std::string> payload = std::nullopt) {
  return Command{std::move(verb), std::move(args), std::move(payload)};
}

// Feeds `bytes` as a growing buffer, one byte at a time: every proper prefix
// must be kNeedMore, and the whole must decode to one command that consumes
// exactly `bytes`. Returns that command.
Command decode_every_prefix(const Decoder& decoder, const std::string& bytes) {
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    const DecodeResult partial = decoder.decode(std::string_view(bytes).substr(0, size));
    INFO("prefix of ", size, " bytes of ", bytes.size());
    REQUIRE(partial.kind == Kind::kNeedMore);
    CHECK(partial.consumed == 0);
  }
  const DecodeResult full = decoder.decode(bytes);
  REQUIRE(full.kind == Kind::kCommand);
  CHECK(full.consumed == bytes.size());
  // Bytes of a following request never change the result.
  const DecodeResult followed = decoder.decode(bytes + "PING\r\n");
  REQUIRE(followed.kind == Kind::kCommand);
  CHECK(followed.consumed == bytes.size());
  CHECK(followed.command == full.command);
  return full.command;
}

// Feeds `bytes` as a growing buffer and returns the size of the shortest
// prefix that is not kNeedMore; checks that every longer prefix gives the same
// error, so a decision never flips as more bytes arrive.
std::size_t error_decided_at(const Decoder& decoder, const std::string& bytes, ErrorCode expected) {
  std::size_t decided_at = bytes.size() + 1;
  for (std::size_t size = 0; size <= bytes.size(); ++size) {
    const DecodeResult result = decoder.decode(std::string_view(bytes).substr(0, size));
    INFO("prefix of ", size, " bytes of ", bytes.size());
    if (decided_at > bytes.size()) {
      if (result.kind == Kind::kNeedMore) continue;
      decided_at = size;
    }
    REQUIRE(result.kind == Kind::kError);
    CHECK(result.error == expected);
    CHECK_FALSE(result.message.empty());
    if (closes_connection(expected)) CHECK(result.consumed == 0);
  }
  return decided_at;
}

TEST_CASE("error codes have their wire names") {
  CHECK(std::string(error_code_name(ErrorCode::kBadCommand)) == "BAD_COMMAND");
  CHECK(std::string(error_code_name(ErrorCode::kBadArgument)) == "BAD_ARGUMENT");
  CHECK(std::string(error_code_name(ErrorCode::kUnauthorized)) == "UNAUTHORIZED");
  CHECK(std::string(error_code_name(ErrorCode::kInternal)) == "INTERNAL");
  CHECK(std::string(error_code_name(ErrorCode::kLineTooLong)) == "LINE_TOO_LONG");
  CHECK(std::string(error_code_name(ErrorCode::kPayloadTooLarge)) == "PAYLOAD_TOO_LARGE");
  CHECK(std::string(error_code_name(ErrorCode::kBadPayload)) == "BAD_PAYLOAD");
  CHECK(std::string(error_code_name(ErrorCode::kOverloaded)) == "OVERLOADED");
  CHECK(std::string(error_code_name(ErrorCode::kShuttingDown)) == "SHUTTING_DOWN");
  CHECK(std::string(error_code_name(ErrorCode::kNotConfigured)) == "NOT_CONFIGURED");
  CHECK(std::string(error_code_name(ErrorCode::kBusy)) == "BUSY");
  CHECK(std::string(error_code_name(ErrorCode::kBackupFailed)) == "BACKUP_FAILED");
}

TEST_CASE("every code up to kLastErrorCode has its own wire name") {
  std::set<std::string> names;
  for (int code = 0; code <= static_cast<int>(kLastErrorCode); ++code) {
    names.insert(error_code_name(static_cast<ErrorCode>(code)));
  }
  CHECK(names.size() == static_cast<size_t>(kLastErrorCode) + 1);
  CHECK(names.count("BACKUP_FAILED") == 1);  // the newest code is reached
}

TEST_CASE("closes_connection follows the protocol's error table") {
  CHECK_FALSE(closes_connection(ErrorCode::kBadCommand));
  CHECK_FALSE(closes_connection(ErrorCode::kBadArgument));
  CHECK_FALSE(closes_connection(ErrorCode::kUnauthorized));
  CHECK_FALSE(closes_connection(ErrorCode::kInternal));
  CHECK(closes_connection(ErrorCode::kLineTooLong));
  CHECK(closes_connection(ErrorCode::kPayloadTooLarge));
  CHECK(closes_connection(ErrorCode::kBadPayload));
  CHECK(closes_connection(ErrorCode::kOverloaded));
  CHECK(closes_connection(ErrorCode::kShuttingDown));
  CHECK_FALSE(closes_connection(ErrorCode::kNotConfigured));
  CHECK_FALSE(closes_connection(ErrorCode::kBusy));
  CHECK_FALSE(closes_connection(ErrorCode::kBackupFailed));
}

TEST_CASE("an empty buffer needs more") {
  const Decoder decoder(kTestPayloadMax);
  const DecodeResult result = decoder.decode("");
  CHECK(result.kind == Kind::kNeedMore);
  CHECK(result.consumed == 0);
  CHECK(decoder.payload_bytes_max() == kTestPayloadMax);
}

TEST_CASE("sample messages decode the same at every byte boundary") {
  const Decoder decoder(kTestPayloadMax);
  struct Sample {
    std::string bytes;
    Command expected;
  };
  const std::vector<Sample> samples = {
      {"PING\r\n", make_command("PING", {})},
      {"PING\n", make_command("PING", {})},
      {"SENT TX-100200 2\r\n", make_command("SENT", {"TX-100200", "2"})},
      {"RESPOND TX-1 1 TRANSIENT reason=503 retry_after=30s\r\n",
       make_command("RESPOND", {"TX-1", "1", "TRANSIENT", "reason=503", "retry_after=30s"})},
      {"CONFIG payments max_attempts=6 base=1h\n",
       make_command("CONFIG", {"payments", "max_attempts=6", "base=1h"})},
      {"ENQUEUE payments TX-1 5\r\nhello\r\n",
       make_command("ENQUEUE", {"payments", "TX-1"}, "hello")},
      {"ENQUEUE q TX-2 max_attempts=4 delay=2h sent=0 0\r\n\r\n",
       make_command("ENQUEUE", {"q", "TX-2", "max_attempts=4", "delay=2h", "sent=0"}, "")},
      {"ENQUEUE q TX-3 8\r\na\r\nb\0c\r\n\r\n"s,
       make_command("ENQUEUE", {"q", "TX-3"}, "a\r\nb\0c\r\n"s)},
      {"ENQUEUE q TX-4 2\r\n\r\n\r\n", make_command("ENQUEUE", {"q", "TX-4"}, "\r\n")},
      {"ENQUEUE q TX-5 3\n\n\r\x00\r\n"s, make_command("ENQUEUE", {"q", "TX-5"}, "\n\r\0"s)},
      {"ENQUEUE q TX-6 4\r\n\xff\xfe\x00\x01\r\n"s,
       make_command("ENQUEUE", {"q", "TX-6"}, "\xff\xfe\x00\x01"s)},
      {"ENQUEUE q TX-7 007\r\nabcdefg\r\n", make_command("ENQUEUE", {"q", "TX-7"}, "abcdefg")},
  };
  for (const Sample& sample : samples) {
    INFO("sample: ", sample.bytes);
    CHECK(decode_every_prefix(decoder, sample.bytes) == sample.expected);
  }
}

TEST_CASE("a payload of exactly the maximum is accepted") {
  const Decoder decoder(kTestPayloadMax);
  const std::string payload(kTestPayloadMax, '\n');
  const std::string bytes =
      "ENQUEUE q t " + std::to_string(kTestPayloadMax) + "\r\n" + payload + "\r\n";
  CHECK(decode_every_prefix(decoder, bytes) == make_command("ENQUEUE", {"q", "t"}, payload));
}

TEST_CASE("1000 pipelined commands in one buffer decode in order") {
  const Decoder decoder(kTestPayloadMax);
  std::string buffer;
  std::vector<Command> sent;
  for (int i = 0; i < 1000; ++i) {
    const std::string tx = "TX-" + std::to_string(i);
    switch (i % 4) {
      case 0: {
        std::string payload = "p\r\n" + std::to_string(i) + std::string(1, '\0');
        buffer +=
            "ENQUEUE q " + tx + " " + std::to_string(payload.size()) + "\r\n" + payload + "\r\n";
        sent.push_back(make_command("ENQUEUE", {"q", tx}, payload));
        break;
      }
      case 1:
        buffer += "SENT " + tx + " 1\r\n";
        sent.push_back(make_command("SENT", {tx, "1"}));
        break;
      case 2:
        buffer += "GET " + tx + "\n";
        sent.push_back(make_command("GET", {tx}));
        break;
      default:
        buffer += "PING\r\n";
        sent.push_back(make_command("PING", {}));
        break;
    }
  }
  std::string_view rest = buffer;
  std::vector<Command> received;
  for (;;) {
    const DecodeResult result = decoder.decode(rest);
    if (result.kind == Kind::kNeedMore) break;
    REQUIRE(result.kind == Kind::kCommand);
    REQUIRE(result.consumed > 0);
    received.push_back(result.command);
    rest.remove_prefix(result.consumed);
  }
  CHECK(rest.empty());
  REQUIRE(received.size() == sent.size());
  CHECK(received == sent);
}

TEST_CASE("line length limit counts the terminator") {
  const Decoder decoder(kTestPayloadMax);
  SUBCASE("exactly 8192 bytes with CRLF is accepted") {
    const std::string line = "GET " + std::string(kLineBytesMax - 6, 'x') + "\r\n";
    REQUIRE(line.size() == kLineBytesMax);
    const DecodeResult result = decoder.decode(line);
    REQUIRE(result.kind == Kind::kCommand);
    CHECK(result.consumed == kLineBytesMax);
    CHECK(result.command.args.at(0).size() == kLineBytesMax - 6);
  }
  SUBCASE("exactly 8192 bytes with a bare LF is accepted") {
    const std::string line = "GET " + std::string(kLineBytesMax - 5, 'x') + "\n";
    REQUIRE(line.size() == kLineBytesMax);
    const DecodeResult result = decoder.decode(line);
    REQUIRE(result.kind == Kind::kCommand);
    CHECK(result.consumed == kLineBytesMax);
  }
  SUBCASE("8193 bytes with CRLF is too long, decided at 8192 buffered bytes") {
    const std::string line = "GET " + std::string(kLineBytesMax - 5, 'x') + "\r\n";
    REQUIRE(line.size() == kLineBytesMax + 1);
    CHECK(decoder.decode(std::string_view(line).substr(0, kLineBytesMax - 1)).kind ==
          Kind::kNeedMore);
    const DecodeResult result = decoder.decode(line);
    REQUIRE(result.kind == Kind::kError);
    CHECK(result.error == ErrorCode::kLineTooLong);
    CHECK(result.consumed == 0);
    CHECK(closes_connection(result.error));
    const DecodeResult early = decoder.decode(std::string_view(line).substr(0, kLineBytesMax));
    REQUIRE(early.kind == Kind::kError);
    CHECK(early.error == ErrorCode::kLineTooLong);
  }
  SUBCASE("8193 bytes with a bare LF is too long") {
    const std::string line = "GET " + std::string(kLineBytesMax - 4, 'x') + "\n";
    REQUIRE(line.size() == kLineBytesMax + 1);
    const DecodeResult result = decoder.decode(line);
    REQUIRE(result.kind == Kind::kError);
    CHECK(result.error == ErrorCode::kLineTooLong);
  }
  SUBCASE("a flood without a newline is refused without waiting for more") {
    const std::string flood(3 * kLineBytesMax, 'A');
    const DecodeResult result = decoder.decode(flood);
    REQUIRE(result.kind == Kind::kError);
    CHECK(result.error == ErrorCode::kLineTooLong);
  }
  SUBCASE("the payload does not count toward the line") {
    const Decoder big(4 * kLineBytesMax);
    const std::string payload(2 * kLineBytesMax, 'p');
    const std::string length = " " + std::to_string(payload.size()) + "\r\n";
    const std::string head = "ENQUEUE q ";
    const std::string line =
        head + std::string(kLineBytesMax - head.size() - length.size(), 't') + length;
    REQUIRE(line.size() == kLineBytesMax);
    const DecodeResult result = big.decode(line + payload + "\r\n");
    REQUIRE(result.kind == Kind::kCommand);
    CHECK(result.command.payload == payload);
  }
}

TEST_CASE("LF-only and CRLF lines may be mixed") {
  const Decoder decoder(kTestPayloadMax);
  const std::string buffer = "PING\nSENT a 1\r\nGET a\n";
  std::string_view rest = buffer;
  std::vector<Command> received;
  while (!rest.empty()) {
    const DecodeResult result = decoder.decode(rest);
    REQUIRE(result.kind == Kind::kCommand);
    received.push_back(result.command);
    rest.remove_prefix(result.consumed);
  }
  CHECK(received == std::vector<Command>{make_command("PING", {}), make_command("SENT", {"a", "1"}),
                                         make_command("GET", {"a"})});
}

TEST_CASE("tokens are split on runs of spaces only") {
  const Decoder decoder(kTestPayloadMax);
  SUBCASE("leading, trailing and repeated spaces are ignored") {
    CHECK(decode_every_prefix(decoder, "   SENT    TX-1  2    \r\n") ==
          make_command("SENT", {"TX-1", "2"}));
  }
  SUBCASE("spaces around an ENQUEUE length") {
    CHECK(decode_every_prefix(decoder, "  ENQUEUE  q  t   3   \r\nabc\r\n") ==
          make_command("ENQUEUE", {"q", "t"}, "abc"));
  }
  SUBCASE("a tab is a token byte") {
    CHECK(decode_every_prefix(decoder, "PING\tX\r\n") == make_command("PING\tX", {}));
    CHECK(decode_every_prefix(decoder, "\tPING \t\r\n") == make_command("\tPING", {"\t"}));
  }
  SUBCASE("NUL and control bytes stay inside tokens") {
    CHECK(decode_every_prefix(decoder, "SENT a\0b\x07 1\r\n"s) ==
          make_command("SENT", {"a\0b\x07"s, "1"}));
  }
  SUBCASE("a CR not right before the LF is part of the token") {
    CHECK(decode_every_prefix(decoder, "PING\rX\r\n") == make_command("PING\rX", {}));
    CHECK(decode_every_prefix(decoder, "SENT a\r\r\n") == make_command("SENT", {"a\r"}));
    CHECK(decode_every_prefix(decoder, "SENT a \r\n") == make_command("SENT", {"a"}));
  }
}

TEST_CASE("an empty line is BAD_COMMAND and keeps the stream in step") {
  const Decoder decoder(kTestPayloadMax);
  for (const std::string& line : std::vector<std::string>{"\r\n", "\n", "    \r\n", " \n"}) {
    INFO("line: '", line, "'");
    const DecodeResult result = decoder.decode(line + "PING\r\n");
    REQUIRE(result.kind == Kind::kError);
    CHECK(result.error == ErrorCode::kBadCommand);
    CHECK_FALSE(closes_connection(result.error));
    CHECK(result.consumed == line.size());
    const DecodeResult next =
        decoder.decode(std::string_view(line + "PING\r\n").substr(result.consumed));
    REQUIRE(next.kind == Kind::kCommand);
    CHECK(next.command.verb == "PING");
  }
}

TEST_CASE("ENQUEUE without any token has no length: BAD_COMMAND, stays open") {
  const Decoder decoder(kTestPayloadMax);
  for (const std::string& line :
       std::vector<std::string>{"ENQUEUE\r\n", "ENQUEUE   \r\n", "  ENQUEUE\n"}) {
    INFO("line: '", line, "'");
    const DecodeResult result = decoder.decode(line + "PING\r\n");
    REQUIRE(result.kind == Kind::kError);
    CHECK(result.error == ErrorCode::kBadCommand);
    CHECK(result.consumed == line.size());
  }
}

TEST_CASE("ENQUEUE with sound framing is a command whatever its arguments") {
  const Decoder decoder(kTestPayloadMax);
  CHECK(decode_every_prefix(decoder, "ENQUEUE 3\r\nabc\r\n") == make_command("ENQUEUE", {}, "abc"));
  CHECK(decode_every_prefix(decoder, "ENQUEUE !!! ??? bogus=1 x 2\r\nhi\r\n") ==
        make_command("ENQUEUE", {"!!!", "???", "bogus=1", "x"}, "hi"));
}

TEST_CASE("verbs are matched exactly: only upper-case ENQUEUE carries a payload") {
  const Decoder decoder(kTestPayloadMax);
  CHECK(decode_every_prefix(decoder, "enqueue q t 3\r\n") ==
        make_command("enqueue", {"q", "t", "3"}));
  CHECK(decode_every_prefix(decoder, "ENQUEUEX q t 3\r\n") ==
        make_command("ENQUEUEX", {"q", "t", "3"}));
}

TEST_CASE("a payload not followed by CRLF is BAD_PAYLOAD, decided at the first wrong byte") {
  const Decoder decoder(kTestPayloadMax);
  const std::string line = "ENQUEUE q t 3\r\n";
  SUBCASE("payload longer than announced") {
    const std::string bytes = line + "hello\r\n";
    CHECK(error_decided_at(decoder, bytes, ErrorCode::kBadPayload) == line.size() + 4);
  }
  SUBCASE("payload shorter than announced, then the next command") {
    const std::string bytes = line + "hi\r\nPING\r\n";
    CHECK(error_decided_at(decoder, bytes, ErrorCode::kBadPayload) == line.size() + 4);
  }
  SUBCASE("a bare LF after the payload") {
    const std::string bytes = line + "abc\nPING\r\n";
    CHECK(error_decided_at(decoder, bytes, ErrorCode::kBadPayload) == line.size() + 4);
  }
  SUBCASE("CR then something other than LF") {
    const std::string bytes = line + "abc\rX";
    CHECK(error_decided_at(decoder, bytes, ErrorCode::kBadPayload) == line.size() + 5);
  }
}

TEST_CASE("a payload length that is not plain digits is BAD_PAYLOAD at the line end") {
  const Decoder decoder(kTestPayloadMax);
  for (const std::string& length :
       std::vector<std::string>{"abc", "-1", "+1", "1.0", "1e3", "0x10", "3a",
                                "18446744073709551616", "99999999999999999999999", "1\r"}) {
    const std::string line = "ENQUEUE q t " + length + "\r\n";
    INFO("length token: ", length);
    CHECK(error_decided_at(decoder, line + "abc\r\n", ErrorCode::kBadPayload) == line.size());
  }
  SUBCASE("an ENQUEUE whose last token is its tx_id") {
    const std::string line = "ENQUEUE q TX-1\r\n";
    CHECK(error_decided_at(decoder, line, ErrorCode::kBadPayload) == line.size());
  }
}

TEST_CASE("a length over the maximum is PAYLOAD_TOO_LARGE before the payload arrives") {
  const Decoder decoder(kTestPayloadMax);
  for (const std::string& length :
       {std::to_string(kTestPayloadMax + 1), "1000000"s, "18446744073709551615"s}) {
    const std::string line = "ENQUEUE q t " + length + "\r\n";
    INFO("length token: ", length);
    CHECK(error_decided_at(decoder, line + "xyz", ErrorCode::kPayloadTooLarge) == line.size());
  }
  SUBCASE("a zero maximum allows only empty payloads") {
    const Decoder strict(0);
    CHECK(decode_every_prefix(strict, "ENQUEUE q t 0\r\n\r\n") ==
          make_command("ENQUEUE", {"q", "t"}, ""));
    CHECK(error_decided_at(strict, "ENQUEUE q t 1\r\nx\r\n", ErrorCode::kPayloadTooLarge) == 15);
  }
}

TEST_CASE("a decode never consumes more than one request") {
  const Decoder decoder(kTestPayloadMax);
  const std::string buffer = "ENQUEUE q t 4\r\nPING\r\nPING\r\n";
  const DecodeResult first = decoder.decode(buffer);
  REQUIRE(first.kind == Kind::kCommand);
  CHECK(first.command.payload == "PING");
  CHECK(first.consumed == buffer.size() - 6);
  const DecodeResult second = decoder.decode(std::string_view(buffer).substr(first.consumed));
  REQUIRE(second.kind == Kind::kCommand);
  CHECK(second.command == make_command("PING", {}));
}

}  // namespace
}  // namespace tarde::net
