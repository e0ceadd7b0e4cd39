#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tarde::net::http {

// A request head larger than this is refused with 431: the API's requests
// carry a path, a query of a few short parameters and a token.
inline constexpr size_t kHeadBytesMax = 16 * 1024;
// A request body larger than this is refused with 413: the largest body is a
// selection of tx ids (kSelectionMax ids of at most 200 bytes, quoted).
inline constexpr size_t kBodyBytesMax = 1024 * 1024;
// Header lines per request: more is refused with 431.
inline constexpr size_t kHeadersMax = 64;

// One parsed HTTP/1.1 request, as the API handlers see it: the method, the
// path and the query split and percent-decoded, the headers with lower-case
// names, and the body. A plain value; it owns its strings.
struct Request {
  std::string method;
  std::string path;  // the target before '?', still percent-encoded
  std::vector<std::pair<std::string, std::string>> query;    // decoded
  std::vector<std::pair<std::string, std::string>> headers;  // names lower case
  std::string body;

  // The first header of that (lower-case) name, or nullptr.
  const std::string* header(std::string_view name) const;
  // The first query parameter of that name, or nullopt.
  std::optional<std::string> query_value(std::string_view name) const;
};

// What parse_request made of the bytes received so far.
struct ParseResult {
  enum class Kind {
    kNeedMore,  // no complete request yet; read more
    kDone,      // `request` is complete; `consumed` bytes made it
    kError,     // refuse with `status` and `message`, then close
  };
  Kind kind = Kind::kNeedMore;
  Request request;
  size_t consumed = 0;
  int status = 0;
  std::string message;
};

// Parses one request from the start of `bytes`. Pure: no IO, no state; the
// caller reads more and calls again on kNeedMore. Strict: CRLF line ends,
// HTTP/1.0 or HTTP/1.1, a target starting with '/', header names of token
// characters, no folded lines, a plain decimal Content-Length (the body is
// that many bytes; no Content-Length means none), no Transfer-Encoding (501).
// Limits: kHeadBytesMax and kHeadersMax (431), kBodyBytesMax (413).
ParseResult parse_request(std::string_view bytes);

// %XX sequences decoded (and '+' as a space when `plus_is_space`, as in a
// query). nullopt when a '%' is not followed by two hex digits.
std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space);

}  // namespace tarde::net::http
