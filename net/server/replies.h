#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "net/wire/codec.h"
#include "storage/records.h"

// The text of every reply of PROTOCOL.md, built in one place so that the
// server, the tests and the documentation agree on each byte. Every function
// returns the complete reply including its final "\r\n".
namespace tarde::net {

std::string error_reply(ErrorCode code, std::string_view message);
// `<STATUS> <tx_id> <state> <attempt> <next_attempt> <next_fire_at>` or
// `NOT_FOUND <tx_id>`.
std::string tx_reply(const engine::TxReply& reply);
// `REQUEST <tx_id> <attempt> <key> <deliveries> <bytes>\r\n<payload>\r\n`.
std::string request_reply(const engine::HandOut& hand_out);
// `TX id=... payload_bytes=...`.
std::string get_reply(const storage::TxRecord& record);
std::string events_reply(const std::vector<storage::EventRecord>& events);
std::string letters_reply(const std::vector<storage::DeadLetter>& letters);
// `ITEMS <n> next=<cursor|->` then one `ITEM tx=... reason=...` line each.
std::string list_reply(const engine::ListPage& page);
// `CONFIG <queue> name=value ...` with every setting.
std::string config_reply(std::string_view queue, const storage::QueueConfig& config);
// `STATS <n>` then one `name value` line each.
std::string stats_reply(const std::vector<std::pair<std::string, std::string>>& figures);

// The idempotency key of an attempt's request: `<tx_id>#<attempt>`.
std::string idempotency_key(std::string_view tx_id, uint32_t attempt);

}  // namespace tarde::net
