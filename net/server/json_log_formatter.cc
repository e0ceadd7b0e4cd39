#include "net/server/json_log_formatter.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "base/json_text.h"
#include "base/log_record.h"
#include "base/time_text.h"

namespace tarde::net {

void JsonLogFormatter::format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) {
  using namespace std::chrono;
  const int64_t ms = duration_cast<milliseconds>(msg.time.time_since_epoch()).count();
  const auto level = spdlog::level::to_string_view(msg.level);
  nlohmann::ordered_json line;
  line["time"] = iso_utc_ms(ms);
  line["level"] = std::string(level.data(), level.size());
  const std::string_view payload(msg.payload.data(), msg.payload.size());
  if (auto record = parse_log_line(payload)) {
    // A LogRecord: each field its own key, after time and level.
    for (auto& [key, value] : record->items()) line[key] = std::move(value);
  } else {
    line["msg"] = std::string(payload);  // free text from a library
  }
  const std::string text = json_text(line) + "\n";
  dest.append(text.data(), text.data() + text.size());
}

std::unique_ptr<spdlog::formatter> JsonLogFormatter::clone() const {
  return std::make_unique<JsonLogFormatter>();
}

}  // namespace tarde::net
