#include "net/http/response.h"

#include <nlohmann/json.hpp>

namespace tarde::net::http {

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    default:
      return "Unknown";
  }
}

std::string render_response(const Response& response, bool head_only) {
  std::string out = "HTTP/1.1 " + std::to_string(response.status) + " ";
  out += reason_phrase(response.status);
  out += "\r\nContent-Type: " + response.content_type;
  out += "\r\nContent-Length: " + std::to_string(response.body.size());
  out += "\r\nContent-Security-Policy: ";
  out += kContentSecurityPolicy;
  out += "\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer";
  out += "\r\nX-Frame-Options: DENY\r\nCache-Control: no-store\r\nConnection: close\r\n";
  for (const auto& [name, value] : response.headers) out += name + ": " + value + "\r\n";
  out += "\r\n";
  if (!head_only) out += response.body;
  return out;
}

Response json_response(const nlohmann::ordered_json& value, int status) {
  Response response;
  response.status = status;
  response.body = json_text(value);
  response.body += '\n';
  return response;
}

Response error_response(int status, std::string_view message) {
  nlohmann::ordered_json error;
  error["status"] = status;
  error["message"] = std::string(message);
  nlohmann::ordered_json body;
  body["error"] = std::move(error);
  return json_response(body, status);
}

}  // namespace tarde::net::http
