#include "storage/keys.h"

#include <cstdio>

#include "base/assert.h"
#include "storage/records.h"

namespace tarde::storage {
namespace {

constexpr char kSeparator = '\0';
constexpr size_t kBe64Bytes = 8;
// Times are non-negative int64 stored as uint64; a set top bit cannot come
// from a valid time and marks a corrupt key.
constexpr uint64_t kTimeSignBit = uint64_t{1} << 63;

Status bad_key(const char* cf, std::string_view key, const char* why) {
  return Status::corruption(std::string("bad ") + cf + " key " + printable_key(key) + ": " + why);
}

// Splits key at its first separator; false when there is none.
bool split_at_separator(std::string_view key, std::string_view* head, std::string_view* tail) {
  const size_t pos = key.find(kSeparator);
  if (pos == std::string_view::npos) return false;
  *head = key.substr(0, pos);
  *tail = key.substr(pos + 1);
  return true;
}

std::string joined(std::string_view head, std::string_view tail) {
  std::string key;
  key.reserve(head.size() + 1 + tail.size());
  key.append(head);
  key.push_back(kSeparator);
  key.append(tail);
  return key;
}

}  // namespace

bool is_valid_tx_id(std::string_view tx_id) {
  if (tx_id.empty()) return false;
  for (char c : tx_id) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x21 || byte > 0x7E) return false;
  }
  return true;
}

bool is_valid_queue_name(std::string_view queue) {
  if (queue.empty()) return false;
  for (char c : queue) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && c != '_' && c != '.' && c != '-') return false;
  }
  return true;
}

void append_be64(std::string* out, uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>((value >> shift) & 0xFF));
  }
}

void append_be32(std::string* out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>((value >> shift) & 0xFF));
  }
}

uint64_t read_be64(std::string_view bytes) {
  TARDE_ASSERT(bytes.size() >= kBe64Bytes);
  uint64_t value = 0;
  for (size_t i = 0; i < kBe64Bytes; ++i) {
    value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  }
  return value;
}

uint32_t read_be32(std::string_view bytes) {
  TARDE_ASSERT(bytes.size() >= 4);
  uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i) {
    value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  }
  return value;
}

std::string key_after(std::string_view key) {
  std::string next(key);
  next.push_back('\0');
  return next;
}

std::string prefix_end(std::string_view prefix) {
  TARDE_ASSERT(!prefix.empty());
  TARDE_ASSERT(static_cast<unsigned char>(prefix.back()) != 0xFF);
  std::string end(prefix);
  end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
  return end;
}

std::string printable_key(std::string_view key) {
  std::string out = "'";
  for (char c : key) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7F && c != '\\' && c != '\'') {
      out.push_back(c);
    } else {
      char escaped[5];
      std::snprintf(escaped, sizeof(escaped), "\\x%02X", byte);
      out.append(escaped);
    }
  }
  out.push_back('\'');
  return out;
}

std::string_view tx_key_view(std::string_view tx_id) {
  TARDE_ASSERT(is_valid_tx_id(tx_id));
  return tx_id;
}

std::string tx_key(std::string_view tx_id) { return std::string(tx_key_view(tx_id)); }

Result<std::string> decode_tx_key(std::string_view key) {
  if (!is_valid_tx_id(key)) return bad_key("tx", key, "not a tx_id");
  return std::string(key);
}

std::string due_key(int64_t fire_at_ms, std::string_view tx_id) {
  TARDE_ASSERT(fire_at_ms >= 0);
  TARDE_ASSERT(is_valid_tx_id(tx_id));
  std::string key;
  key.reserve(kBe64Bytes + tx_id.size());
  append_be64(&key, static_cast<uint64_t>(fire_at_ms));
  key.append(tx_id);
  return key;
}

Result<DueKey> decode_due_key(std::string_view key) {
  if (key.size() <= kBe64Bytes) return bad_key("due", key, "too short");
  const uint64_t fire_at = read_be64(key);
  if ((fire_at & kTimeSignBit) != 0) return bad_key("due", key, "negative time");
  const std::string_view tx_id = key.substr(kBe64Bytes);
  if (!is_valid_tx_id(tx_id)) return bad_key("due", key, "bad tx_id");
  return DueKey{static_cast<int64_t>(fire_at), std::string(tx_id)};
}

std::string due_upper_bound(int64_t until_ms) {
  TARDE_ASSERT(until_ms >= 0);
  // until_ms + 1 is at most 2^63, which fits a uint64 and sorts after every
  // valid time.
  std::string key;
  append_be64(&key, static_cast<uint64_t>(until_ms) + 1);
  return key;
}

std::string ready_key(std::string_view queue, int64_t ready_at_ms, uint64_t seq) {
  TARDE_ASSERT(ready_at_ms >= 0);
  std::string key = ready_prefix(queue);
  append_be64(&key, static_cast<uint64_t>(ready_at_ms));
  append_be64(&key, seq);
  return key;
}

std::string ready_prefix(std::string_view queue) {
  TARDE_ASSERT(is_valid_queue_name(queue));
  return joined(queue, {});
}

Result<ReadyKey> decode_ready_key(std::string_view key) {
  std::string_view queue;
  std::string_view rest;
  if (!split_at_separator(key, &queue, &rest)) return bad_key("ready", key, "no separator");
  if (!is_valid_queue_name(queue)) return bad_key("ready", key, "bad queue name");
  if (rest.size() != 2 * kBe64Bytes) return bad_key("ready", key, "wrong length");
  const uint64_t ready_at = read_be64(rest);
  if ((ready_at & kTimeSignBit) != 0) return bad_key("ready", key, "negative time");
  return ReadyKey{std::string(queue), static_cast<int64_t>(ready_at),
                  read_be64(rest.substr(kBe64Bytes))};
}

std::string event_key(std::string_view tx_id, uint64_t seq) {
  std::string key = event_prefix(tx_id);
  append_be64(&key, seq);
  return key;
}

std::string event_prefix(std::string_view tx_id) {
  TARDE_ASSERT(is_valid_tx_id(tx_id));
  return joined(tx_id, {});
}

Result<EventKey> decode_event_key(std::string_view key) {
  std::string_view tx_id;
  std::string_view rest;
  if (!split_at_separator(key, &tx_id, &rest)) return bad_key("events", key, "no separator");
  if (!is_valid_tx_id(tx_id)) return bad_key("events", key, "bad tx_id");
  if (rest.size() != kBe64Bytes) return bad_key("events", key, "wrong length");
  return EventKey{std::string(tx_id), read_be64(rest)};
}

std::string dead_key(std::string_view queue, std::string_view tx_id) {
  TARDE_ASSERT(is_valid_tx_id(tx_id));
  std::string key = dead_prefix(queue);
  key.append(tx_id);
  return key;
}

std::string dead_prefix(std::string_view queue) {
  TARDE_ASSERT(is_valid_queue_name(queue));
  return joined(queue, {});
}

Result<DeadKey> decode_dead_key(std::string_view key) {
  std::string_view queue;
  std::string_view tx_id;
  if (!split_at_separator(key, &queue, &tx_id)) return bad_key("dead", key, "no separator");
  if (!is_valid_queue_name(queue)) return bad_key("dead", key, "bad queue name");
  if (!is_valid_tx_id(tx_id)) return bad_key("dead", key, "bad tx_id");
  return DeadKey{std::string(queue), std::string(tx_id)};
}

std::string state_prefix(std::string_view queue, uint8_t state) {
  TARDE_ASSERT(is_valid_queue_name(queue));
  TARDE_ASSERT(state >= 1);
  TARDE_ASSERT(state <= kIndexedStateMax);
  std::string key = joined(queue, {});
  key.push_back(static_cast<char>(state));
  return key;
}

std::string state_key(std::string_view queue, uint8_t state, std::string_view tx_id) {
  TARDE_ASSERT(is_valid_tx_id(tx_id));
  std::string key = state_prefix(queue, state);
  key.append(tx_id);
  return key;
}

Result<StateKey> decode_state_key(std::string_view key) {
  std::string_view queue;
  std::string_view rest;
  if (!split_at_separator(key, &queue, &rest)) return bad_key("state", key, "no separator");
  if (!is_valid_queue_name(queue)) return bad_key("state", key, "bad queue name");
  if (rest.empty()) return bad_key("state", key, "no state byte");
  const auto state = static_cast<uint8_t>(rest[0]);
  if (state < 1 || state > kIndexedStateMax) return bad_key("state", key, "unknown state");
  const std::string_view tx_id = rest.substr(1);
  if (!is_valid_tx_id(tx_id)) return bad_key("state", key, "bad tx_id");
  return StateKey{std::string(queue), state, std::string(tx_id)};
}

namespace {

// A per-queue meta key "<prefix><queue>", and back to the queue name.
std::string prefixed_queue_key(std::string_view prefix, std::string_view queue) {
  TARDE_ASSERT(is_valid_queue_name(queue));
  std::string key(prefix);
  key.append(queue);
  return key;
}

Result<std::string> queue_after_prefix(std::string_view key, std::string_view prefix) {
  if (!key.starts_with(prefix)) return bad_key("meta", key, "not of that kind");
  const std::string_view queue = key.substr(prefix.size());
  if (!is_valid_queue_name(queue)) return bad_key("meta", key, "bad queue name");
  return std::string(queue);
}

}  // namespace

std::string queue_config_key(std::string_view queue) {
  return prefixed_queue_key(kMetaQueuePrefix, queue);
}

Result<std::string> decode_queue_config_key(std::string_view key) {
  return queue_after_prefix(key, kMetaQueuePrefix);
}

std::string ready_floor_key(std::string_view queue) {
  return prefixed_queue_key(kMetaReadyFloorPrefix, queue);
}

Result<std::string> decode_ready_floor_key(std::string_view key) {
  return queue_after_prefix(key, kMetaReadyFloorPrefix);
}

std::string encode_ready_floor(const ReadyFloor& floor) {
  TARDE_ASSERT(floor.ready_at_ms >= 0);
  std::string value;
  append_be64(&value, static_cast<uint64_t>(floor.ready_at_ms));
  append_be64(&value, floor.seq);
  return value;
}

Result<ReadyFloor> decode_ready_floor(std::string_view value) {
  if (value.size() != 2 * kBe64Bytes) return Status::corruption("ready floor: not two be64");
  const uint64_t ready_at = read_be64(value);
  if ((ready_at & kTimeSignBit) != 0) return Status::corruption("ready floor: negative time");
  return ReadyFloor{static_cast<int64_t>(ready_at), read_be64(value.substr(kBe64Bytes))};
}

}  // namespace tarde::storage
