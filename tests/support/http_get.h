#pragma once

#include <cstdint>
#include <string>

namespace tarde::testing {

// A loopback port free at the time of the call, for a server's listener
// that a test must name before it starts (the HTTP listener).
uint16_t free_port();

// One plain `GET path` over a fresh connection to 127.0.0.1:port, read
// until the server closes: the whole response, status line and headers
// included. The tests' view of the HTTP listener, with no client library.
std::string http_get(uint16_t port, const std::string& path);

// The body of an http_get response (what follows the blank line).
std::string body_of(const std::string& response);

}  // namespace tarde::testing
