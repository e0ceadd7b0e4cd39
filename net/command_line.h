#pragma once

#include <string>
#include <vector>

#include "net/server_options.h"
#include "storage/status.h"

namespace tarde::net {

// The text of `tarde --help`: every flag with its default.
std::string usage_text();

// Parses the flags that follow `tarde serve`. Accepts `--flag value` and
// `--flag=value`. Errors name the flag and what it expects.
Result<ServerOptions> parse_serve_flags(const std::vector<std::string>& args);

// Splits "HOST:PORT" (PORT 0-65535; [v6]:PORT allowed).
Status parse_host_port(const std::string& text, std::string* host, uint16_t* port);

}  // namespace tarde::net
