#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "net/server/server_options.h"

namespace tarde::net {

// The text of `tarde --help`: every flag of serve with its default, then the
// exit codes.
std::string usage_text();

// The text of `tarde --version`.
std::string version_text();

// What a `tarde` command line asks for: serve with `options`, or print
// usage_text() or version_text() and exit 0.
struct CommandLine {
  enum class Action { kServe, kHelp, kVersion };
  Action action = Action::kServe;
  ServerOptions options;
};

// Parses a whole `tarde` command line (argv without the program name):
// `serve [flags]`, `help`, `version`, or --help/-h or --version anywhere.
// Serve's flags are `--flag value` or `--flag=value`. `--config FILE` reads
// FILE first: `name = value` lines, one per flag (its name without --),
// blank lines and lines starting with # ignored; the flags of the command
// line then override what the file set. A file that cannot be read, a line
// without `=`, an unknown name or a bad value is refused with a message that
// starts "FILE:LINE: " (the caller exits 2). invalid_argument with
// a message for people, naming the flag and what it expects, on a bad
// command line (the caller exits 2); an empty one is also refused.
Result<CommandLine> parse_command_line(const std::vector<std::string>& args);

// Splits "HOST:PORT" (PORT 0-65535; [v6]:PORT allowed).
Status parse_host_port(const std::string& text, std::string* host, uint16_t* port);

}  // namespace tarde::net
