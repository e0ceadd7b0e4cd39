#include "base/cli_flags.h"

#include <algorithm>
#include <charconv>
#include <memory>
#include <utility>

namespace tarde {
namespace {

std::string with_newline(std::string text) {
  if (!text.empty() && text.back() != '\n') text += '\n';
  return text;
}

// Help lines stay within this many columns where spaces allow.
constexpr size_t kHelpColumns = 100;

// The lines of `text`: its own line breaks, and more at spaces so that none
// is longer than `columns`.
std::vector<std::string> lines_of(const std::string& text, size_t columns) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (true) {
    const size_t end = text.find('\n', start);
    std::string line = text.substr(start, end - start);
    while (line.size() > columns) {
      const size_t space = line.rfind(' ', columns);
      if (space == std::string::npos || space == 0) break;
      lines.push_back(line.substr(0, space));
      line.erase(0, space + 1);
    }
    lines.push_back(line);
    if (end == std::string::npos) return lines;
    start = end + 1;
  }
}

// "  --listen HOST:PORT", "  --help, -h": long names first, then the value.
std::string left_column(const CLI::Option& option) {
  std::string names;
  for (const std::string& name : option.get_lnames()) {
    names += (names.empty() ? "--" : ", --") + name;
  }
  for (const std::string& name : option.get_snames()) {
    names += (names.empty() ? "-" : ", -") + name;
  }
  if (option.get_type_size() != 0) names += " " + option.get_type_name();
  return "  " + names;
}

// HelpFormatter lays out every tarde help text the same way: the app's
// description as written, each group of flags under its name with the
// descriptions aligned in one column (continuation lines too) and the
// default at the end, then the footer as written. Positionals and flags in
// the group "" are left out: the description documents the words.
class HelpFormatter final : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string /*name*/,
                        CLI::AppFormatMode /*mode*/) const override {
    std::vector<std::pair<std::string, std::vector<const CLI::Option*>>> groups;
    size_t width = 0;
    for (const std::string& group : app->get_groups()) {
      if (group.empty()) continue;
      auto options = app->get_options([&group](const CLI::Option* option) {
        return option->get_group() == group && option->nonpositional();
      });
      for (const CLI::Option* option : options) {
        width = std::max(width, left_column(*option).size() + 2);
      }
      if (!options.empty()) groups.emplace_back(group, std::move(options));
    }
    std::string out = with_newline(app->get_description());
    for (const auto& [group, options] : groups) {
      out += "\n" + group + ":\n";
      for (const CLI::Option* option : options) {
        std::string description = option->get_description();
        if (!option->get_default_str().empty()) {
          description += " (default " + option->get_default_str() + ")";
        }
        const std::string left = left_column(*option);
        std::string indent = left + std::string(width - left.size(), ' ');
        const size_t columns = kHelpColumns > width + 20 ? kHelpColumns - width : 20;
        for (const std::string& line : lines_of(description, columns)) {
          out += indent + line + "\n";
          indent.assign(width, ' ');
        }
      }
    }
    if (!app->get_footer().empty()) out += "\n" + with_newline(app->get_footer());
    return out;
  }
};

// The settings every tarde program shares (see the header).
void configure(CLI::App& app) {
  app.formatter(std::make_shared<HelpFormatter>());
  app.allow_extras();  // words are the program's; parse_flags sorts them
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.option_defaults()->disable_flag_override();
  app.set_help_flag("--help,-h", "show this text");
}

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// CLI11's wording of a wrong number of values, in ours.
std::string reworded(const CLI::ArgumentMismatch& error) {
  const std::string what = error.what();
  // "NAME: 1 required TYPE missing": the value is absent (the flag ended the line).
  constexpr std::string_view kRequired = " required ";
  constexpr std::string_view kMissing = " missing";
  const size_t colon = what.find(": ");
  const size_t required = what.find(kRequired);
  if (colon != std::string::npos && required != std::string::npos && ends_with(what, kMissing)) {
    const size_t type_at = required + kRequired.size();
    const std::string type = what.substr(type_at, what.size() - type_at - kMissing.size());
    return what.substr(0, colon) + " needs a value" + (type.empty() ? "" : " (" + type + ")");
  }
  constexpr std::string_view kOverride = " was given a disallowed flag override";
  if (ends_with(what, kOverride)) {
    // CLI11 names the flag without its dashes here.
    const std::string name = what.substr(0, what.size() - kOverride.size());
    return (name.size() == 1 ? "-" : "--") + name + " takes no value";
  }
  return what;
}

// Sorts what CLI11 left over into words, or refuses the first unknown flag
// (or, with words == nullptr, the first word). CLI11 keeps a lone "--" in its
// leftovers; what follows it is words only.
Status sort_leftovers(const CLI::App& app, std::vector<std::string>* words) {
  const std::string hint = app.get_name().empty() ? "" : " (see " + app.get_name() + " --help)";
  bool only_words = false;
  for (const std::string& arg : app.remaining()) {
    if (!only_words && arg == "--") {
      only_words = true;
      continue;
    }
    const bool long_flag = !only_words && arg.size() > 2 && arg.rfind("--", 0) == 0;
    const bool short_flag =
        !only_words && arg.size() > 1 && arg[0] == '-' && !(arg[1] >= '0' && arg[1] <= '9');
    if (long_flag || (short_flag && words == nullptr)) {
      return Status::invalid_argument("unknown flag " + arg.substr(0, arg.find('=')) + hint);
    }
    if (words == nullptr) {
      return Status::invalid_argument("unexpected argument '" + arg + "'" + hint);
    }
    words->push_back(arg);
  }
  return Status::ok();
}

}  // namespace

Result<FlagsOutcome> parse_flags(const DefineFlags& define, const std::vector<std::string>& args,
                                 std::vector<std::string>* words) {
  try {
    CLI::App app;
    configure(app);
    define(app);
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 pops from the back
    app.parse(reversed);
    TARDE_RETURN_IF_ERROR(sort_leftovers(app, words));
    return FlagsOutcome::kRun;
  } catch (const CLI::CallForHelp&) {
    return FlagsOutcome::kHelp;
  } catch (const CLI::CallForAllHelp&) {
    return FlagsOutcome::kHelp;
  } catch (const CLI::CallForVersion&) {
    return FlagsOutcome::kVersion;
  } catch (const CLI::ArgumentMismatch& error) {
    return Status::invalid_argument(reworded(error));
  } catch (const CLI::Error& error) {
    return Status::invalid_argument(error.what());
  }
}

std::string help_text(const DefineFlags& define) {
  try {
    CLI::App app;
    configure(app);
    define(app);
    return app.help();
  } catch (const CLI::Error& error) {
    return std::string("cannot print the help: ") + error.what() + "\n";
  }
}

CLI::Option* add_value_flag(CLI::App& app, const std::string& name, const std::string& description,
                            std::function<Status(const std::string& value)> apply) {
  auto read = [name, apply = std::move(apply)](const std::string& value) {
    const Status status = apply(value);
    if (status.is_ok()) return;
    const bool named = status.message().rfind(name, 0) == 0;
    // Caught in parse_flags, which returns the message as it is.
    throw CLI::ValidationError(named ? status.message() : name + ": " + status.message());
  };
  return app.add_option_function<std::string>(name, std::move(read), description);
}

Result<std::string> parse_choice(std::string_view name, const std::string& value,
                                 const std::vector<std::string>& allowed) {
  std::string listed;  // "a, b or c"
  for (size_t i = 0; i < allowed.size(); ++i) {
    if (value == allowed[i]) return value;
    if (i > 0) listed += i + 1 == allowed.size() ? " or " : ", ";
    listed += allowed[i];
  }
  return Status::invalid_argument(std::string(name) + " expects " + listed + ", got '" + value +
                                  "'");
}

Result<uint64_t> parse_whole_number(std::string_view name, const std::string& text, uint64_t min,
                                    uint64_t max) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  const bool digits_only = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
  if (!digits_only || error != std::errc() || stop != end || value < min || value > max) {
    return Status::invalid_argument(std::string(name) + " expects a whole number from " +
                                    std::to_string(min) + " to " + std::to_string(max) + ", got '" +
                                    text + "'");
  }
  return value;
}

}  // namespace tarde
