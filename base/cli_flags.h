#pragma once

#include <CLI/CLI.hpp>
#include <concepts>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "base/assert.h"
#include "base/status.h"

// The one way tarde's programs (tarde, tarde-cli, tarde-dump, tarde-crash,
// tarde-bench, tarde-fill) read their command lines: CLI11 reads the flags,
// anywhere on the line, as `--flag value` or `--flag=value` (a repeated
// flag's last value wins, a switch takes no value), and hands the other
// words, in order, to the program, which checks them with its own parsers.
// Flag values go through our value parsers (durations, HOST:PORT, ...), so
// their messages are the same as elsewhere. Every help text has one layout.
// CLI11's exceptions stop in this file: callers see a Status. One thread.
namespace tarde {

// What a command line asked for, when it was not wrong.
enum class FlagsOutcome {
  kRun,      // go on with the values the flags stored
  kHelp,     // --help or -h: print the program's help text, exit 0
  kVersion,  // --version (where defined): print the version, exit 0
};

// Adds a program's flags to a fresh CLI::App (set up by parse_flags and
// help_text): the app's description and footer, its options and where they
// store their values.
using DefineFlags = std::function<void(CLI::App& app)>;

// Builds the app `define` describes and parses `args` (argv without the
// program name) with it. Words that are not flags or their values go to
// *words in order (everything after a lone "--" is a word, even "--x");
// with words == nullptr any word is refused. Errors are invalid_argument with
// a message that names the flag and what it expects: "--port needs a value
// (P)", "unknown flag --bogus (see tarde-cli --help)", or the message of the
// value parser that refused the value.
Result<FlagsOutcome> parse_flags(const DefineFlags& define, const std::vector<std::string>& args,
                                 std::vector<std::string>* words = nullptr);

// The --help text of the app `define` describes: its description, each group
// of flags as "  --flag VALUE   what it does (default X)" with the
// descriptions aligned in one column, then its footer.
std::string help_text(const DefineFlags& define);

// Adds `--name VALUE` to `app`: `apply` reads the value and stores it, or
// says why it cannot (a message that does not start with the flag's name gets
// "NAME: " in front). Chain ->type_name("DUR") to name the value in help and
// errors and ->default_str("10ms") to show the default.
CLI::Option* add_value_flag(CLI::App& app, const std::string& name, const std::string& description,
                            std::function<Status(const std::string& value)> apply);

// Adds `--name VALUE` read into *out by `parse`, one of our value parsers
// or a lambda around one: Result<T> parse(const std::string& value).
template <typename T, typename Parse>
CLI::Option* add_parsed_flag(CLI::App& app, const std::string& name, const std::string& description,
                             T* out, Parse parse) {
  return add_value_flag(app, name, description, [out, parse](const std::string& value) {
    Result<T> parsed = parse(value);
    if (!parsed.is_ok()) return parsed.status();
    *out = std::move(parsed).value();
    return Status::ok();
  });
}

// Adds `--name VALUE` whose text is stored as it is in *out (a std::string,
// or a std::optional<std::string> that stays empty unless given).
template <typename T>
CLI::Option* add_text_flag(CLI::App& app, const std::string& name, const std::string& description,
                           T* out) {
  return add_value_flag(app, name, description, [out](const std::string& value) {
    *out = value;
    return Status::ok();
  });
}

// `value` when it is one of `allowed`; "NAME expects a, b or c, got 'VALUE'"
// otherwise.
Result<std::string> parse_choice(std::string_view name, const std::string& value,
                                 const std::vector<std::string>& allowed);

// A whole number from min to max: plain decimal digits, nothing else.
// "NAME expects a whole number from MIN to MAX, got 'TEXT'" otherwise.
Result<uint64_t> parse_whole_number(std::string_view name, const std::string& text, uint64_t min,
                                    uint64_t max);

// Adds `--name N`, a whole number from min to max (parse_whole_number) into
// *out. Its value name is N; requires max to fit in T.
template <std::integral T>
CLI::Option* add_number_flag(CLI::App& app, const std::string& name, const std::string& description,
                             T* out, uint64_t min, uint64_t max) {
  TARDE_ASSERT(min <= max);
  TARDE_ASSERT(max <= static_cast<uint64_t>(std::numeric_limits<T>::max()));
  return add_parsed_flag(app, name, description, out,
                         [name, min, max](const std::string& value) -> Result<T> {
                           auto n = parse_whole_number(name, value, min, max);
                           if (!n.is_ok()) return n.status();
                           return static_cast<T>(n.value());
                         })
      ->type_name("N");
}

}  // namespace tarde
