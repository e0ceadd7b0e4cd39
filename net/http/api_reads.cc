// The GET handlers of the JSON API (net/HTTP_API.md): figures, queues,
// transactions, dead letters, leases and the per-second history.
#include <algorithm>
#include <charconv>
#include <cstdlib>

#include "base/figures.h"
#include "net/core/core.h"
#include "net/http/api.h"
#include "net/wire/tokens.h"

namespace tarde::net::http {
namespace {

#define TARDE_HTTP_PARAM(var, expr) \
  auto var = (expr);                \
  if (!var.is_ok()) return error_response(400, var.status().message())

int64_t now_ms(ApiContext& ctx) { return ctx.core->clock().now_wall_ms(); }

Json queue_summary(ApiContext& ctx, const std::string& name) {
  engine::Engine& engine = ctx.core->engine();
  return queue_json(name, engine.queue_figures(name), ctx.rates->handout_rate(name), now_ms(ctx));
}

std::vector<engine::Engine::LeaseView> sorted_leases(ApiContext& ctx, const std::string& queue) {
  std::vector<engine::Engine::LeaseView> leases = ctx.core->engine().leases(queue);
  std::sort(leases.begin(), leases.end(),
            [](const auto& a, const auto& b) { return a.tx_id < b.tx_id; });
  return leases;
}

// One page of leases after the cursor, sorted by tx id.
Response leases_page(ApiContext& ctx, const Request& request, const std::string& queue) {
  TARDE_HTTP_PARAM(limit, limit_param(request));
  const std::string after = request.query_value("after").value_or("");
  const std::string prefix = request.query_value("prefix").value_or("");
  Json items = Json::array();
  Json next = nullptr;
  const int64_t now = now_ms(ctx);
  for (const auto& lease : sorted_leases(ctx, queue)) {
    if (!after.empty() && lease.tx_id <= after) continue;
    if (lease.tx_id.compare(0, prefix.size(), prefix) != 0) continue;
    if (items.size() == limit.value()) {
      next = items.back()["tx_id"];
      break;
    }
    items.push_back(lease_json(lease, now));
  }
  return json_response(Json{{"now_ms", now}, {"items", items}, {"next", next}});
}

}  // namespace

Response get_stats(ApiContext& ctx, const Request&, const PathParams&) {
  Json stats;
  for (const auto& [name, value] : ctx.figures->stats_lines()) {
    // STATS values are numbers: whole ones stay integers in the JSON.
    int64_t whole = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), whole);
    if (ec == std::errc() && end == value.data() + value.size()) {
      stats[name] = whole;
    } else {
      stats[name] = std::strtod(value.c_str(), nullptr);
    }
  }
  return json_response(Json{{"stats", stats}});
}

Response get_queues(ApiContext& ctx, const Request&, const PathParams&) {
  Json queues = Json::array();
  for (const std::string& name : ctx.core->engine().queue_names()) {
    queues.push_back(queue_summary(ctx, name));
  }
  return json_response(Json{{"now_ms", now_ms(ctx)}, {"queues", queues}});
}

Response get_queue(ApiContext& ctx, const Request&, const PathParams& params) {
  TARDE_HTTP_PARAM(queue, queue_param(params));
  Json out = queue_summary(ctx, queue.value());
  out["config"] = config_json(queue.value(), ctx.core->engine().config(queue.value()));
  return json_response(out);
}

Response get_queue_config(ApiContext& ctx, const Request&, const PathParams& params) {
  TARDE_HTTP_PARAM(queue, queue_param(params));
  return json_response(config_json(queue.value(), ctx.core->engine().config(queue.value())));
}

Response get_queue_dead(ApiContext& ctx, const Request& request, const PathParams& params) {
  TARDE_HTTP_PARAM(queue, queue_param(params));
  TARDE_HTTP_PARAM(encoding, payload_param(request));
  auto page = list_page(ctx, request, queue.value(), engine::ListState::kDead);
  if (!page.is_ok()) return status_response(page.status());
  Json items = Json::array();
  for (const storage::TxRecord& record : page.value().items) {
    items.push_back(letter_json(record, encoding.value()));
  }
  return json_response(
      Json{{"now_ms", now_ms(ctx)}, {"items", items}, {"next", next_json(page.value())}});
}

Response get_queue_list(ApiContext& ctx, const Request& request, const PathParams& params) {
  TARDE_HTTP_PARAM(queue, queue_param(params));
  TARDE_HTTP_PARAM(encoding, payload_param(request));
  const std::optional<engine::ListState> state =
      engine::parse_list_state(request.query_value("state").value_or(""));
  if (!state) {
    return error_response(
        400, "state must be ready, leased, in_flight, scheduled, succeeded, failed or dead");
  }
  auto page = list_page(ctx, request, queue.value(), *state);
  if (!page.is_ok()) return status_response(page.status());
  Json items = Json::array();
  for (const storage::TxRecord& record : page.value().items) {
    items.push_back(list_item_json(record, encoding.value()));
  }
  return json_response(Json{{"now_ms", now_ms(ctx)},
                            {"state", engine::list_state_name(*state)},
                            {"items", items},
                            {"next", next_json(page.value())}});
}

Response get_queue_leases(ApiContext& ctx, const Request& request, const PathParams& params) {
  TARDE_HTTP_PARAM(queue, queue_param(params));
  return leases_page(ctx, request, queue.value());
}

Response get_leases(ApiContext& ctx, const Request& request, const PathParams&) {
  return leases_page(ctx, request, "");
}

Response get_tx(ApiContext& ctx, const Request& request, const PathParams& params) {
  TARDE_HTTP_PARAM(tx_id, parse_tx_id(params.at(0)));
  TARDE_HTTP_PARAM(encoding, payload_param(request));
  auto found = ctx.core->engine().get(tx_id.value());
  if (!found.is_ok()) return status_response(found.status());
  if (!found.value()) return error_response(404, "no transaction " + tx_id.value());
  Json out = tx_json(*found.value(), encoding.value());
  out["now_ms"] = now_ms(ctx);
  out["lease"] = nullptr;
  for (const auto& lease : ctx.core->engine().leases(found.value()->queue)) {
    if (lease.tx_id == tx_id.value()) out["lease"] = lease_json(lease, now_ms(ctx));
  }
  return json_response(out);
}

Response get_tx_history(ApiContext& ctx, const Request& request, const PathParams& params) {
  TARDE_HTTP_PARAM(tx_id, parse_tx_id(params.at(0)));
  uint64_t limit = 0;  // all the events kept
  if (request.query_value("limit")) {
    TARDE_HTTP_PARAM(parsed, limit_param(request));
    limit = parsed.value();
  }
  auto found = ctx.core->engine().get(tx_id.value());
  if (!found.is_ok()) return status_response(found.status());
  if (!found.value()) return error_response(404, "no transaction " + tx_id.value());
  std::vector<engine::HistoryEntry> events;
  Status status = ctx.core->engine().history(tx_id.value(), limit, &events);
  if (!status.is_ok()) return status_response(status);
  Json items = Json::array();
  for (const engine::HistoryEntry& event : events) items.push_back(event_json(event));
  return json_response(Json{{"tx_id", tx_id.value()}, {"events", items}});
}

Response get_rates(ApiContext& ctx, const Request& request, const PathParams&) {
  TARDE_HTTP_PARAM(after, number_param(request, "after"));
  Json samples = Json::array();
  for (const RateSample& sample :
       ctx.rates->since(static_cast<int64_t>(after.value().value_or(0)))) {
    samples.push_back(sample_json(sample));
  }
  return json_response(Json{{"now_ms", now_ms(ctx)},
                            {"interval_ms", 1000},
                            {"capacity", static_cast<uint64_t>(RateHistory::kSamples)},
                            {"samples", samples}});
}

}  // namespace tarde::net::http
