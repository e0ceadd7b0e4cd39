#include "net/http/request.h"

#include <algorithm>
#include <charconv>

namespace tarde::net::http {
namespace {

ParseResult error(int status, std::string message) {
  ParseResult result;
  result.kind = ParseResult::Kind::kError;
  result.status = status;
  result.message = std::move(message);
  return result;
}

bool is_token_char(char c) {
  if (c >= 'a' && c <= 'z') return true;
  if (c >= 'A' && c <= 'Z') return true;
  if (c >= '0' && c <= '9') return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// "GET /path?q HTTP/1.1" into the request; an error status otherwise.
std::optional<ParseResult> parse_request_line(std::string_view line, Request* request) {
  const size_t first = line.find(' ');
  const size_t second = first == std::string_view::npos ? first : line.find(' ', first + 1);
  if (second == std::string_view::npos || line.find(' ', second + 1) != std::string_view::npos) {
    return error(400, "malformed request line");
  }
  const std::string_view method = line.substr(0, first);
  const std::string_view target = line.substr(first + 1, second - first - 1);
  const std::string_view version = line.substr(second + 1);
  if (method.empty() || !std::all_of(method.begin(), method.end(), is_token_char)) {
    return error(400, "malformed method");
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return error(400, "unsupported version");
  if (target.empty() || target.front() != '/') return error(400, "the target must start with /");
  for (char c : target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return error(400, "control byte in the target");
    }
  }
  request->method = std::string(method);
  const size_t question = target.find('?');
  request->path = std::string(target.substr(0, question));
  if (question == std::string_view::npos) return std::nullopt;
  std::string_view query = target.substr(question + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t equals = pair.find('=');
    auto name = percent_decode(pair.substr(0, equals), true);
    auto value = percent_decode(
        equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1), true);
    if (!name || !value) return error(400, "bad percent-encoding in the query");
    request->query.emplace_back(std::move(*name), std::move(*value));
  }
  return std::nullopt;
}

std::optional<ParseResult> parse_header_line(std::string_view line, Request* request) {
  if (line.front() == ' ' || line.front() == '\t') return error(400, "folded header line");
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return error(400, "malformed header line");
  const std::string_view name = line.substr(0, colon);
  if (!std::all_of(name.begin(), name.end(), is_token_char)) {
    return error(400, "malformed header name");
  }
  const std::string_view value = trim(line.substr(colon + 1));
  for (char c : value) {
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) {
      return error(400, "control byte in a header value");
    }
  }
  if (request->headers.size() >= kHeadersMax) return error(431, "too many header lines");
  request->headers.emplace_back(lower(name), std::string(value));
  return std::nullopt;
}

// The body length the headers announce; an error when they disagree.
std::optional<ParseResult> body_length(const Request& request, size_t* length) {
  *length = 0;
  if (request.header("transfer-encoding") != nullptr) {
    return error(501, "Transfer-Encoding is not supported; send Content-Length");
  }
  bool seen = false;
  for (const auto& [name, value] : request.headers) {
    if (name != "content-length") continue;
    size_t parsed = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
      return error(400, "malformed Content-Length");
    }
    if (seen && parsed != *length) return error(400, "conflicting Content-Length headers");
    seen = true;
    *length = parsed;
  }
  if (*length > kBodyBytesMax) {
    return error(413, "the body is larger than " + std::to_string(kBodyBytesMax) + " bytes");
  }
  return std::nullopt;
}

}  // namespace

const std::string* Request::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return &value;
  }
  return nullptr;
}

std::optional<std::string> Request::query_value(std::string_view name) const {
  for (const auto& [key, value] : query) {
    if (key == name) return value;
  }
  return std::nullopt;
}

std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+' && plus_is_space) {
      out += ' ';
    } else if (c != '%') {
      out += c;
    } else {
      const int high = i + 1 < text.size() ? hex_value(text[i + 1]) : -1;
      const int low = i + 2 < text.size() ? hex_value(text[i + 2]) : -1;
      if (high < 0 || low < 0) return std::nullopt;
      out += static_cast<char>(high * 16 + low);
      i += 2;
    }
  }
  return out;
}

ParseResult parse_request(std::string_view bytes) {
  const size_t head_end = bytes.find("\r\n\r\n");
  if (head_end == std::string_view::npos) {
    if (bytes.size() > kHeadBytesMax) return error(431, "the request head is too large");
    return ParseResult{};
  }
  if (head_end + 4 > kHeadBytesMax) return error(431, "the request head is too large");
  const std::string_view head = bytes.substr(0, head_end);
  ParseResult result;
  size_t at = 0;
  bool first = true;
  while (at <= head.size()) {
    size_t end = head.find("\r\n", at);
    if (end == std::string_view::npos) end = head.size();
    const std::string_view line = head.substr(at, end - at);
    if (line.find('\r') != std::string_view::npos || line.find('\n') != std::string_view::npos) {
      return error(400, "lines must end in CRLF");
    }
    if (line.empty()) return error(400, first ? "empty request line" : "malformed header line");
    auto problem = first ? parse_request_line(line, &result.request)
                         : parse_header_line(line, &result.request);
    if (problem) return std::move(*problem);
    first = false;
    at = end + 2;
  }
  size_t length = 0;
  if (auto problem = body_length(result.request, &length)) return std::move(*problem);
  const size_t body_start = head_end + 4;
  if (bytes.size() < body_start + length) return ParseResult{};
  result.request.body = std::string(bytes.substr(body_start, length));
  result.kind = ParseResult::Kind::kDone;
  result.consumed = body_start + length;
  return result;
}

}  // namespace tarde::net::http
