#include <string>

#include "tools/bench/queue_client.h"
#include "tools/bench/text_reply.h"

namespace tarde::bench {

std::string job_payload(uint64_t number, size_t payload_bytes) {
  std::string payload = std::to_string(number) + ":";
  if (payload.size() < payload_bytes) payload.append(payload_bytes - payload.size(), 'x');
  return payload;
}

std::optional<uint64_t> payload_number(std::string_view payload) {
  const size_t colon = payload.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const auto number = parse_int(payload.substr(0, colon));
  if (!number || *number < 0) return std::nullopt;
  return static_cast<uint64_t>(*number);
}

}  // namespace tarde::bench
