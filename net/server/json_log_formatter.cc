#include "net/server/json_log_formatter.h"

#include "base/time_text.h"

#include <chrono>
#include <cstdio>
#include <string>

namespace tarde::net {
namespace {

void append(spdlog::memory_buf_t& dest, std::string_view text) {
  dest.append(text.data(), text.data() + text.size());
}

void append_escaped(spdlog::memory_buf_t& dest, std::string_view text) {
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      const char escaped[2] = {'\\', static_cast<char>(c)};
      dest.append(escaped, escaped + 2);
    } else if (c < 0x20) {
      char escaped[8];
      const int n = std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      dest.append(escaped, escaped + n);
    } else {
      const char plain = static_cast<char>(c);
      dest.append(&plain, &plain + 1);
    }
  }
}

}  // namespace

void JsonLogFormatter::format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) {
  using namespace std::chrono;
  const int64_t ms = duration_cast<milliseconds>(msg.time.time_since_epoch()).count();
  append(dest, "{\"time\":\"");
  append(dest, iso_utc_ms(ms));
  append(dest, "\",\"level\":\"");
  const auto level = spdlog::level::to_string_view(msg.level);
  append(dest, std::string_view(level.data(), level.size()));
  append(dest, "\",\"msg\":\"");
  append_escaped(dest, std::string_view(msg.payload.data(), msg.payload.size()));
  append(dest, "\"}\n");
}

std::unique_ptr<spdlog::formatter> JsonLogFormatter::clone() const {
  return std::make_unique<JsonLogFormatter>();
}

}  // namespace tarde::net
