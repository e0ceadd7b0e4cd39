#include "net/http/router.h"

#include "net/wire/tokens.h"

namespace tarde::net::http {
namespace {

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> segments;
  path.remove_prefix(1);  // the leading '/'
  while (true) {
    const size_t slash = path.find('/');
    segments.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return segments;
}

bool matches(std::string_view pattern, const std::vector<std::string_view>& segments,
             std::vector<std::string_view>* captured) {
  const std::vector<std::string_view> parts = split_path(pattern);
  if (parts.size() != segments.size()) return false;
  captured->clear();
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] == "{}") {
      if (segments[i].empty()) return false;
      captured->push_back(segments[i]);
    } else if (parts[i] != segments[i]) {
      return false;
    }
  }
  return true;
}

bool authorized(const Request& request, const std::string& token) {
  const std::string* given = request.header("authorization");
  constexpr std::string_view kScheme = "Bearer ";
  if (given == nullptr || given->size() < kScheme.size()) return false;
  // The scheme name is case-insensitive (RFC 9110, 11.1).
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>((*given)[i])) !=
        std::tolower(static_cast<unsigned char>(kScheme[i]))) {
      return false;
    }
  }
  return same_token(std::string_view(*given).substr(kScheme.size()), token);
}

}  // namespace

Response dispatch(const std::vector<Route>& routes, ApiContext& context, const Request& request,
                  const std::optional<std::string>& token) {
  const std::vector<std::string_view> segments = split_path(request.path);
  std::string_view method = request.method;
  if (method == "HEAD") method = "GET";
  std::vector<std::string_view> captured;
  std::string allowed;
  for (const Route& route : routes) {
    if (!matches(route.pattern, segments, &captured)) continue;
    if (route.method != method) {
      if (allowed.find(route.method) == std::string::npos) {
        allowed += allowed.empty() ? "" : ", ";
        allowed += route.method;
        if (route.method == "GET") allowed += ", HEAD";
      }
      continue;
    }
    if (token && !route.open && !authorized(request, *token)) {
      Response refused = error_response(401, "send Authorization: Bearer <token>");
      refused.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"tarde\"");
      return refused;
    }
    PathParams params;
    for (std::string_view segment : captured) {
      auto decoded = percent_decode(segment, false);
      if (!decoded) return error_response(400, "bad percent-encoding in the path");
      params.push_back(std::move(*decoded));
    }
    return route.handler(context, request, params);
  }
  if (allowed.empty()) return error_response(404, "no such resource");
  Response refused = error_response(405, "use " + allowed);
  refused.headers.emplace_back("Allow", allowed);
  return refused;
}

}  // namespace tarde::net::http
