#pragma once

// Pieces of the client that its two source files share: the reply parsers
// (client_replies.cc) and the connection (client.cc). Not part of the API.

#include <charconv>
#include <string_view>
#include <vector>

#include "clients/cpp/client.h"

namespace tarde::client::client_detail {

ReplyKind kind_of(std::string_view word);
bool is_summary_kind(ReplyKind kind);
std::vector<std::string_view> split_tokens(std::string_view line);
Status bad_reply(std::string_view what, std::string_view line);

// Plain decimal digits only, the whole of `text`.
template <typename T>
bool to_number(std::string_view text, T* out) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}
Result<QueueSettings> parse_config(std::string_view line);
Result<ServerStats> parse_stats(const Reply& reply);

template <typename T, typename Parse>
Result<std::vector<T>> parse_list(const Reply& reply, ReplyKind kind, Parse parse) {
  if (reply.kind != kind) return bad_reply("reply", reply.head);
  std::vector<T> items;
  for (const std::string& body : reply.body) {
    auto item = parse(body);
    if (!item.is_ok()) return item.status();
    items.push_back(std::move(item).value());
  }
  return items;
}

}  // namespace tarde::client::client_detail
