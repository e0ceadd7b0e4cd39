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
inline constexpr uint64_t kPageLimitMax = 1000;
inline constexpr uint64_t kPageLimitDefault = 100;
// Dead letters read to serve one page, until the engine lists them from a
// cursor: the protocol's own bound on DEADLETTERS.
inline constexpr uint64_t kDeadScanMax = 100'000;
// Transactions one action may change: a selection or a filter's limit.
inline constexpr uint64_t kSelectionMax = 1000;

// Shared by the handlers (api_common.cc): a parameter check gives a 400
// response naming what is wrong.
struct DeadFilter {
  std::string prefix;  // tx ids starting with it; empty: all
  std::string reason;  // last delivery failure containing it; empty: all
  bool matches(const storage::DeadLetter& letter) const;
};
Result<std::string> queue_param(const PathParams& params);
Result<uint64_t> limit_param(const Request& request);
Result<PayloadEncoding> payload_param(const Request& request);
// An optional query parameter that must be plain decimal digits.
Result<std::optional<uint64_t>> number_param(const Request& request, const char* name);
Response status_response(const Status& status);
// The dead letters of `queue` after the cursor that match, at most `limit`,
// and the cursor of the next page (empty when this is the last).
Status dead_page(engine::Engine& engine, const std::string& queue, const std::string& after,
                 const DeadFilter& filter, uint64_t limit, std::vector<storage::DeadLetter>* page,
                 std::string* next);

}  // namespace tarde::net::http
