#include "base/log_record.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace tarde {
namespace {

using namespace std::string_literals;  // "..."s keeps NUL bytes

TEST_CASE("log record: plain words stay bare, numbers are numbers, the rest is quoted") {
  const std::string line = LogRecord("transition")
                               .text("tx", "TX-1")
                               .text("queue", "pagos")
                               .number("attempt", 2U)
                               .number("delta", -5)
                               .text("state", "SCHEDULED")
                               .text("digits", "123")
                               .text("empty", "")
                               .text("msg", "two words")
                               .line();
  CHECK(line ==
        "transition tx=TX-1 queue=pagos attempt=2 delta=-5 state=SCHEDULED digits=\"123\" "
        "empty=\"\" msg=\"two words\"");
  const auto record = parse_log_line(line);
  REQUIRE(record.has_value());
  CHECK(record->dump() ==
        R"({"event":"transition","tx":"TX-1","queue":"pagos","attempt":2,"delta":-5,)"
        R"("state":"SCHEDULED","digits":"123","empty":"","msg":"two words"})");
}

TEST_CASE("log record: a hostile value can neither end the line nor add a field") {
  const std::string hostile =
      "a\"b\\c x=1 \n{\"level\":\"error\"}\r\t\x01\x7f"s + "\0"s + "= end é";
  const std::string line = LogRecord("alert.failed").text("reason", hostile).number("n", 1).line();
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.find('\r') == std::string::npos);
  for (const char c : line) CHECK(static_cast<unsigned char>(c) >= 0x20);
  const auto record = parse_log_line(line);
  REQUIRE(record.has_value());
  CHECK(record->size() == 3);  // event, reason, n: nothing injected
  CHECK((*record)["reason"] == hostile);
  CHECK((*record)["n"] == 1);
}

TEST_CASE("log record: a very long value is cut to the bound and marked") {
  const std::string long_value(100'000, 'x');
  const std::string line = LogRecord("rocksdb").text("msg", long_value).line();
  CHECK(line.size() < LogRecord::kValueBytesMax + 32);
  const auto record = parse_log_line(line);
  REQUIRE(record.has_value());
  CHECK((*record)["msg"] == std::string(LogRecord::kValueBytesMax, 'x') + "...");
}

TEST_CASE("log record: lines that are not records are not parsed as records") {
  CHECK(parse_log_line("stopped").has_value());  // an event alone is a record
  for (const char* text :
       {"", "tarde listening on 127.0.0.1:7400", "Event x=1", "e x", "e x=", "e x=\"open",
        "e x=\"bad\\q\"", "e x=\"a\"y=1", "e x=1 x=2", "e time=1", "e level=info", "e event=x",
        "e x=a\"b", "e x=99999999999999999999", "e  x=1", "e x=1 "}) {
    CAPTURE(text);
    CHECK_FALSE(parse_log_line(text).has_value());
  }
}

}  // namespace
}  // namespace tarde
