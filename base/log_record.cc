#include "base/log_record.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "base/assert.h"

namespace tarde {
namespace {

bool is_lower_or_digit(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool is_event_name(std::string_view name) {
  if (name.empty() || name[0] < 'a' || name[0] > 'z') return false;
  for (const char c : name) {
    if (!is_lower_or_digit(c) && c != '_' && c != '.') return false;
  }
  return true;
}

bool is_key(std::string_view key) {
  if (key.empty() || key[0] < 'a' || key[0] > 'z') return false;
  for (const char c : key) {
    if (!is_lower_or_digit(c) && c != '_') return false;
  }
  return key != "time" && key != "level" && key != "event";
}

// -?[0-9]+: how a number field is written, so a text field of this form is
// quoted to stay text.
bool looks_like_number(std::string_view value) {
  if (!value.empty() && value[0] == '-') value.remove_prefix(1);
  if (value.empty()) return false;
  for (const char c : value) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// A value written without quotes: printable ASCII other than the three bytes
// that structure a line, and not a number.
bool is_bare(std::string_view value) {
  if (value.empty() || looks_like_number(value)) return false;
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x21 || byte > 0x7E || c == '"' || c == '\\' || c == '=') return false;
  }
  return true;
}

void append_quoted(std::string& out, std::string_view value) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7F) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
    } else {
      out += c;  // printable ASCII, and UTF-8 as it is
    }
  }
  out += '"';
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Reads a quoted value at the start of `rest` (which starts with '"') and
// removes it from `rest`. nullopt on a bad escape or a missing closing quote.
std::optional<std::string> take_quoted(std::string_view& rest) {
  std::string value;
  for (size_t i = 1; i < rest.size(); ++i) {
    const char c = rest[i];
    if (c == '"') {
      rest.remove_prefix(i + 1);
      return value;
    }
    if (c != '\\') {
      value += c;
      continue;
    }
    if (++i == rest.size()) return std::nullopt;
    switch (rest[i]) {
      case '"':
      case '\\':
        value += rest[i];
        break;
      case 'n':
        value += '\n';
        break;
      case 'r':
        value += '\r';
        break;
      case 't':
        value += '\t';
        break;
      case 'x': {
        if (i + 2 >= rest.size()) return std::nullopt;
        const int high = hex_digit(rest[i + 1]);
        const int low = hex_digit(rest[i + 2]);
        if (high < 0 || low < 0) return std::nullopt;
        value += static_cast<char>(high * 16 + low);
        i += 2;
        break;
      }
      default:
        return std::nullopt;
    }
  }
  return std::nullopt;
}

// A bare value as JSON: a number when it is one, else the text.
std::optional<nlohmann::ordered_json> bare_value(std::string_view value) {
  if (looks_like_number(value)) {
    const char* end = value.data() + value.size();
    if (value[0] == '-') {
      int64_t n = 0;
      const auto result = std::from_chars(value.data(), end, n);
      if (result.ec != std::errc() || result.ptr != end) return std::nullopt;
      return nlohmann::ordered_json(n);
    }
    uint64_t n = 0;
    const auto result = std::from_chars(value.data(), end, n);
    if (result.ec != std::errc() || result.ptr != end) return std::nullopt;
    return nlohmann::ordered_json(n);
  }
  if (!is_bare(value)) return std::nullopt;
  return nlohmann::ordered_json(std::string(value));
}

}  // namespace

LogRecord::LogRecord(std::string_view event) : line_(event) { TARDE_ASSERT(is_event_name(event)); }

void LogRecord::append_key(std::string_view key) {
  TARDE_ASSERT(is_key(key));
  line_ += ' ';
  line_ += key;
  line_ += '=';
}

LogRecord& LogRecord::text(std::string_view key, std::string_view value) {
  append_key(key);
  if (value.size() > kValueBytesMax) {
    append_quoted(line_, std::string(value.substr(0, kValueBytesMax)) + "...");
  } else if (is_bare(value)) {
    line_ += value;
  } else {
    append_quoted(line_, value);
  }
  return *this;
}

std::optional<nlohmann::ordered_json> parse_log_line(std::string_view line) {
  const size_t event_end = std::min(line.find(' '), line.size());
  if (!is_event_name(line.substr(0, event_end))) return std::nullopt;
  nlohmann::ordered_json record;
  record["event"] = std::string(line.substr(0, event_end));
  std::string_view rest = line.substr(event_end);
  while (!rest.empty()) {
    if (rest[0] != ' ') return std::nullopt;
    rest.remove_prefix(1);
    const size_t equals = rest.find('=');
    if (equals == std::string_view::npos) return std::nullopt;
    const std::string key(rest.substr(0, equals));
    if (!is_key(key) || record.contains(key)) return std::nullopt;
    rest.remove_prefix(equals + 1);
    if (!rest.empty() && rest[0] == '"') {
      auto value = take_quoted(rest);
      if (!value) return std::nullopt;
      record[key] = std::move(*value);
      continue;
    }
    const size_t value_end = std::min(rest.find(' '), rest.size());
    auto value = bare_value(rest.substr(0, value_end));
    if (!value) return std::nullopt;
    record[key] = std::move(*value);
    rest.remove_prefix(value_end);
  }
  return record;
}

}  // namespace tarde
