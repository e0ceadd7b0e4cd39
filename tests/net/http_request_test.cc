// The HTTP side's pure parts: the request parser (fed whole and split at
// every byte), the router's refusals and the per-second history.
#include <doctest/doctest.h>

#include <string>

#include "net/http/rate_history.h"
#include "net/http/request.h"
#include "net/http/response.h"

using namespace tarde;
using namespace tarde::net::http;

namespace {

ParseResult parse_split_everywhere(const std::string& bytes) {
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    const ParseResult early = parse_request(bytes.substr(0, cut));
    // A prefix of a valid request is never complete and never an error.
    CHECK_MESSAGE(early.kind == ParseResult::Kind::kNeedMore, cut);
  }
  return parse_request(bytes);
}

int error_status(const std::string& bytes) {
  const ParseResult result = parse_request(bytes);
  return result.kind == ParseResult::Kind::kError ? result.status : 0;
}

}  // namespace

TEST_CASE("a request parses the same whole or split at every byte") {
  const std::string bytes =
      "POST /api/v1/tx/a%2Fb/resolve?x=1&y=a+b%21&flag HTTP/1.1\r\n"
      "Host: localhost\r\nContent-Type: application/json\r\nContent-Length: 7\r\n"
      "AUTHORIZATION:  Bearer t  \r\n\r\n{\"a\":1}TRAILING";
  const ParseResult result = parse_split_everywhere(bytes.substr(0, bytes.size() - 8));
  REQUIRE(result.kind == ParseResult::Kind::kDone);
  const Request& r = result.request;
  CHECK(r.method == "POST");
  CHECK(r.path == "/api/v1/tx/a%2Fb/resolve");  // segments are decoded by the router
  CHECK(r.query_value("y") == "a b!");
  CHECK(r.query_value("flag") == "");
  CHECK(!r.query_value("z"));
  REQUIRE(r.header("authorization") != nullptr);
  CHECK(*r.header("authorization") == "Bearer t");
  CHECK(r.body == "{\"a\":1}");
  CHECK(result.consumed == bytes.size() - 8);
  CHECK(parse_request(bytes).consumed == bytes.size() - 8);  // what follows is left
}

TEST_CASE("malformed requests and limits get their status") {
  CHECK(error_status("GET /\r\n\r\n") == 400);
  CHECK(error_status("GET / HTTP/1.1 extra\r\n\r\n") == 400);
  CHECK(error_status("G(T / HTTP/1.1\r\n\r\n") == 400);
  CHECK(error_status("GET x HTTP/1.1\r\n\r\n") == 400);
  CHECK(error_status("GET / HTTP/3\r\n\r\n") == 400);
  CHECK(error_status("GET /\x01 HTTP/1.1\r\n\r\n") == 400);
  CHECK(error_status("GET / HTTP/1.1\r\n x: y\r\n\r\n") == 400);
  CHECK(error_status("GET / HTTP/1.1\r\nx y: z\r\n\r\n") == 400);
  CHECK(error_status("GET / HTTP/1.1\r\nx: a\x01\r\n\r\n") == 400);
  CHECK(error_status("GET / HTTP/1.1\nx: y\r\n\r\n") == 400);
  CHECK(error_status("GET / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n") == 400);
  CHECK(error_status("GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n") == 400);
  CHECK(error_status("GET /?a=%4 HTTP/1.1\r\n\r\n") == 400);
  CHECK(error_status("GET / HTTP/1.1\r\nContent-Length: 1048577\r\n\r\n") == 413);
  CHECK(error_status("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n") == 501);
  CHECK(error_status("GET / HTTP/1.1\r\nx: " + std::string(kHeadBytesMax, 'a') + "\r\n\r\n") ==
        431);
  CHECK(error_status("GET / HTTP/1.1\r\nx: " + std::string(kHeadBytesMax, 'a')) == 431);
  std::string many = "GET / HTTP/1.1\r\n";
  for (size_t i = 0; i <= kHeadersMax; ++i) many += "x: y\r\n";
  CHECK(error_status(many + "\r\n") == 431);
  // Duplicate but equal lengths are one length.
  CHECK(parse_request("GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nz").kind ==
        ParseResult::Kind::kDone);
}

TEST_CASE("percent_decode") {
  CHECK(percent_decode("a%20b+c", false) == "a b+c");
  CHECK(percent_decode("a%20b+c", true) == "a b c");
  CHECK(percent_decode("%3c%3E", false) == "<>");
  CHECK(!percent_decode("%", false));
  CHECK(!percent_decode("%a", false));
  CHECK(!percent_decode("%ag", false));
}

TEST_CASE("every response carries the security headers and closes") {
  const std::string text = render_response(error_response(404, "<b>\xff"));
  CHECK(text.rfind("HTTP/1.1 404 Not Found\r\n", 0) == 0);
  CHECK(text.find("\r\nContent-Security-Policy: default-src 'none'; script-src 'self';") !=
        std::string::npos);
  CHECK(text.find("\r\nX-Content-Type-Options: nosniff\r\n") != std::string::npos);
  CHECK(text.find("\r\nReferrer-Policy: no-referrer\r\n") != std::string::npos);
  CHECK(text.find("\r\nConnection: close\r\n") != std::string::npos);
  CHECK(text.find("\"message\":\"<b>\xef\xbf\xbd\"") != std::string::npos);  // U+FFFD
  const std::string head = render_response(error_response(404, "x"), /*head_only=*/true);
  CHECK(head.size() < text.size());
  CHECK(head.substr(head.size() - 4) == "\r\n\r\n");
}

TEST_CASE("the history keeps 900 seconds and computes rates and p99") {
  RateHistory history;
  storage::TxRecord before;
  before.state = storage::TxState::kScheduled;
  before.next_fire_at_ms = 1000;
  storage::TxRecord after;
  after.state = storage::TxState::kSending;
  for (int late = 1; late <= 100; ++late) {
    after.updated_at_ms = 1000 + late;
    history.on_transition(
        {.before = &before, .after = &after, .cause = "timer", .reason = "", .answer = {}});
  }
  history.on_transition({.before = &before,
                         .after = &after,
                         .cause = "RESPOND",
                         .reason = "",
                         .answer = engine::Answer::kRejected});
  history.tick(10'000, {{"q", 5}});
  auto samples = history.since(0);
  REQUIRE(samples.size() == 1);
  CHECK(samples[0].at_ms == 10'000);
  CHECK(samples[0].handed_out == 5);  // a queue first seen counts from zero
  CHECK(samples[0].retries_fired == 100);
  CHECK(samples[0].lateness_p99_ms == 99);
  CHECK(samples[0].lateness_max_ms == 100);
  CHECK(samples[0].answers[static_cast<size_t>(engine::Answer::kRejected)] == 1);
  CHECK(history.handout_rate("q") > 0);
  CHECK(history.handout_rate("unknown") == 0);
  history.tick(11'000, {{"q", 2}});  // went down: the engine reloaded
  CHECK(history.since(10'000).at(0).handed_out == 0);
  CHECK(history.since(10'000).at(0).retries_fired == 0);
  for (int i = 0; i < 1000; ++i) history.tick(12'000 + i * 1000, {{"q", 2}});
  CHECK(history.since(0).size() == RateHistory::kSamples);
  CHECK(history.since(0).front().at_ms == 12'000 + 100 * 1000);
  CHECK(history.handout_rate("q") < 1e-6);
}
