// --log-format json: every line is one valid JSON object whatever bytes the
// message carries; UTF-8 stays as it is, an invalid byte becomes U+FFFD.
#include <doctest/doctest.h>
#include <spdlog/details/log_msg.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "base/log_record.h"
#include "net/server/json_log_formatter.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

using namespace tarde;

namespace {

// U+FFFD, what json_text writes for a byte that is not valid UTF-8.
const std::string kReplacement = "\xEF\xBF\xBD";

std::string formatted(const std::string& message) {
  const spdlog::details::log_msg msg(spdlog::source_loc{}, "tarde", spdlog::level::info, message);
  spdlog::memory_buf_t buffer;
  net::JsonLogFormatter().format(msg, buffer);
  return std::string(buffer.data(), buffer.size());
}

}  // namespace

TEST_CASE("a JSON log line keeps UTF-8 as it is and survives any byte") {
  const std::string line =
      formatted("transition tx_id=TX-é-日本 reason=\"quoted\" back\\slash tab\t bad\xFF end");
  CHECK(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);           // one line, however odd the message
  CHECK(line.find("TX-é-日本") != std::string::npos);  // not \u-escaped
  const auto parsed = nlohmann::json::parse(line);
  CHECK(parsed["level"] == "info");
  CHECK(parsed["msg"] == "transition tx_id=TX-é-日本 reason=\"quoted\" back\\slash tab\t bad" +
                             kReplacement + " end");
  CHECK(line.rfind("{\"time\":\"", 0) == 0);  // the keys in their usual order
  CHECK(line.find("\",\"level\":\"info\",\"msg\":\"") != std::string::npos);

  // Control bytes and a lone continuation byte, a truncated sequence at the end.
  using namespace std::string_literals;  // "..."s keeps the NUL byte
  const std::string odd = formatted("nul\0 cr\r lf\n \x80 \xE6\x97"s);
  const auto odd_parsed = nlohmann::json::parse(odd);
  CHECK(odd_parsed["msg"] == "nul\0 cr\r lf\n "s + kReplacement + " " + kReplacement);
}

TEST_CASE("the server's JSON log lines carry a UTF-8 data directory intact") {
  testing::TempDir dir;
  const std::string data = dir.sub("données-日本-\xFF");
  // The last --data wins over the one ServerProcess gives.
  testing::ServerProcess server({"--log-format", "json", "--data", data});
  std::istringstream lines(server.log());
  std::string line;
  int listening = 0;
  while (std::getline(lines, line)) {
    CAPTURE(line);
    const auto parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    REQUIRE_FALSE(parsed.is_discarded());
    if (parsed["event"] == "listening") {
      listening += 1;
      CHECK(parsed["data"] == data.substr(0, data.size() - 1) + kReplacement);
    }
  }
  CHECK(listening == 1);
}

TEST_CASE("a LogRecord becomes one JSON key per field; free text stays under msg") {
  const std::string line = formatted(LogRecord("alert.failed")
                                         .text("tx", "T\"1\\")
                                         .text("queue", "q")
                                         .number("attempt", 3)
                                         .text("reason", "x\ny\x01")
                                         .line());
  const auto parsed = nlohmann::json::parse(line);
  CHECK(line.rfind("{\"time\":\"", 0) == 0);
  CHECK(line.find("\",\"level\":\"info\",\"event\":\"alert.failed\",\"tx\":") != std::string::npos);
  CHECK(parsed["tx"] == "T\"1\\");
  CHECK(parsed["queue"] == "q");
  CHECK(parsed["attempt"] == 3);
  CHECK(parsed["reason"] == "x\ny\x01");
  CHECK_FALSE(parsed.contains("msg"));
  CHECK(line.find('\n') == line.size() - 1);

  const auto free_text = nlohmann::json::parse(formatted("Free text: not a record"));
  CHECK(free_text["msg"] == "Free text: not a record");
  CHECK_FALSE(free_text.contains("event"));
}
