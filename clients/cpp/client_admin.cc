// The Client's queue administration calls (PROTOCOL.md "PAUSE and RESUME",
// "TOUCH", several queues in "RESERVE", "REDRIVE_ALL and RESOLVE_ALL", GET
// payload=1). The connection and the other commands are in client.cc.
#include "clients/cpp/client.h"
#include "clients/cpp/request_line.h"

namespace tarde::client {

using client_detail::bad_reply;
using client_detail::number_text;
using client_detail::split_tokens;
using client_detail::to_number;

Result<std::optional<ReservedRequest>> Client::reserve_any(const std::vector<std::string>& queues,
                                                           std::chrono::milliseconds wait) {
  Line line("RESERVE");
  std::string list;
  for (const std::string& queue : queues) {
    auto checked = net::parse_queue(queue);
    if (!checked.is_ok())
      return Status::invalid_argument("BAD_ARGUMENT " + checked.status().message());
    list += (list.empty() ? "" : ",") + queue;
  }
  line.word(list, "queues");
  if (wait.count() > 0) line.option("wait", std::to_string(wait.count()) + "ms");
  return reserve_line(line);
}

Result<Summary> Client::touch(std::string_view tx_id, uint32_t attempt) {
  return summary_call(Line("TOUCH").tx(tx_id).word(std::to_string(attempt)));
}

Status Client::pause(std::string_view queue) {
  return expect_call(Line("PAUSE").queue(queue), ReplyKind::kPaused);
}

Status Client::resume(std::string_view queue) {
  return expect_call(Line("RESUME").queue(queue), ReplyKind::kResumed);
}

namespace {

// The n of `REDRIVEN n` / `RESOLVED n`.
Result<uint64_t> count_of(const Reply& reply, ReplyKind kind) {
  const std::vector<std::string_view> t = split_tokens(reply.head);
  uint64_t n = 0;
  if (reply.kind != kind || t.size() != 2 || !to_number(t[1], &n)) {
    return bad_reply("reply", reply.head);
  }
  return n;
}

}  // namespace

Result<uint64_t> Client::redrive_all(std::string_view queue, const LetterFilter& filter) {
  Line line("REDRIVE_ALL");
  line.queue(queue).option("prefix", filter.prefix).option("last_error", filter.last_error);
  line.option("limit", number_text(filter.limit));
  auto reply = typed_call(line);
  if (!reply.is_ok()) return reply.status();
  return count_of(reply.value(), ReplyKind::kRedriven);
}

Result<uint64_t> Client::resolve_all(std::string_view queue, Terminal terminal,
                                     const LetterFilter& filter,
                                     std::optional<std::string> reason) {
  Line line("RESOLVE_ALL");
  line.queue(queue).word(terminal == Terminal::kSucceeded ? "SUCCEEDED" : "FAILED");
  line.option("prefix", filter.prefix).option("last_error", filter.last_error);
  line.option("reason", reason).option("limit", number_text(filter.limit));
  auto reply = typed_call(line);
  if (!reply.is_ok()) return reply.status();
  return count_of(reply.value(), ReplyKind::kResolved);
}

Result<TxInfo> Client::get_payload(std::string_view tx_id) {
  auto reply = typed_call(Line("GET").tx(tx_id).option("payload", std::string("1")));
  if (!reply.is_ok()) return reply.status();
  if (reply.value().kind == ReplyKind::kNotFound) {
    return Status::not_found("no transaction " + std::string(tx_id));
  }
  auto tx = parse_tx_info(reply.value().head);
  if (!tx.is_ok()) return tx.status();
  tx.value().payload = reply.value().payload;
  return tx;
}

}  // namespace tarde::client
