#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/http/request.h"
#include "net/http/response.h"

namespace tarde::net {
class Core;
}
namespace tarde {
class Figures;
}

namespace tarde::net::http {

class RateHistory;

// What a handler may use: the Core (the engine and the commit sequence),
// the figure registry (STATS, /metrics) and the per-second history. Owned by
// the HttpServer; io thread only.
struct ApiContext {
  Core* core = nullptr;
  const Figures* figures = nullptr;
  RateHistory* rates = nullptr;
};

// The path segments a route's "{}" placeholders matched, percent-decoded.
using PathParams = std::vector<std::string>;
using Handler = Response (*)(ApiContext&, const Request&, const PathParams&);

// One entry of a route table: a method and a path pattern whose "{}"
// segments match any one segment. `open` routes need no token: /healthz and
// the dashboard's static files, which hold no data.
struct Route {
  std::string_view method;
  std::string_view pattern;
  Handler handler;
  bool open = false;
};

// Finds the route for the request (HEAD is served as GET) and runs it:
// 404 when no pattern matches the path, 405 with Allow when patterns match
// but none with this method, 400 when a segment is badly percent-encoded,
// 401 with WWW-Authenticate when `token` is set, the route is not open and
// the request lacks `Authorization: Bearer <token>` (compared in constant
// time).
Response dispatch(const std::vector<Route>& routes, ApiContext& context, const Request& request,
                  const std::optional<std::string>& token);

}  // namespace tarde::net::http
