#include "net/wire/tokens.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tarde::net {
namespace {

using namespace std::string_literals;

// The positionals of a ParsedArgs, to compare with a list.
std::vector<std::string_view> views(std::span<const std::string> positional) {
  return {positional.begin(), positional.end()};
}

// Every rejection is invalid_argument, names the token and says what it got.
template <typename T>
void check_rejected(const Result<T>& result, std::string_view name) {
  REQUIRE_FALSE(result.is_ok());
  CHECK(result.status().code() == Status::Code::kInvalidArgument);
  CHECK(result.status().message().rfind(std::string(name), 0) == 0);
  CHECK(result.status().message().find("got") != std::string::npos);
  for (const char c : result.status().message()) {
    const auto byte = static_cast<unsigned char>(c);
    CHECK((byte >= 0x20 && byte <= 0x7E));  // the message fits in one reply line
  }
}

TEST_CASE("quote_token keeps error messages on one printable line") {
  CHECK(quote_token("TX-1") == "'TX-1'");
  CHECK(quote_token("") == "''");
  CHECK(quote_token("a\r\nb") == "'a\\x0d\\x0ab'");
  CHECK(quote_token("a b\0"s) == "'a\\x20b\\x00'");
  CHECK(quote_token("a\\b") == "'a\\x5cb'");
  CHECK(quote_token("\xff") == "'\\xff'");
  CHECK(quote_token(std::string(40, 'x')) == "'" + std::string(32, 'x') + "...'");
  CHECK(quote_token(std::string(32, 'x')) == "'" + std::string(32, 'x') + "'");
}

TEST_CASE("parse_tx_id") {
  const std::string longest(kTxIdBytesMax, 'a');
  for (const std::string& good : {"TX-100200"s, "a"s, "!"s, "~"s, "a=b"s, "#1"s, longest,
                                  "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"s}) {
    INFO("tx_id: ", good);
    const Result<std::string> result = parse_tx_id(good);
    REQUIRE(result.is_ok());
    CHECK(result.value() == good);
    // check_tx_id accepts the same, as a view of the token itself.
    const Result<std::string_view> view = check_tx_id(good);
    REQUIRE(view.is_ok());
    CHECK(view.value().data() == good.data());
    CHECK(view.value().size() == good.size());
  }
  for (const std::string& bad :
       {""s, longest + "a", "a b"s, "a\tb"s, "a\0b"s, "a\rb"s, "\x7f"s, "caf\xc3\xa9"s, "a\x1f"s}) {
    INFO("tx_id: ", bad);
    check_rejected(parse_tx_id(bad), "tx_id");
    const Result<std::string_view> view = check_tx_id(bad);
    REQUIRE(!view.is_ok());
    CHECK(view.status().message() == parse_tx_id(bad).status().message());
  }
  CHECK(parse_tx_id(std::string(kTxIdBytesMax + 1, 'a')).status().message() ==
        "tx_id must be 1 to 200 printable ASCII bytes (0x21-0x7E, no spaces), got 201 bytes");
  CHECK(parse_tx_id("a\x01", "key").status().message() ==
        "key must be 1 to 200 printable ASCII bytes (0x21-0x7E, no spaces), got a bad byte at "
        "offset 1 of 'a\\x01'");
}

TEST_CASE("parse_queue") {
  const std::string longest(kQueueBytesMax, 'q');
  for (const std::string& good : {"payments"s, "A-Z_a.z-0.9"s, "q"s, "_"s, "..."s, longest}) {
    INFO("queue: ", good);
    const Result<std::string> result = parse_queue(good);
    REQUIRE(result.is_ok());
    CHECK(result.value() == good);
  }
  for (const std::string& bad : {""s, longest + "q", "pay ments"s, "pay/ments"s, "q:1"s, "q=1"s,
                                 "q*"s, "\xc3\xa9"s, "q\0"s}) {
    INFO("queue: ", bad);
    check_rejected(parse_queue(bad), "queue");
  }
  CHECK(parse_queue("a/b").status().message() ==
        "queue must be 1 to 64 bytes of A-Z a-z 0-9 _ . -, got 'a/b'");
}

TEST_CASE("parse_attempt") {
  struct Case {
    std::string token;
    std::uint32_t value;
  };
  for (const Case& good :
       {Case{"1", 1}, Case{"2", 2}, Case{"999", 999}, Case{"1000", 1000}, Case{"0001", 1}}) {
    INFO("attempt: ", good.token);
    const Result<std::uint32_t> result = parse_attempt(good.token);
    REQUIRE(result.is_ok());
    CHECK(result.value() == good.value);
  }
  for (const std::string& bad : {"0"s, "1001"s, ""s, "-1"s, "+1"s, "1.0"s, "1e2"s, " 1"s, "1 "s,
                                 "one"s, "4294967297"s, "99999999999999999999"s, "0x1"s}) {
    INFO("attempt: ", bad);
    check_rejected(parse_attempt(bad), "attempt");
  }
  CHECK(parse_attempt("0").status().message() ==
        "attempt must be a whole number from 1 to 1000, got '0'");
}

TEST_CASE("parse_duration_ms") {
  struct Case {
    std::string token;
    std::int64_t ms;
  };
  const std::vector<Case> good = {
      {"0", 0},
      {"0ms", 0},
      {"0d", 0},
      {"1500", 1500},
      {"1500ms", 1500},
      {"1s", 1000},
      {"90s", 90'000},
      {"5m", 300'000},
      {"2h", 7'200'000},
      {"7d", 604'800'000},
      {"3650d", kDurationMsMax},
      {"87600h", kDurationMsMax},
      {"315360000s", kDurationMsMax},
      {"315360000000", kDurationMsMax},
      {"315360000000ms", kDurationMsMax},
      {"007s", 7000},
  };
  for (const Case& c : good) {
    INFO("duration: ", c.token);
    const Result<std::int64_t> result = parse_duration_ms(c.token, "delay");
    REQUIRE(result.is_ok());
    CHECK(result.value() == c.ms);
  }
  const std::vector<std::string> bad = {"",
                                        "3651d",
                                        "87601h",
                                        "315360000001",
                                        "315360000001ms",
                                        "99999999999999999999",
                                        "99999999999999999999d",
                                        "18446744073709551616ms",
                                        "-1",
                                        "+1",
                                        "1.5h",
                                        "2H",
                                        "2Ms",
                                        "h",
                                        "ms",
                                        "2 h",
                                        "2hh",
                                        "2sec",
                                        "2us",
                                        "1e3",
                                        "2h30m",
                                        "0x10",
                                        "2\0"s,
                                        "2h\r"};
  for (const std::string& token : bad) {
    INFO("duration: ", token);
    check_rejected(parse_duration_ms(token, "delay"), "delay");
  }
  CHECK(parse_duration_ms("3651d", "cap").status().message() ==
        "cap must be at most 3650d, got '3651d'");
  CHECK(parse_duration_ms("1.5h", "base").status().message() ==
        "base must be a whole number with an optional unit ms, s, m, h or d (such as 1500ms or "
        "2h), got '1.5h'");
}

TEST_CASE("parse_decimal") {
  struct Case {
    std::string token;
    double value;
  };
  const std::vector<Case> good = {
      {"2", 2.0},
      {"1.6", 1.6},
      {"0.1", 0.1},
      {"0", 0.0},
      {"0.0", 0.0},
      {"10.25", 10.25},
      {"007.50", 7.5},
      {"1.000000000000000000001", 1.0},
      {"123456789012345678901234567890", 123456789012345678901234567890.0},
  };
  for (const Case& c : good) {
    INFO("decimal: ", c.token);
    const Result<double> result = parse_decimal(c.token, "factor");
    REQUIRE(result.is_ok());
    CHECK(result.value() == c.value);
  }
  const std::vector<std::string> bad = {"",      ".5",   "5.",  "-1",   "+1",  "1e3", "1E3",
                                        "1.2.3", "1..2", "inf", "nan",  "0x1", "1,5", " 1",
                                        "1 ",    "1.5x", ".",   "1.-5", "1.+5"};
  for (const std::string& token : bad) {
    INFO("decimal: ", token);
    check_rejected(parse_decimal(token, "factor"), "factor");
  }
  check_rejected(parse_decimal(std::string(400, '9'), "rate"), "rate");
  CHECK(parse_decimal("-1", "jitter").status().message() ==
        "jitter must be a decimal number such as 2, 1.6 or 0.1, got '-1'");
}

TEST_CASE("parse_uint") {
  CHECK(parse_uint("0", "limit", 10).value() == 0);
  CHECK(parse_uint("10", "limit", 10).value() == 10);
  CHECK(parse_uint("010", "limit", 10).value() == 10);
  CHECK(
      parse_uint("18446744073709551615", "n", std::numeric_limits<std::uint64_t>::max()).value() ==
      std::numeric_limits<std::uint64_t>::max());
  CHECK(parse_uint("5", "n", 9, 5).value() == 5);
  check_rejected(parse_uint("11", "limit", 10), "limit");
  check_rejected(parse_uint("4", "n", 9, 5), "n");
  check_rejected(parse_uint("18446744073709551616", "n", std::numeric_limits<std::uint64_t>::max()),
                 "n");
  for (const std::string& bad : {""s, "-0"s, "+5"s, "5.0"s, "5e0"s, "5 "s, "five"s, "5\0"s}) {
    INFO("uint: ", bad);
    check_rejected(parse_uint(bad, "limit", 100), "limit");
  }
  CHECK(parse_uint("11", "limit", 10).status().message() ==
        "limit must be a whole number from 0 to 10, got '11'");
}

TEST_CASE("parse_bool01") {
  CHECK(parse_bool01("0", "sent").value() == false);
  CHECK(parse_bool01("1", "sent").value() == true);
  for (const std::string& bad :
       {""s, "2"s, "00"s, "01"s, "true"s, "false"s, "yes"s, "-1"s, "1 "s}) {
    INFO("bool: ", bad);
    check_rejected(parse_bool01(bad, "sent"), "sent");
  }
  CHECK(parse_bool01("yes", "strict_cap").status().message() ==
        "strict_cap must be 0 or 1, got 'yes'");
}

TEST_CASE("parse_reason") {
  const std::string longest(kReasonBytesMax, 'r');
  for (const std::string& good : {"HTTP_503"s, "x"s, "timeout=30s"s, longest}) {
    INFO("reason: ", good);
    const Result<std::string> result = parse_reason(good);
    REQUIRE(result.is_ok());
    CHECK(result.value() == good);
  }
  for (const std::string& bad : {""s, longest + "r", "two words"s, "tab\t"s, "nul\0"s, "\x80"s}) {
    INFO("reason: ", bad);
    check_rejected(parse_reason(bad), "reason");
  }
}

TEST_CASE("to_arg_error maps a parser failure to BAD_ARGUMENT") {
  const ArgError error = to_arg_error(parse_attempt("0").status());
  CHECK(error.code == ErrorCode::kBadArgument);
  CHECK(error.message == "attempt must be a whole number from 1 to 1000, got '0'");
}

TEST_CASE("split_args") {
  const std::initializer_list<std::string_view> kRespondOptions = {"reason", "retry_after"};

  SUBCASE("positionals only") {
    const std::vector<std::string> args = {"TX-1", "2"};
    const ArgsResult result = split_args(args, 2, {});
    REQUIRE(result.is_ok());
    CHECK(views(result.value().positional) == std::vector<std::string_view>{"TX-1", "2"});
    CHECK(result.value().options.empty());
  }
  SUBCASE("options in any order after the positionals") {
    const std::vector<std::string> args = {"TX-1", "1", "TRANSIENT", "retry_after=30s",
                                           "reason=a=b"};
    const ArgsResult result = split_args(args, 3, kRespondOptions);
    REQUIRE(result.is_ok());
    const ParsedArgs& parsed = result.value();
    CHECK(views(parsed.positional) == std::vector<std::string_view>{"TX-1", "1", "TRANSIENT"});
    REQUIRE(parsed.options.size() == 2);
    CHECK(parsed.options[0].first == "retry_after");
    CHECK(parsed.options[0].second == "30s");
    CHECK(parsed.option("reason") == "a=b");
    CHECK(parsed.option("retry_after") == "30s");
    CHECK_FALSE(parsed.option("delay").has_value());
  }
  SUBCASE("positionals may contain '=' and are taken by position") {
    const std::vector<std::string> args = {"a=b", "reason=x", "reason=y"};
    const ArgsResult result = split_args(args, 2, kRespondOptions);
    REQUIRE(result.is_ok());
    CHECK(views(result.value().positional) == std::vector<std::string_view>{"a=b", "reason=x"});
    CHECK(result.value().option("reason") == "y");
  }
  SUBCASE("the span overload serves a dispatch table") {
    static constexpr std::string_view kNames[] = {"limit"};
    const std::vector<std::string> args = {"TX-1", "limit=5"};
    const ArgsResult result = split_args(args, 1, std::span<const std::string_view>(kNames));
    REQUIRE(result.is_ok());
    CHECK(result.value().option("limit") == "5");
  }

  struct Bad {
    std::vector<std::string> args;
    std::size_t positional_count;
    ErrorCode code;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {{}, 1, ErrorCode::kBadCommand, "expected 1 argument(s) before any name=value option, got 0"},
      {{"TX-1"},
       2,
       ErrorCode::kBadCommand,
       "expected 2 argument(s) before any name=value option, got 1"},
      {{"TX-1", "2", "3"},
       2,
       ErrorCode::kBadCommand,
       "too many arguments: expected 2 argument(s) before any name=value option, got extra '3'"},
      {{"TX-1", "reason=x", "2"},
       1,
       ErrorCode::kBadCommand,
       "positional argument '2' after a name=value option; expected 1 argument(s) before any "
       "name=value option"},
      {{"TX-1", "bogus=1"},
       1,
       ErrorCode::kBadArgument,
       "unknown option 'bogus'; allowed: reason, retry_after"},
      {{"TX-1", "Reason=x"},
       1,
       ErrorCode::kBadArgument,
       "unknown option 'Reason'; allowed: reason, retry_after"},
      {{"TX-1", "reason=x", "reason=y"}, 1, ErrorCode::kBadArgument, "option 'reason' given twice"},
      {{"TX-1", "reason="}, 1, ErrorCode::kBadArgument, "option 'reason' has an empty value"},
      {{"TX-1", "=x"}, 1, ErrorCode::kBadArgument, "option '=x' has no name"},
      // Shape errors come before option errors, whatever their order on the line.
      {{"TX-1", "bogus=1", "extra"},
       1,
       ErrorCode::kBadCommand,
       "positional argument 'extra' after a name=value option; expected 1 argument(s) before "
       "any name=value option"},
  };
  for (const Bad& c : bad) {
    INFO("case: ", c.message);
    const ArgsResult result = split_args(c.args, c.positional_count, kRespondOptions);
    REQUIRE_FALSE(result.is_ok());
    CHECK(result.error().code == c.code);
    CHECK(result.error().message == c.message);
  }

  SUBCASE("a command without options") {
    const std::vector<std::string> args = {"TX-1", "limit=5"};
    const ArgsResult result = split_args(args, 1, {});
    REQUIRE_FALSE(result.is_ok());
    CHECK(result.error() == ArgError{ErrorCode::kBadArgument,
                                     "unknown option 'limit'; this command takes no options"});
  }
}

TEST_CASE("format_decimal prints the shortest plain form") {
  CHECK(format_decimal(2.0) == "2");
  CHECK(format_decimal(1.6) == "1.6");
  CHECK(format_decimal(0.1) == "0.1");
  CHECK(format_decimal(0.0) == "0");
  CHECK(format_decimal(-0.0) == "0");
  CHECK(format_decimal(10.25) == "10.25");
  CHECK(format_decimal(1e20) == "100000000000000000000");
  CHECK(format_decimal(1e-7) == "0.0000001");
  CHECK(format_decimal(1.0 / 3) == "0.3333333333333333");
}

TEST_CASE("format_decimal round-trips through parse_decimal") {
  const std::vector<double> values = {0.0,
                                      0.1,
                                      0.2,
                                      0.3,
                                      1.6,
                                      2.0,
                                      1.0 / 3,
                                      1e-7,
                                      1e20,
                                      1e300,
                                      5e-324,
                                      12345.678,
                                      std::nextafter(1.0, 2.0),
                                      std::numeric_limits<double>::max()};
  for (const double value : values) {
    const std::string text = format_decimal(value);
    INFO("value: ", text);
    const Result<double> back = parse_decimal(text, "f");
    REQUIRE(back.is_ok());
    CHECK(back.value() == value);
  }
}

TEST_CASE("format_duration_ms uses the largest exact unit") {
  CHECK(format_duration_ms(0) == "0ms");
  CHECK(format_duration_ms(1) == "1ms");
  CHECK(format_duration_ms(1500) == "1500ms");
  CHECK(format_duration_ms(1000) == "1s");
  CHECK(format_duration_ms(90'000) == "90s");
  CHECK(format_duration_ms(60'000) == "1m");
  CHECK(format_duration_ms(7'200'000) == "2h");
  CHECK(format_duration_ms(5'400'000) == "90m");
  CHECK(format_duration_ms(86'400'000) == "1d");
  CHECK(format_duration_ms(kDurationMsMax) == "3650d");
}

TEST_CASE("format_duration_ms round-trips through parse_duration_ms") {
  const std::vector<std::int64_t> values = {0,
                                            1,
                                            999,
                                            1000,
                                            1001,
                                            59'999,
                                            60'000,
                                            3'600'000,
                                            3'600'001,
                                            86'400'000,
                                            172'800'500,
                                            kDurationMsMax - 1,
                                            kDurationMsMax};
  for (const std::int64_t value : values) {
    const std::string text = format_duration_ms(value);
    INFO("value: ", value, " text: ", text);
    const Result<std::int64_t> back = parse_duration_ms(text, "d");
    REQUIRE(back.is_ok());
    CHECK(back.value() == value);
  }
}

TEST_CASE("same_token accepts only the exact token") {
  CHECK(same_token("s3cret", "s3cret"));
  CHECK_FALSE(same_token("s3cre", "s3cret"));    // a prefix
  CHECK_FALSE(same_token("s3cretX", "s3cret"));  // longer
  CHECK_FALSE(same_token("S3cret", "s3cret"));   // first byte differs
  CHECK_FALSE(same_token("s3creT", "s3cret"));   // last byte differs
  CHECK_FALSE(same_token("", "s3cret"));
  CHECK_FALSE(same_token(std::string_view("s3cret\0", 7), "s3cret"));
  CHECK(same_token("", ""));
}

}  // namespace
}  // namespace tarde::net
