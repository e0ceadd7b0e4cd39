#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "net/wire/codec.h"
#include "storage/backups.h"
#include "storage/records.h"

// The text of every reply of PROTOCOL.md, built in one place so that the
// server, the tests and the documentation agree on each byte. Every function
// returns the complete reply including its final "\r\n".
namespace tarde::net {

std::string error_reply(ErrorCode code, std::string_view message);
// `<STATUS> <tx_id> <state> <attempt> <next_attempt> <next_fire_at>` or
// `NOT_FOUND <tx_id>`.
std::string tx_reply(const engine::TxReply& reply);
// `NOT_FOUND <tx_id>`, for a read of a transaction the store does not hold.
std::string not_found_reply(std::string_view tx_id);
// `REQUEST <tx_id> <attempt> <key> <handouts> <bytes>\r\n<payload>\r\n`.
std::string request_reply(const engine::HandOut& hand_out);
// `TX id=... payload_bytes=...`, then with_payload the payload and CRLF.
std::string get_reply(const storage::TxRecord& record, bool with_payload = false);
// `EVENTS <n>` then one `EVENT at=... seq=<n> [dropped=<k>]` line each.
std::string events_reply(const std::vector<engine::HistoryEntry>& events);
// `LETTERS n`, then each `LETTER ... payload_bytes=...` line, followed by
// its payload and CRLF when with_payload.
std::string letters_reply(const std::vector<storage::DeadLetter>& letters,
                          bool with_payload = false);
// `PAUSED <queue>` or `RESUMED <queue>`.
std::string paused_reply(std::string_view queue, bool paused);
// `<word> <n>`: the answer of a bulk command (`REDRIVEN 3`).
std::string count_reply(std::string_view word, size_t n);
// `ITEMS <n> next=<cursor|->` then one `ITEM tx=... reason=...` line each.
std::string list_reply(const engine::ListPage& page);
// `CONFIG <queue> name=value ...` with every setting.
std::string config_reply(std::string_view queue, const storage::QueueConfig& config);
// `STATS <n>` then one `name value` line each.
std::string stats_reply(const std::vector<std::pair<std::string, std::string>>& figures);

// `BACKUP id=<n> bytes=<n> files=<n> took_ms=<n>`, or the error a failed
// backup answers (BUSY, SHUTTING_DOWN or BACKUP_FAILED).
std::string backup_reply(const Result<storage::BackupReport>& made);

// The idempotency key of an attempt's request: `<tx_id>#<attempt>`.
std::string idempotency_key(std::string_view tx_id, uint32_t attempt);

}  // namespace tarde::net
