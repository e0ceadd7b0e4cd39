#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "net/server/server_options.h"
#include "base/status.h"

namespace tarde::net {

// The text of `tarde --help`: every flag with its default.
std::string usage_text();

// Parses the flags that follow `tarde serve`. Accepts `--flag value` and
// `--flag=value`. Errors name the flag and what it expects.
Result<ServerOptions> parse_serve_flags(const std::vector<std::string>& args);

// Walks command-line flags given as `--flag value` or `--flag=value`, calling
// apply(flag, value) for each; a flag named in `switches` takes no value and
// gets an empty one. Stops at the first error, which names the argument.
Status for_each_flag(const std::vector<std::string>& args,
                     std::initializer_list<std::string_view> switches,
                     const std::function<Status(const std::string& flag, const std::string& value)>& apply);

// Splits "HOST:PORT" (PORT 0-65535; [v6]:PORT allowed).
Status parse_host_port(const std::string& text, std::string* host, uint16_t* port);

}  // namespace tarde::net
