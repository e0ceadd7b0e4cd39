#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/json_text.h"

namespace tarde::net::http {

// The Content-Security-Policy of every response: the dashboard loads its own
// script and style files only, runs no inline code, connects only back to
// tarde, and may not be framed. Text a client stored (tx ids, reasons,
// payloads) therefore cannot run as code even if it reached the page as
// markup.
inline constexpr std::string_view kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// One HTTP response before it is written: a status, a body and its type, and
// headers beyond those every response gets (render_response adds the
// security headers, Content-Length and Connection: close). A plain value.
struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// The reason phrase of a status code ("Not Found").
std::string_view reason_phrase(int status);

// The bytes of `response` on the wire. `head_only` (a HEAD request) leaves
// the body out but keeps its Content-Length. Every response closes the
// connection: tarde's HTTP side serves one request per connection.
std::string render_response(const Response& response, bool head_only = false);

// A JSON response of `value` (nlohmann, invalid UTF-8 replaced).
Response json_response(const nlohmann::ordered_json& value, int status = 200);

// An error as JSON: {"error": {"status": 404, "message": "..."}}.
Response error_response(int status, std::string_view message);

}  // namespace tarde::net::http
