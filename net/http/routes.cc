#include "net/http/api.h"

namespace tarde::net::http {

// Reads are GETs, actions are POSTs. Open routes hold no data: the health
// check and the dashboard's own files (the page asks for the token and
// sends it with every API call).
const std::vector<Route>& routes() {
  static const std::vector<Route> table = {
      {"GET", "/healthz", get_healthz, true},
      {"GET", "/", get_index, true},
      {"GET", "/assets/{}", get_asset, true},
      {"GET", "/metrics", get_metrics},
      {"GET", "/api/v1/stats", get_stats},
      {"GET", "/api/v1/queues", get_queues},
      {"GET", "/api/v1/queues/{}", get_queue},
      {"GET", "/api/v1/queues/{}/config", get_queue_config},
      {"GET", "/api/v1/queues/{}/list", get_queue_list},
      {"GET", "/api/v1/queues/{}/dead", get_queue_dead},
      {"GET", "/api/v1/queues/{}/leases", get_queue_leases},
      {"POST", "/api/v1/queues/{}/dead/redrive", post_dead_redrive},
      {"POST", "/api/v1/queues/{}/dead/resolve", post_dead_resolve},
      {"POST", "/api/v1/queues/{}/pause", post_queue_pause},
      {"POST", "/api/v1/queues/{}/resume", post_queue_resume},
      {"GET", "/api/v1/leases", get_leases},
      {"GET", "/api/v1/tx/{}", get_tx},
      {"GET", "/api/v1/tx/{}/history", get_tx_history},
      {"POST", "/api/v1/tx/{}/redrive", post_tx_redrive},
      {"POST", "/api/v1/tx/{}/resolve", post_tx_resolve},
      {"GET", "/api/v1/rates", get_rates},
  };
  return table;
}

}  // namespace tarde::net::http
