#pragma once

#include <string>
#include <vector>

#include "base/cli_flags.h"
#include "base/status.h"
#include "tools/dump/dump.h"

namespace tarde::tools {

// The --help text of tarde-dump: its commands and every flag.
std::string usage_text();

// Reads a tarde-dump command line (argv without the program name) into *dir
// and *request: `<data-dir> <command> [argument]`, the flags anywhere, as
// `--flag value` or `--flag=value`. kHelp for --help; invalid_argument with
// a message for people on a bad line.
Result<FlagsOutcome> parse_command_line(const std::vector<std::string>& args, std::string* dir,
                                        DumpRequest* request);

}  // namespace tarde::tools
