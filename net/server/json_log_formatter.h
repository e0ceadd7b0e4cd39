#pragma once

#include <spdlog/formatter.h>

#include <memory>

namespace tarde::net {

// JsonLogFormatter writes each log record as one JSON object per line for
// log shippers: {"time": ..., "level": ..., "event": ..., then one key per
// field of the LogRecord (base/log_record.h) the message was written as; a
// message that is not a LogRecord line (free text) goes under "msg". Through
// json_text (base/json_text.h), so that whatever bytes a message carries (a
// tx_id, a reason, a path in UTF-8 or not) the line stays valid JSON.
// Selected with `--log-format json`. Stateless; safe on any thread.
class JsonLogFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override;
  std::unique_ptr<spdlog::formatter> clone() const override;
};

}  // namespace tarde::net
