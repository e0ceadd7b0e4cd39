#include "net/http/api.h"
#include "net/wire/tokens.h"

namespace tarde::net::http {

bool DeadFilter::matches(const storage::DeadLetter& letter) const {
  if (!prefix.empty() && letter.tx_id.compare(0, prefix.size(), prefix) != 0) return false;
  if (reason.empty()) return true;
  const std::string last = letter.failures.empty() ? "" : letter.failures.back().reason;
  return last.find(reason) != std::string::npos;
}

Result<std::string> queue_param(const PathParams& params) { return parse_queue(params.at(0)); }

Result<uint64_t> limit_param(const Request& request) {
  const auto limit = request.query_value("limit");
  if (!limit) return kPageLimitDefault;
  return parse_uint(*limit, "limit", kPageLimitMax, 1);
}

Result<std::optional<uint64_t>> number_param(const Request& request, const char* name) {
  const auto text = request.query_value(name);
  if (!text) return std::optional<uint64_t>();
  auto value = parse_uint(*text, name, UINT64_MAX / 2, 0);
  if (!value.is_ok()) return value.status();
  return std::optional<uint64_t>(value.value());
}

Result<PayloadEncoding> payload_param(const Request& request) {
  const auto value = request.query_value("payload");
  if (!value || *value == "none") return PayloadEncoding::kNone;
  if (*value == "text") return PayloadEncoding::kText;
  if (*value == "hex") return PayloadEncoding::kHex;
  if (*value == "base64") return PayloadEncoding::kBase64;
  return Status::invalid_argument("payload must be none, text, hex or base64");
}

Response status_response(const Status& status) {
  if (status.code() == Status::Code::kInvalidArgument) {
    return error_response(400, status.message());
  }
  if (status.code() == Status::Code::kNotFound) return error_response(404, status.message());
  return error_response(500, "storage failure, nothing was changed: " + status.message());
}

Status dead_page(engine::Engine& engine, const std::string& queue, const std::string& after,
                 const DeadFilter& filter, uint64_t limit, std::vector<storage::DeadLetter>* page,
                 std::string* next) {
  std::vector<storage::DeadLetter> letters;
  TARDE_RETURN_IF_ERROR(engine.dead_letters(queue, kDeadScanMax, &letters));
  page->clear();
  next->clear();
  for (storage::DeadLetter& letter : letters) {
    if (!after.empty() && letter.tx_id <= after) continue;
    if (!filter.matches(letter)) continue;
    if (page->size() == limit) {
      *next = page->back().tx_id;
      break;
    }
    page->push_back(std::move(letter));
  }
  return Status::ok();
}

}  // namespace tarde::net::http
