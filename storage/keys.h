#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

// Key encodings of every column family (specified in storage/FORMAT.md).
// Numbers are written big-endian by hand so that RocksDB's default bytewise
// comparator orders keys by time and sequence; tarde never installs a custom
// comparator. A tx_id is 1 or more bytes in 0x21..0x7E and a queue name 1 or
// more bytes of [A-Za-z0-9_.-], so the byte 0x00 can separate key parts.
// Encoders assert their preconditions (a bad id is a programming error);
// decoders return corruption for malformed keys. All functions are pure and
// may be called from any thread.
namespace tarde::storage {

bool is_valid_tx_id(std::string_view tx_id);
bool is_valid_queue_name(std::string_view queue);

// Big-endian fixed-width integers, the building blocks of every key.
void append_be64(std::string* out, uint64_t value);
void append_be32(std::string* out, uint32_t value);
uint64_t read_be64(std::string_view bytes);  // Requires: bytes.size() >= 8
uint32_t read_be32(std::string_view bytes);  // Requires: bytes.size() >= 4

// The first key after `key` in bytewise order: key + '\0'.
std::string key_after(std::string_view key);
// The first key that does not start with `prefix`. Requires: prefix ends in a
// byte below 0xFF (every prefix built here ends in the separator 0x00).
std::string prefix_end(std::string_view prefix);
// The key with non-printable bytes escaped as \xNN, for error messages.
std::string printable_key(std::string_view key);

// tx: tx_id.
std::string tx_key(std::string_view tx_id);
// The same key as a view of tx_id, for a lookup that needs no copy.
std::string_view tx_key_view(std::string_view tx_id);
Result<std::string> decode_tx_key(std::string_view key);

// due: be64(fire_at_ms) . tx_id. Requires: fire_at_ms >= 0.
struct DueKey {
  int64_t fire_at_ms = 0;
  std::string tx_id;
};
std::string due_key(int64_t fire_at_ms, std::string_view tx_id);
Result<DueKey> decode_due_key(std::string_view key);
// The first key after every due key with fire_at_ms <= until_ms.
// Requires: until_ms >= 0.
std::string due_upper_bound(int64_t until_ms);

// ready: queue . 0x00 . be64(ready_at_ms) . be64(seq).
struct ReadyKey {
  std::string queue;
  int64_t ready_at_ms = 0;
  uint64_t seq = 0;
};
std::string ready_key(std::string_view queue, int64_t ready_at_ms, uint64_t seq);
std::string ready_prefix(std::string_view queue);  // queue . 0x00
Result<ReadyKey> decode_ready_key(std::string_view key);

// events: tx_id . 0x00 . be64(seq).
struct EventKey {
  std::string tx_id;
  uint64_t seq = 0;
};
std::string event_key(std::string_view tx_id, uint64_t seq);
std::string event_prefix(std::string_view tx_id);  // tx_id . 0x00
Result<EventKey> decode_event_key(std::string_view key);

// dead: queue . 0x00 . tx_id.
struct DeadKey {
  std::string queue;
  std::string tx_id;
};
std::string dead_key(std::string_view queue, std::string_view tx_id);
std::string dead_prefix(std::string_view queue);  // queue . 0x00
Result<DeadKey> decode_dead_key(std::string_view key);

// state (format version 2): queue . 0x00 . state byte . tx_id, value empty.
// The state byte is an IndexedState (storage/records.h), 1..kIndexedStateMax.
// A queue's transactions in one state are [state_prefix, prefix_end(...)) in
// tx_id order; those whose tx_id starts with p are a sub-range of it.
struct StateKey {
  std::string queue;
  uint8_t state = 0;
  std::string tx_id;
};
// Requires: a valid queue and tx_id, and 1 <= state <= kIndexedStateMax.
std::string state_key(std::string_view queue, uint8_t state, std::string_view tx_id);
// queue . 0x00 . state byte: the range of one queue's transactions in one
// state. Requires: as state_key.
std::string state_prefix(std::string_view queue, uint8_t state);
Result<StateKey> decode_state_key(std::string_view key);

// meta: a name. "format" holds the format version; "queue/<name>" a queue's
// QueueConfig; "ready_seq_reserved" the ready sequence numbers' high-water mark.
inline constexpr std::string_view kMetaFormatKey = "format";
inline constexpr std::string_view kMetaQueuePrefix = "queue/";
// "ready_seq_reserved": be64; every ready seq ever written is below it.
inline constexpr std::string_view kMetaReadySeqKey = "ready_seq_reserved";
std::string queue_config_key(std::string_view queue);
Result<std::string> decode_queue_config_key(std::string_view key);  // the queue name
// "ready_floor/<name>": be64(ready_at_ms) be64(seq); no ready entry of that
// queue has a smaller key. Where a restart starts reading the queue.
inline constexpr std::string_view kMetaReadyFloorPrefix = "ready_floor/";
std::string ready_floor_key(std::string_view queue);
Result<std::string> decode_ready_floor_key(std::string_view key);  // the queue name
struct ReadyFloor {
  int64_t ready_at_ms = 0;
  uint64_t seq = 0;
};
std::string encode_ready_floor(const ReadyFloor& floor);
Result<ReadyFloor> decode_ready_floor(std::string_view value);

}  // namespace tarde::storage
