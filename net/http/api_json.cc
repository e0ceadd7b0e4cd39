#include "net/http/api_json.h"

#include "engine/backoff.h"
#include "engine/listing.h"
#include "net/core/config_args.h"

namespace tarde::net::http {
namespace {

// The largest draw of the jitter's unit: next_unit() is below 1.
constexpr double kUnitMax = 1.0 - 1e-12;

const char* due_kind_name(storage::DueKind kind) {
  switch (kind) {
    case storage::DueKind::kNone:
      return "none";
    case storage::DueKind::kRetry:
      return "retry";
    case storage::DueKind::kResponseTimeout:
      return "response_timeout";
    case storage::DueKind::kRetention:
      return "retention";
  }
  return "none";
}

Json failures_json(const std::vector<storage::DeliveryFailure>& failures) {
  Json out = Json::array();
  for (const storage::DeliveryFailure& failure : failures) {
    out.push_back(Json{{"at_ms", failure.at_ms}, {"reason", failure.reason}});
  }
  return out;
}

}  // namespace

const char* breaker_name(engine::Breaker::State state) {
  switch (state) {
    case engine::Breaker::State::kClosed:
      return "closed";
    case engine::Breaker::State::kOpen:
      return "open";
    case engine::Breaker::State::kHalfOpen:
      return "half_open";
  }
  return "closed";
}

std::string hex_text(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::string base64_text(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t chunk = 0;
    for (size_t j = 0; j < 3; ++j) {
      chunk = (chunk << 8) | (j < n ? static_cast<unsigned char>(bytes[i + j]) : 0u);
    }
    for (size_t j = 0; j < 4; ++j) {
      out += j <= n ? kAlphabet[(chunk >> (18 - 6 * j)) & 63] : '=';
    }
  }
  return out;
}

Json payload_json(std::string_view payload, PayloadEncoding encoding) {
  switch (encoding) {
    case PayloadEncoding::kText:
      return Json{{"encoding", "text"}, {"data", std::string(payload)}};
    case PayloadEncoding::kHex:
      return Json{{"encoding", "hex"}, {"data", hex_text(payload)}};
    case PayloadEncoding::kBase64:
      return Json{{"encoding", "base64"}, {"data", base64_text(payload)}};
    case PayloadEncoding::kNone:
      break;
  }
  return nullptr;
}

Json tx_json(const storage::TxRecord& r, PayloadEncoding encoding) {
  Json out;
  out["tx_id"] = r.tx_id;
  out["queue"] = r.queue;
  out["state"] = storage::to_string(r.state);
  out["attempt"] = r.attempt;
  out["next_attempt"] = r.next_attempt;
  out["max_attempts"] = r.policy.max_attempts;
  out["next_fire_at_ms"] = r.next_fire_at_ms;
  out["deadline_at_ms"] = r.deadline_at_ms;
  out["created_at_ms"] = r.created_at_ms;
  out["updated_at_ms"] = r.updated_at_ms;
  out["failed_deliveries"] = r.deliveries;
  out["transients"] = r.transients;
  out["reason"] = r.reason;
  out["due"] = Json{{"kind", due_kind_name(r.due_kind)}, {"at_ms", r.due_at_ms}};
  out["dead_lettered"] = r.dead_lettered;
  out["failures"] = failures_json(r.failures);
  out["policy"] = Json{{"max_attempts", r.policy.max_attempts},
                       {"base_ms", r.policy.base_ms},
                       {"factor", r.policy.factor},
                       {"cap_ms", r.policy.cap_ms},
                       {"jitter", r.policy.jitter},
                       {"strict_cap", r.policy.strict_cap},
                       {"transient_base_ms", r.policy.transient_base_ms},
                       {"transient_factor", r.policy.transient_factor},
                       {"transient_cap_ms", r.policy.transient_cap_ms},
                       {"max_transient", r.policy.max_transient}};
  out["plan"] = backoff_plan_json(r);
  out["payload_bytes"] = r.payload.size();
  if (encoding != PayloadEncoding::kNone) out["payload"] = payload_json(r.payload, encoding);
  return out;
}

Json backoff_plan_json(const storage::TxRecord& r) {
  Json plan = Json::array();
  if (storage::is_terminal(r.state)) return plan;
  // The attempt now scheduled, being sent or awaiting its answer.
  const uint32_t current =
      r.state == storage::TxState::kInFlight || r.next_attempt == 0 ? r.attempt : r.next_attempt;
  for (uint32_t k = std::max<uint32_t>(current, 1); k < r.policy.max_attempts; ++k) {
    plan.push_back(Json{{"attempt", k + 1},
                        {"after_cancelled_attempt", k},
                        {"wait_ms_min", engine::cancelled_wait_ms(r.policy, k, 0.0)},
                        {"wait_ms", engine::cancelled_wait_ms(r.policy, k, 0.5)},
                        {"wait_ms_max", engine::cancelled_wait_ms(r.policy, k, kUnitMax)}});
  }
  return plan;
}

Json event_json(const engine::HistoryEntry& entry) {
  const storage::EventRecord& e = entry.event;
  const std::optional<int64_t> late = engine::lateness_ms(e);
  return Json{{"at_ms", e.at_ms},
              {"from", storage::to_string(e.from)},
              {"to", storage::to_string(e.to)},
              {"attempt", e.attempt},
              {"next_attempt", e.next_attempt},
              {"cause", e.cause},
              {"reason", e.reason},
              {"due_at_ms", late ? Json(e.due_at_ms) : Json(nullptr)},
              {"late_ms", late ? Json(*late) : Json(nullptr)},
              {"seq", entry.seq},
              {"dropped", entry.dropped_before}};
}

Json letter_json(const storage::TxRecord& r, PayloadEncoding encoding) {
  // A dead letter stays as it was buried until it is redriven or resolved,
  // so its last update is its burial.
  Json out{{"tx_id", r.tx_id},
           {"queue", r.queue},
           {"attempt", r.attempt},
           {"failed_deliveries", r.deliveries},
           {"buried_at_ms", r.updated_at_ms},
           {"last_error", r.failures.empty() ? std::string() : r.failures.back().reason},
           {"failures", failures_json(r.failures)},
           {"payload_bytes", r.payload.size()}};
  if (encoding != PayloadEncoding::kNone) out["payload"] = payload_json(r.payload, encoding);
  return out;
}

Json list_item_json(const storage::TxRecord& r, PayloadEncoding encoding) {
  Json out{{"tx_id", r.tx_id},
           {"queue", r.queue},
           {"state", storage::to_string(r.state)},
           {"attempt", r.attempt},
           {"next_attempt", r.next_attempt},
           {"next_fire_at_ms", r.next_fire_at_ms},
           {"updated_at_ms", r.updated_at_ms},
           {"failed_deliveries", r.deliveries},
           {"reason", std::string(engine::shown_reason(r))},
           {"due", Json{{"kind", due_kind_name(r.due_kind)}, {"at_ms", r.due_at_ms}}},
           {"payload_bytes", r.payload.size()}};
  if (encoding != PayloadEncoding::kNone) out["payload"] = payload_json(r.payload, encoding);
  return out;
}

Json lease_json(const engine::Engine::LeaseView& lease, int64_t now_ms) {
  return Json{{"tx_id", lease.tx_id},
              {"queue", lease.queue},
              {"attempt", lease.attempt},
              {"connection", lease.conn},
              {"leased_at_ms", lease.leased_at_ms},
              {"expires_at_ms", lease.expires_at_ms},
              {"held_ms", std::max<int64_t>(0, now_ms - lease.leased_at_ms)}};
}

Json queue_json(const std::string& name, const engine::Engine::QueueFigures& q, double handout_rate,
                int64_t now_ms) {
  return Json{{"name", name},
              {"ready", q.ready},
              {"leased", q.leased},
              {"in_flight", q.in_flight},
              {"scheduled", q.scheduled},
              {"dead", q.dead},
              {"oldest_ready_age_ms",
               q.oldest_ready_at_ms == 0 ? 0 : std::max<int64_t>(0, now_ms - q.oldest_ready_at_ms)},
              {"handed_out", q.handed_out},
              {"handout_rate", handout_rate},
              {"breaker", breaker_name(q.breaker)},
              {"paused", q.paused},
              {"counting", q.counting}};
}

Json config_json(const std::string& name, const storage::QueueConfig& config) {
  Json settings;
  for (const auto& [key, value] : config_values(config)) settings[key] = value;
  return Json{{"queue", name}, {"settings", settings}};
}

Json sample_json(const RateSample& s) {
  return Json{
      {"at_ms", s.at_ms},
      {"handed_out", s.handed_out},
      {"answers", Json{{"SUCCESS", s.answers[static_cast<size_t>(engine::Answer::kSuccess)]},
                       {"CANCELLED", s.answers[static_cast<size_t>(engine::Answer::kCancelled)]},
                       {"TRANSIENT", s.answers[static_cast<size_t>(engine::Answer::kTransient)]},
                       {"REJECTED", s.answers[static_cast<size_t>(engine::Answer::kRejected)]}}},
      {"retries_fired", s.retries_fired},
      {"lateness_p99_ms", s.lateness_p99_ms},
      {"lateness_max_ms", s.lateness_max_ms}};
}

}  // namespace tarde::net::http
