#include "tools/bench/resp.h"

#include <cstdint>

#include "tools/bench/text_reply.h"

namespace tarde::bench {

constexpr size_t kNotResp = SIZE_MAX;

std::string resp_command(std::initializer_list<std::string_view> words) {
  std::string out = "*" + std::to_string(words.size()) + "\r\n";
  for (std::string_view word : words) {
    out += "$" + std::to_string(word.size()) + "\r\n";
    out.append(word);
    out += "\r\n";
  }
  return out;
}

size_t resp_parse(std::string_view input, RespValue* out) {
  const auto head = first_line(input);
  if (!head) return 0;
  if (head->text.empty()) return kNotResp;
  out->type = head->text[0];
  const std::string_view rest = head->text.substr(1);
  switch (out->type) {
    case '+':
    case '-':
      out->text = std::string(rest);
      return head->bytes;
    case ':': {
      const auto value = parse_int(rest);
      if (!value) return kNotResp;
      out->integer = *value;
      return head->bytes;
    }
    case '$': {
      const int64_t length = parse_int(rest).value_or(-2);
      if (length == -1) {
        out->nil = true;
        return head->bytes;
      }
      if (length < 0) return kNotResp;
      const size_t total = head->bytes + static_cast<size_t>(length) + 2;
      if (input.size() < total) return 0;
      out->text = std::string(input.substr(head->bytes, static_cast<size_t>(length)));
      return total;
    }
    case '*': {
      const int64_t count = parse_int(rest).value_or(-2);
      if (count == -1) {
        out->nil = true;
        return head->bytes;
      }
      if (count < 0) return kNotResp;
      size_t used = head->bytes;
      out->elements.resize(static_cast<size_t>(count));
      for (auto& element : out->elements) {
        const size_t n = resp_parse(input.substr(used), &element);
        if (n == 0 || n == kNotResp) return n;
        used += n;
      }
      return used;
    }
    default:
      return kNotResp;
  }
}

}  // namespace tarde::bench
