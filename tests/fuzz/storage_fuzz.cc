// libFuzzer target for what tarde reads back from RocksDB: every value
// decoder of storage/codec.h and every key decoder of storage/keys.h, each
// given the whole input.
//
// A decoder must either return corruption with a message, or a value that
// passes validate() and re-encodes consistently: encoding it and decoding
// that gives bytes that encode to themselves (a fixed point), and when the
// input was written the way this build writes (little-endian archive, the
// current class version, or the compact layout of transaction and event
// values) the re-encoding is byte-for-byte the input. Transaction and event
// values of the cereal layout must read the same through the direct coder
// and through cereal.
// Keys are canonical: a decoded key re-encodes to exactly the input. The
// input is also read as a WAL file: its tail scan ends within it, hands a
// damaged file whole, and finds the same end again in what it kept.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <type_traits>

#include "storage/codec.h"
#include "storage/crc32c.h"
#include "storage/keys.h"
#include "storage/wal_tail.h"
#include "tests/fuzz/fuzz_check.h"

namespace tarde::storage {
namespace {

// The byte after the format byte is the archive's endianness flag; cereal
// converts unless it is exactly 1 (little-endian, as this build writes).
// The next four are the struct's class version: an older version (a
// QueueConfig, EventRecord or TxRecord of version 1) is read but re-encoded
// as the current one.
bool written_like_this_build(std::string_view bytes, std::uint32_t class_version) {
  if (bytes.size() < 6 || static_cast<std::uint8_t>(bytes[1]) != 1) return false;
  std::uint32_t version = 0;
  for (int i = 5; i >= 2; --i) version = (version << 8) | static_cast<std::uint8_t>(bytes[i]);
  return version == class_version;
}

// Transaction and event values are written in the compact layout, whose
// encoding of a value is unique.
bool written_compact(std::string_view bytes) {
  return !bytes.empty() && static_cast<std::uint8_t>(bytes[0]) == kCompactValueFormat;
}

template <typename T, typename Decode, typename Encode>
void check_value(std::string_view bytes, Decode decode, Encode encode,
                 std::uint32_t class_version = kClassVersion) {
  const Result<T> decoded = decode(bytes);
  if (!decoded.is_ok()) {
    FUZZ_CHECK(decoded.status().code() == Status::Code::kCorruption);
    FUZZ_CHECK(!decoded.status().message().empty());
    return;
  }
  FUZZ_CHECK(validate(decoded.value()).is_ok());
  const std::string encoded = encode(decoded.value());
  const bool compact = std::is_same_v<T, TxRecord> || std::is_same_v<T, EventRecord>;
  if (compact ? written_compact(bytes) : written_like_this_build(bytes, class_version)) {
    FUZZ_CHECK(encoded == bytes);
  }
  const Result<T> again = decode(encoded);
  FUZZ_CHECK(again.is_ok());
  // Compared as bytes, not with ==: a NaN double is a legal stored value
  // that never compares equal to itself.
  FUZZ_CHECK(encode(again.value()) == encoded);
}

// When the direct reader takes the bytes, cereal takes them too and reads
// the same value; a value of class version 1 also passes `version_1_holds`.
template <typename T, typename Decode, typename Encode, typename Holds>
void check_readers_agree(std::string_view bytes, Decode direct_decode, Decode cereal_decode,
                         Encode encode, Holds version_1_holds) {
  if (written_compact(bytes)) return;  // cereal reads the cereal layout only
  const Result<T> direct = direct_decode(bytes);
  if (!direct.is_ok()) return;
  const Result<T> cereal = cereal_decode(bytes);
  FUZZ_CHECK(cereal.is_ok());
  FUZZ_CHECK(encode(cereal.value()) == encode(direct.value()));
  if (bytes.size() >= 6 && bytes[2] == 1) FUZZ_CHECK(version_1_holds(direct.value()));
}

template <typename Key, typename Decode, typename Encode>
void check_key(std::string_view bytes, Decode decode, Encode encode) {
  const Result<Key> decoded = decode(bytes);
  if (!decoded.is_ok()) {
    FUZZ_CHECK(decoded.status().code() == Status::Code::kCorruption);
    FUZZ_CHECK(!decoded.status().message().empty());
    return;
  }
  FUZZ_CHECK(encode(decoded.value()) == bytes);
}

}  // namespace
}  // namespace tarde::storage

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tarde::storage;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  check_value<TxRecord>(bytes, decode_tx, encode_tx);
  // The direct reader and cereal agree on every record, of either version:
  // both refuse it, or both read the same record (version 1 holds no event).
  check_readers_agree<TxRecord>(
      bytes, decode_tx, decode_tx_with_cereal_for_test, encode_tx,
      [](const TxRecord& r) { return !r.first_event && !r.newest_event; });
  check_value<EventRecord>(bytes, decode_event, encode_event);
  // The same for events (version 1 has due 0).
  check_readers_agree<EventRecord>(bytes, decode_event, decode_event_with_cereal_for_test,
                                   encode_event,
                                   [](const EventRecord& e) { return e.due_at_ms == 0; });
  check_value<DueValue>(bytes, decode_due_value, encode_due_value);
  check_value<ReadyValue>(bytes, decode_ready_value, encode_ready_value);
  check_value<DeadLetter>(bytes, decode_dead_letter, encode_dead_letter);
  check_value<QueueConfig>(bytes, decode_queue_config, encode_queue_config, kQueueConfigVersion);

  if (const tarde::Result<uint32_t> version = decode_format_version(bytes); version.is_ok()) {
    FUZZ_CHECK(encode_format_version(version.value()) == bytes);
  }
  check_key<std::string>(bytes, decode_tx_key, [](const std::string& id) { return tx_key(id); });
  check_key<DueKey>(bytes, decode_due_key,
                    [](const DueKey& key) { return due_key(key.fire_at_ms, key.tx_id); });
  check_key<ReadyKey>(bytes, decode_ready_key, [](const ReadyKey& key) {
    return ready_key(key.queue, key.ready_at_ms, key.seq);
  });
  check_key<EventKey>(bytes, decode_event_key,
                      [](const EventKey& key) { return event_key(key.tx_id, key.seq); });
  check_key<DeadKey>(bytes, decode_dead_key,
                     [](const DeadKey& key) { return dead_key(key.queue, key.tx_id); });
  check_key<StateKey>(bytes, decode_state_key, [](const StateKey& key) {
    return state_key(key.queue, key.state, key.tx_id);
  });
  check_key<std::string>(bytes, decode_queue_config_key,
                         [](const std::string& queue) { return queue_config_key(queue); });
  FUZZ_CHECK(crc32c(bytes) == crc32c_portable(bytes));
  const WalTail tail = find_wal_tail(bytes);
  FUZZ_CHECK(tail.end <= bytes.size());
  if (tail.damaged) {
    FUZZ_CHECK(tail.end == bytes.size() && !tail.dropped);
  } else {
    const WalTail kept = find_wal_tail(bytes.substr(0, tail.end));
    FUZZ_CHECK(kept.end == tail.end && !kept.damaged && !kept.dropped);
  }

  const std::string printable = printable_key(bytes);
  for (const char c : printable) {
    FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7F);
  }
  return 0;
}
