#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

// Small pure helpers shared by the text-protocol adapters (tarde,
// beanstalkd, Redis): find a CRLF-ended line at the front of a buffer, split
// it on spaces, parse a whole number. Header-only; no state.
namespace tarde::bench {

// The first line of `input` without its CRLF, and the bytes it spans with
// the CRLF; nullopt until the CRLF has arrived.
struct Line {
  std::string_view text;
  size_t bytes = 0;
};
inline std::optional<Line> first_line(std::string_view input) {
  const size_t end = input.find("\r\n");
  if (end == std::string_view::npos) return std::nullopt;
  return Line{input.substr(0, end), end + 2};
}

inline std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t at = 0;
  while (at < line.size()) {
    const size_t space = line.find(' ', at);
    const size_t end = space == std::string_view::npos ? line.size() : space;
    if (end > at) words.push_back(line.substr(at, end - at));
    at = end + 1;
  }
  return words;
}

inline std::optional<int64_t> parse_int(std::string_view text) {
  int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace tarde::bench
