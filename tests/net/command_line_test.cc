// `tarde serve` flags: --retry-lead's default, range and refusals.
#include <doctest/doctest.h>

#include "net/server/command_line.h"

using namespace tarde;

TEST_CASE("--retry-lead: 10 ms by default, 0 to 1 s accepted, anything else refused") {
  auto defaults = net::parse_serve_flags({});
  REQUIRE(defaults.is_ok());
  CHECK(defaults.value().retry_lead_ms == 10);

  for (const auto& accepted : {std::pair<const char*, int64_t>{"0", 0},
                                {"0ms", 0},
                                {"250ms", 250},
                                {"1s", 1000}}) {
    const std::string text = accepted.first;
    CAPTURE(text);
    auto parsed = net::parse_serve_flags({"--retry-lead", text});
    REQUIRE(parsed.is_ok());
    CHECK(parsed.value().retry_lead_ms == accepted.second);
  }
  auto joined = net::parse_serve_flags({"--retry-lead=20ms"});
  REQUIRE(joined.is_ok());
  CHECK(joined.value().retry_lead_ms == 20);

  auto too_long = net::parse_serve_flags({"--retry-lead", "2s"});
  REQUIRE_FALSE(too_long.is_ok());
  CHECK(too_long.status().message().find("at most 1s") != std::string::npos);
  CHECK_FALSE(net::parse_serve_flags({"--retry-lead", "soon"}).is_ok());
  CHECK_FALSE(net::parse_serve_flags({"--retry-lead", "-5ms"}).is_ok());
  auto missing = net::parse_serve_flags({"--retry-lead"});
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().message().find("needs a value") != std::string::npos);
}
