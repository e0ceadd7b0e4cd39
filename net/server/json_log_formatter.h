#pragma once

#include <spdlog/formatter.h>

#include <memory>

namespace tarde::net {

// JsonLogFormatter writes each log record as one JSON object per line
// ({"time": ..., "level": ..., "msg": ...}) for log shippers, escaping the
// message so that any tx_id or reason in it keeps the line valid JSON.
// Selected with `--log-format json`. Stateless; safe on any thread.
class JsonLogFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override;
  std::unique_ptr<spdlog::formatter> clone() const override;
};

}  // namespace tarde::net
