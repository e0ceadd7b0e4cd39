// The handlers of what is not the JSON API: /healthz, /metrics and the
// dashboard's embedded files.
#include "base/figures.h"
#include "net/http/api.h"
#include "net/http/assets.h"

namespace tarde::net::http {
namespace {

Response asset_response(const Asset& asset) {
  Response response;
  response.content_type = std::string(asset.content_type);
  response.body = std::string(asset.body);
  return response;
}

}  // namespace

Response get_healthz(ApiContext&, const Request&, const PathParams&) {
  Response response;
  response.content_type = "text/plain; charset=utf-8";
  response.body = "ok\n";
  return response;
}

Response get_metrics(ApiContext& ctx, const Request&, const PathParams&) {
  Response response;
  response.content_type = "text/plain; version=0.0.4; charset=utf-8";
  response.body = ctx.figures->prometheus_text();
  return response;
}

Response get_index(ApiContext&, const Request&, const PathParams&) {
  const Asset* asset = find_asset("index.html");
  if (asset == nullptr) return error_response(404, "this build has no dashboard");
  return asset_response(*asset);
}

Response get_asset(ApiContext&, const Request&, const PathParams& params) {
  const Asset* asset = find_asset(params.at(0));
  if (asset == nullptr) return error_response(404, "no such file");
  return asset_response(*asset);
}

}  // namespace tarde::net::http
