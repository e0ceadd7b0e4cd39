#pragma once

#include <concepts>
#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace tarde {

// LogRecord builds one structured log line: an event name, then its fields
// in order, as `event key=value key="quoted value" ...` (logfmt). That text
// is what the text log shows, and `--log-format json` turns it back into one
// JSON key per field (parse_log_line), so a record has one encoding and both
// formats agree. A field's value may be anything a client sent: a value that
// is not a plain word is quoted with every quote, backslash and control
// byte escaped, so a tx_id or a reason can never start a new line, add a
// field or end the record early; a value longer than kValueBytesMax is cut.
// A value object: build, pass line() to spdlog, drop. Any thread.
class LogRecord {
 public:
  // A field value longer than this is cut to it and ends in "...": no
  // record grows a log line without bound (client tokens are at most 200
  // bytes; this bounds messages from RocksDB and the system too).
  static constexpr size_t kValueBytesMax = 1024;

  // Requires: `event` is a letter a-z, then a-z 0-9 _ . ("commit.failed").
  explicit LogRecord(std::string_view event);

  // A text field, any bytes. In JSON it is a string, even when it looks
  // like a number. Requires: `key` is a letter a-z, then a-z 0-9 _, and is
  // not time, level or event (the keys the JSON line sets itself).
  LogRecord& text(std::string_view key, std::string_view value);
  // An integer field; in JSON a number. Requires: `key` as for text().
  template <std::integral T>
  LogRecord& number(std::string_view key, T value) {
    append_key(key);
    line_ += std::to_string(value);
    return *this;
  }

  // The record as its text line, for spdlog::info(record.line()) and the
  // like (the overload that takes no format string: braces stay as they are).
  const std::string& line() const { return line_; }

 private:
  void append_key(std::string_view key);

  std::string line_;
};

// The record a LogRecord line stands for, as a JSON object: "event" first,
// then each field (numbers as numbers, text as strings, bytes as they were
// given). nullopt when `line` is not exactly such a line (free text from a
// library, say), so a caller can show it as a plain message instead.
std::optional<nlohmann::ordered_json> parse_log_line(std::string_view line);

}  // namespace tarde
