// The POST handlers of the JSON API (net/HTTP_API.md): redrive and resolve
// one transaction, a selection of dead letters or those a filter matches;
// pause and resume a queue. Each calls the engine directly; the connection
// answers once the change is durable (HttpConnection).
#include <nlohmann/json.hpp>

#include "net/core/core.h"
#include "net/http/api.h"
#include "net/wire/tokens.h"

namespace tarde::net::http {
namespace {

#define TARDE_HTTP_PARAM(var, expr) \
  auto var = (expr);                \
  if (!var.is_ok()) return error_response(400, var.status().message())

const char* outcome_word(engine::Outcome outcome) {
  switch (outcome) {
    case engine::Outcome::kCreated:
      return "CREATED";
    case engine::Outcome::kExists:
      return "EXISTS";
    case engine::Outcome::kOk:
      return "OK";
    case engine::Outcome::kBuried:
      return "BURIED";
    case engine::Outcome::kStale:
      return "STALE";
    case engine::Outcome::kConflict:
      return "CONFLICT";
    case engine::Outcome::kNotFound:
      return "NOT_FOUND";
  }
  return "?";
}

Json reply_json(const engine::TxReply& reply) {
  Json out{{"tx_id", reply.summary.tx_id}, {"outcome", outcome_word(reply.outcome)}};
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

// The tx ids an action on dead letters applies to: body.ids, or the dead
// letters of the queue that body.filter matches, at most body.limit.
Result<std::vector<std::string>> selection(ApiContext& ctx, const std::string& queue,
                                           const Json& body) {
  std::vector<std::string> ids;
  const auto listed = body.find("ids");
  const auto filter = body.find("filter");
  if ((listed == body.end()) == (filter == body.end())) {
    return Status::invalid_argument("give either ids or filter");
  }
  if (listed != body.end()) {
    if (!listed->is_array()) return Status::invalid_argument("ids must be an array");
    if (listed->size() > kSelectionMax) {
      return Status::invalid_argument("at most " + std::to_string(kSelectionMax) + " ids");
    }
    for (const Json& id : *listed) {
      if (!id.is_string()) return Status::invalid_argument("ids must be strings");
      auto parsed = parse_tx_id(id.get<std::string>());
      if (!parsed.is_ok()) return parsed.status();
      ids.push_back(parsed.value());
    }
    return ids;
  }
  if (!filter->is_object()) return Status::invalid_argument("filter must be an object");
  auto prefix = string_member(*filter, "prefix", "");
  auto reason = string_member(*filter, "reason", "");
  if (!prefix.is_ok()) return prefix.status();
  if (!reason.is_ok()) return reason.status();
  const auto limit = body.find("limit");
  if (limit == body.end() || !limit->is_number_unsigned() || limit->get<uint64_t>() == 0 ||
      limit->get<uint64_t>() > kSelectionMax) {
    return Status::invalid_argument("a filter needs a limit from 1 to " +
                                    std::to_string(kSelectionMax));
  }
  std::vector<storage::DeadLetter> page;
  std::string next;
  TARDE_RETURN_IF_ERROR(dead_page(ctx.core->engine(), queue, "",
                                  DeadFilter{prefix.value(), reason.value()},
                                  limit->get<uint64_t>(), &page, &next));
  for (const storage::DeadLetter& letter : page) ids.push_back(letter.tx_id);
  return ids;
}

template <typename Apply>
Response apply_to_selection(ApiContext& ctx, const Request& request, const PathParams& params,
                            Apply apply) {
  TARDE_HTTP_PARAM(queue, queue_param(params));
  TARDE_HTTP_PARAM(body, body_object(request));
  TARDE_HTTP_PARAM(ids, selection(ctx, queue.value(), body.value()));
  Json results = Json::array();
  uint64_t changed = 0;
  for (const std::string& id : ids.value()) {
    Result<engine::TxReply> reply = apply(queue.value(), id, body.value());
    if (!reply.is_ok()) return status_response(reply.status());
    changed += reply.value().outcome == engine::Outcome::kOk ? 1 : 0;
    results.push_back(reply_json(reply.value()));
  }
  return json_response(
      Json{{"selected", ids.value().size()}, {"changed", changed}, {"results", results}});
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
  return apply_to_selection(ctx, request, params,
                            [&ctx](const std::string& queue, const std::string& id, const Json&) {
                              return ctx.core->engine().redrive(queue, id);
                            });
}

Response post_dead_resolve(ApiContext& ctx, const Request& request, const PathParams& params) {
  // The state and reason are checked once, before any letter changes.
  TARDE_HTTP_PARAM(body, body_object(request));
  TARDE_HTTP_PARAM(state, terminal_member(body.value()));
  TARDE_HTTP_PARAM(reason, reason_member(body.value()));
  return apply_to_selection(
      ctx, request, params,
      [&](const std::string& queue, const std::string& id, const Json&) -> Result<engine::TxReply> {
        auto found = ctx.core->engine().get(id);
        if (!found.is_ok()) return found.status();
        // Only this queue's dead letters: an id of another queue, or one no
        // longer dead, is left alone.
        if (!found.value() || found.value()->queue != queue || !found.value()->dead_lettered) {
          return engine::TxReply{engine::Outcome::kNotFound, engine::Summary{.tx_id = id}};
        }
        return ctx.core->engine().resolve(id, state.value(), reason.value());
      });
}

Response post_queue_pause(ApiContext&, const Request&, const PathParams&) {
  return error_response(501, "pausing a queue needs the engine's PAUSE, not in this build");
}

Response post_queue_resume(ApiContext&, const Request&, const PathParams&) {
  return error_response(501, "resuming a queue needs the engine's RESUME, not in this build");
}

}  // namespace tarde::net::http
