#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/quote_token.h"
#include "base/status.h"
#include "net/wire/tokens.h"

// What the Client's command files (client.cc, client_admin.cc) share: the
// checked request line and small formatters. Not part of the API (it is not
// installed); client.h names RequestLine only by a forward declaration.
namespace tarde::client::client_detail {

// A request line under construction. Each token is checked so that it cannot
// break the framing (tx_id and queue fully, as the server would); the first
// refusal sticks and is reported, in the shape of an ERR, when the line is
// sent.
class RequestLine {
 public:
  explicit RequestLine(std::string_view verb) : text_(verb) {}
  RequestLine& queue(std::string_view queue) { return checked(net::parse_queue(queue)); }
  RequestLine& tx(std::string_view tx_id) { return checked(net::parse_tx_id(tx_id)); }
  RequestLine& word(std::string_view token, std::string_view name = "argument") {
    bool safe = !token.empty() && token.size() < net::kLineBytesMax;
    for (char c : token) safe = safe && c > 0x20 && c < 0x7F;
    if (!safe && status_.is_ok()) {
      status_ = Status::invalid_argument("BAD_ARGUMENT " + std::string(name) +
                                         " must be printable ASCII without spaces, got " +
                                         quote_token(token));
    }
    text_ += ' ';
    text_ += token;
    return *this;
  }
  RequestLine& option(std::string_view name, const std::optional<std::string>& value) {
    return value ? word(std::string(name) + "=" + *value, name) : *this;
  }
  const Status& status() const { return status_; }
  const std::string& text() const { return text_; }

 private:
  RequestLine& checked(const Result<std::string>& parsed) {
    if (!parsed.is_ok() && status_.is_ok()) {
      status_ = Status::invalid_argument("BAD_ARGUMENT " + parsed.status().message());
    }
    text_ += ' ';
    text_ += parsed.is_ok() ? parsed.value() : std::string("?");
    return *this;
  }

  std::string text_;
  Status status_;
};

inline std::optional<std::string> number_text(const std::optional<uint64_t>& v) {
  if (!v) return std::nullopt;
  return std::to_string(*v);
}

}  // namespace tarde::client::client_detail
