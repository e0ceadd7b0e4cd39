#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "net/http/api_json.h"
#include "net/http/router.h"

namespace tarde::net::http {

// The route table of the HTTP side: /healthz, /metrics, the dashboard's
// files and the JSON API of net/HTTP_API.md (routes.cc).
const std::vector<Route>& routes();

// Handlers, one per route (api_reads.cc, api_actions.cc, site.cc). Each
// checks its parameters, calls the engine on the io thread and builds its
// response; none throws.
Response get_healthz(ApiContext&, const Request&, const PathParams&);
Response get_metrics(ApiContext&, const Request&, const PathParams&);
Response get_asset(ApiContext&, const Request&, const PathParams&);
Response get_index(ApiContext&, const Request&, const PathParams&);
Response get_stats(ApiContext&, const Request&, const PathParams&);
Response get_queues(ApiContext&, const Request&, const PathParams&);
Response get_queue(ApiContext&, const Request&, const PathParams&);
Response get_queue_config(ApiContext&, const Request&, const PathParams&);
Response get_queue_list(ApiContext&, const Request&, const PathParams&);
Response get_queue_dead(ApiContext&, const Request&, const PathParams&);
Response get_queue_leases(ApiContext&, const Request&, const PathParams&);
Response get_leases(ApiContext&, const Request&, const PathParams&);
Response get_tx(ApiContext&, const Request&, const PathParams&);
Response get_tx_history(ApiContext&, const Request&, const PathParams&);
Response get_rates(ApiContext&, const Request&, const PathParams&);
Response post_tx_redrive(ApiContext&, const Request&, const PathParams&);
Response post_tx_resolve(ApiContext&, const Request&, const PathParams&);
Response post_dead_redrive(ApiContext&, const Request&, const PathParams&);
Response post_dead_resolve(ApiContext&, const Request&, const PathParams&);
Response post_queue_pause(ApiContext&, const Request&, const PathParams&);
Response post_queue_resume(ApiContext&, const Request&, const PathParams&);

// Pages of lists hold at most this many items: a page is built in one turn
// of the io thread.
inline constexpr uint64_t kPageLimitMax = engine::kListLimitMax;
inline constexpr uint64_t kPageLimitDefault = 100;
// Transactions one action may change: a selection or a filter's limit.
inline constexpr uint64_t kSelectionMax = 1000;
static_assert(kSelectionMax <= engine::kBulkLimitMax);

// Shared by the handlers (api_common.cc): a parameter check gives a 400
// response naming what is wrong.
Result<std::string> queue_param(const PathParams& params);
Result<uint64_t> limit_param(const Request& request);
Result<PayloadEncoding> payload_param(const Request& request);
// An optional query parameter that must be plain decimal digits.
Result<std::optional<uint64_t>> number_param(const Request& request, const char* name);
Response status_response(const Status& status);
// One page of the engine's LIST of `queue` in `state`, with the request's
// after (the previous page's next), limit, prefix and reason: a seek in one
// index and at most engine::kListExaminedMax entries, whatever the queue
// holds. A bad cursor, prefix or limit is invalid_argument.
Result<engine::ListPage> list_page(ApiContext& ctx, const Request& request,
                                   const std::string& queue, engine::ListState state);
// `next` as the JSON API gives it: the cursor, or null on the last page.
Json next_json(const engine::ListPage& page);

}  // namespace tarde::net::http
