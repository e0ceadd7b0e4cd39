#include "net/core/core.h"
#include "net/http/api.h"
#include "net/wire/tokens.h"

namespace tarde::net::http {

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

Result<engine::ListPage> list_page(ApiContext& ctx, const Request& request,
                                   const std::string& queue, engine::ListState state) {
  auto limit = limit_param(request);
  if (!limit.is_ok()) return limit.status();
  const std::string after = request.query_value("after").value_or("");
  const std::string prefix = request.query_value("prefix").value_or("");
  const std::string reason = request.query_value("reason").value_or("");
  if (!reason.empty()) {
    auto parsed = parse_reason(reason);
    if (!parsed.is_ok()) return parsed.status();
  }
  return ctx.core->engine().list(queue, state, after, limit.value(), prefix, reason);
}

Json next_json(const engine::ListPage& page) {
  return page.next.empty() ? Json(nullptr) : Json(page.next);
}

}  // namespace tarde::net::http
