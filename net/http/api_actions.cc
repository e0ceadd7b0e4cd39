// The POST handlers of the JSON API (net/HTTP_API.md): redrive and resolve
// one transaction, a selection of dead letters or those a filter matches
// (the engine's REDRIVE_ALL and RESOLVE_ALL); pause and resume a queue. Each calls the engine
// directly; the connection answers once the change is durable (HttpConnection).
#include <nlohmann/json.hpp>

#include "engine/outcome_name.h"
#include "net/core/core.h"
#include "net/http/api.h"
#include "net/wire/tokens.h"

namespace tarde::net::http {
namespace {

#define TARDE_HTTP_PARAM(var, expr) \
  auto var = (expr);                \
  if (!var.is_ok()) return error_response(400, var.status().message())

Json reply_json(const engine::TxReply& reply) {
  Json out{{"tx_id", reply.summary.tx_id}, {"outcome", engine::outcome_name(reply.outcome)}};
  if (reply.outcome == engine::Outcome::kNotFound) return out;
  out["state"] = storage::to_string(reply.summary.state);
  out["attempt"] = reply.summary.attempt;
  out["next_attempt"] = reply.summary.next_attempt;
  out["next_fire_at_ms"] = reply.summary.next_fire_at_ms;
  return out;
}

int reply_status(engine::Outcome outcome) {
  switch (outcome) {
    case engine::Outcome::kNotFound:
      return 404;
    case engine::Outcome::kStale:
    case engine::Outcome::kConflict:
      return 409;
    default:
      return 200;
  }
}

// The body as a JSON object; an empty body is {}.
Result<Json> body_object(const Request& request) {
  if (request.body.empty()) return Json::object();
  const std::string* type = request.header("content-type");
  if (type == nullptr || type->rfind("application/json", 0) != 0) {
    return Status::invalid_argument("send the body as Content-Type: application/json");
  }
  Json body = Json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) {
    return Status::invalid_argument("the body must be a JSON object");
  }
  return body;
}

// A string member of `body`, checked as the protocol checks that argument.
Result<std::string> string_member(const Json& body, const char* name, std::string fallback) {
  const auto it = body.find(name);
  if (it == body.end()) return fallback;
  if (!it->is_string()) return Status::invalid_argument(std::string(name) + " must be a string");
  return it->get<std::string>();
}

Result<storage::TxState> terminal_member(const Json& body) {
  auto state = string_member(body, "state", "");
  if (!state.is_ok()) return state.status();
  if (state.value() == "SUCCEEDED") return storage::TxState::kSucceeded;
  if (state.value() == "FAILED") return storage::TxState::kFailed;
  return Status::invalid_argument("state must be SUCCEEDED or FAILED");
}

Result<std::string> reason_member(const Json& body) {
  auto reason = string_member(body, "reason", "");
  if (!reason.is_ok() || reason.value().empty()) return reason;
  return parse_reason(reason.value());
}

// The tx ids of body.ids (the caller checked it is there).
Result<std::vector<std::string>> listed_ids(const Json& listed) {
  if (!listed.is_array()) return Status::invalid_argument("ids must be an array");
  if (listed.size() > kSelectionMax) {
    return Status::invalid_argument("at most " + std::to_string(kSelectionMax) + " ids");
  }
  std::vector<std::string> ids;
  for (const Json& id : listed) {
    if (!id.is_string()) return Status::invalid_argument("ids must be strings");
    auto parsed = parse_tx_id(id.get<std::string>());
    if (!parsed.is_ok()) return parsed.status();
    ids.push_back(parsed.value());
  }
  return ids;
}

// body.filter ({prefix, reason}, the parameters of /dead) as the engine's
// LetterFilter, and body.limit (1..kSelectionMax).
struct BulkFilter {
  engine::LetterFilter filter;
  size_t limit = 0;
};
Result<BulkFilter> bulk_filter(const Json& body) {
  const Json& filter = body.at("filter");
  if (!filter.is_object()) return Status::invalid_argument("filter must be an object");
  auto prefix = string_member(filter, "prefix", "");
  if (!prefix.is_ok()) return prefix.status();
  if (!prefix.value().empty()) TARDE_RETURN_IF_ERROR(parse_tx_id(prefix.value()).status());
  auto reason = reason_member(filter);
  if (!reason.is_ok()) return reason.status();
  const auto limit = body.find("limit");
  if (limit == body.end() || !limit->is_number_unsigned() || limit->get<uint64_t>() == 0 ||
      limit->get<uint64_t>() > kSelectionMax) {
    return Status::invalid_argument("a filter needs a limit from 1 to " +
                                    std::to_string(kSelectionMax));
  }
  return BulkFilter{engine::LetterFilter{prefix.value(), reason.value()},
                    static_cast<size_t>(limit->get<uint64_t>())};
}

// An action on dead letters: by body.ids, one call of `apply_one` per id
// with its result each; or by body.filter, one call of the engine's bulk
// operation `apply_filter`, which answers only how many changed.
template <typename ApplyOne, typename ApplyFilter>
Response apply_to_dead(const Request& request, const PathParams& params, ApplyOne apply_one,
                       ApplyFilter apply_filter) {
  TARDE_HTTP_PARAM(queue, queue_param(params));
  TARDE_HTTP_PARAM(body, body_object(request));
  const bool has_ids = body.value().contains("ids");
  if (has_ids == body.value().contains("filter")) {
    return error_response(400, "give either ids or filter");
  }
  if (!has_ids) {
    TARDE_HTTP_PARAM(bulk, bulk_filter(body.value()));
    Result<size_t> changed = apply_filter(queue.value(), bulk.value());
    if (!changed.is_ok()) return status_response(changed.status());
    return json_response(Json{{"selected", changed.value()}, {"changed", changed.value()}});
  }
  TARDE_HTTP_PARAM(ids, listed_ids(body.value().at("ids")));
  Json results = Json::array();
  uint64_t changed = 0;
  for (const std::string& id : ids.value()) {
    Result<engine::TxReply> reply = apply_one(queue.value(), id);
    if (!reply.is_ok()) return status_response(reply.status());
    changed += reply.value().outcome == engine::Outcome::kOk ? 1 : 0;
    results.push_back(reply_json(reply.value()));
  }
  return json_response(
      Json{{"selected", ids.value().size()}, {"changed", changed}, {"results", results}});
}

Response set_paused(ApiContext& ctx, const Request& request, const PathParams& params,
                    bool paused) {
  TARDE_HTTP_PARAM(queue, queue_param(params));
  TARDE_HTTP_PARAM(body, body_object(request));
  engine::Engine& engine = ctx.core->engine();
  Status status = paused ? engine.pause(queue.value()) : engine.resume(queue.value());
  if (!status.is_ok()) return status_response(status);
  return json_response(Json{{"queue", queue.value()}, {"paused", engine.paused(queue.value())}});
}

}  // namespace

Response post_tx_redrive(ApiContext& ctx, const Request& request, const PathParams& params) {
  TARDE_HTTP_PARAM(tx_id, parse_tx_id(params.at(0)));
  TARDE_HTTP_PARAM(body, body_object(request));
  auto found = ctx.core->engine().get(tx_id.value());
  if (!found.is_ok()) return status_response(found.status());
  if (!found.value()) return error_response(404, "no transaction " + tx_id.value());
  auto reply = ctx.core->engine().redrive(found.value()->queue, tx_id.value());
  if (!reply.is_ok()) return status_response(reply.status());
  return json_response(reply_json(reply.value()), reply_status(reply.value().outcome));
}

Response post_tx_resolve(ApiContext& ctx, const Request& request, const PathParams& params) {
  TARDE_HTTP_PARAM(tx_id, parse_tx_id(params.at(0)));
  TARDE_HTTP_PARAM(body, body_object(request));
  TARDE_HTTP_PARAM(state, terminal_member(body.value()));
  TARDE_HTTP_PARAM(reason, reason_member(body.value()));
  auto reply = ctx.core->engine().resolve(tx_id.value(), state.value(), reason.value());
  if (!reply.is_ok()) return status_response(reply.status());
  return json_response(reply_json(reply.value()), reply_status(reply.value().outcome));
}

Response post_dead_redrive(ApiContext& ctx, const Request& request, const PathParams& params) {
  engine::Engine& engine = ctx.core->engine();
  return apply_to_dead(
      request, params,
      [&engine](const std::string& queue, const std::string& id) {
        return engine.redrive(queue, id);
      },
      [&engine](const std::string& queue, const BulkFilter& bulk) {
        return engine.redrive_all(queue, bulk.filter, bulk.limit);
      });
}

Response post_dead_resolve(ApiContext& ctx, const Request& request, const PathParams& params) {
  // The state and reason are checked once, before any letter changes.
  TARDE_HTTP_PARAM(body, body_object(request));
  TARDE_HTTP_PARAM(state, terminal_member(body.value()));
  TARDE_HTTP_PARAM(reason, reason_member(body.value()));
  engine::Engine& engine = ctx.core->engine();
  return apply_to_dead(
      request, params,
      [&](const std::string& queue, const std::string& id) -> Result<engine::TxReply> {
        auto found = engine.get(id);
        if (!found.is_ok()) return found.status();
        // Only this queue's dead letters: an id of another queue, or one no
        // longer dead, is left alone.
        if (!found.value() || found.value()->queue != queue || !found.value()->dead_lettered) {
          return engine::TxReply{engine::Outcome::kNotFound, engine::Summary{.tx_id = id}};
        }
        return engine.resolve(id, state.value(), reason.value());
      },
      [&](const std::string& queue, const BulkFilter& bulk) {
        return engine.resolve_all(queue, bulk.filter, state.value(), reason.value(), bulk.limit);
      });
}

Response post_queue_pause(ApiContext& ctx, const Request& request, const PathParams& params) {
  return set_paused(ctx, request, params, true);
}

Response post_queue_resume(ApiContext& ctx, const Request& request, const PathParams& params) {
  return set_paused(ctx, request, params, false);
}

}  // namespace tarde::net::http
