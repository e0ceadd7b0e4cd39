#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "engine/engine.h"
#include "net/http/rate_history.h"
#include "storage/records.h"

namespace tarde::net::http {

// How a payload is shown: not at all, as text (invalid UTF-8 replaced by
// U+FFFD when the JSON is written), as hex or as base64.
enum class PayloadEncoding { kNone, kText, kHex, kBase64 };

// The JSON shapes of net/HTTP_API.md, built from engine and storage values.
// Pure functions; every string from a client goes in as a JSON string, so
// json_text() escapes it.
using Json = nlohmann::ordered_json;

std::string hex_text(std::string_view bytes);
std::string base64_text(std::string_view bytes);
Json payload_json(std::string_view payload, PayloadEncoding encoding);

Json tx_json(const storage::TxRecord& record, PayloadEncoding encoding);
// The waits of the attempts left after the current one, as the engine draws
// them (engine/backoff.h): after a CANCELLED answer to attempt k the next
// attempt k + 1 waits cancelled_wait_ms(policy, k, unit), with the jitter's
// unit anywhere in [0, 1). Empty for a terminal transaction.
Json backoff_plan_json(const storage::TxRecord& record);
// One event of HISTORY: due_at_ms and late_ms only for a timer fire (else
// null), seq and dropped as the protocol's.
Json event_json(const engine::HistoryEntry& entry);
// A dead letter as /dead lists it, from its record (LIST dead).
Json letter_json(const storage::TxRecord& record, PayloadEncoding encoding);
// A transaction as /list lists it: GET's summary, its shown reason.
Json list_item_json(const storage::TxRecord& record, PayloadEncoding encoding);
Json lease_json(const engine::Engine::LeaseView& lease, int64_t now_ms);
Json queue_json(const std::string& name, const engine::Engine::QueueFigures& figures,
                double handout_rate, int64_t now_ms);
Json config_json(const std::string& name, const storage::QueueConfig& config);
Json sample_json(const RateSample& sample);

const char* breaker_name(engine::Breaker::State state);

}  // namespace tarde::net::http
