#include "base/quote_token.h"

namespace tarde {
namespace {

bool is_printable(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte >= 0x21 && byte <= 0x7E;
}

}  // namespace

std::string quote_token(std::string_view token) {
  constexpr std::size_t kShownBytesMax = 32;  // enough to recognise a token, short in a log line
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (std::size_t i = 0; i < token.size() && i < kShownBytesMax; ++i) {
    const auto byte = static_cast<unsigned char>(token[i]);
    if (is_printable(token[i]) && byte != '\\') {
      out.push_back(token[i]);
    } else {
      out += "\\x";
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xF]);
    }
  }
  if (token.size() > kShownBytesMax) out += "...";
  out.push_back('\'');
  return out;
}

}  // namespace tarde
