#include "storage/codec.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>

namespace tarde::storage {
namespace {

std::string to_hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    out.push_back(digits[byte >> 4]);
    out.push_back(digits[byte & 0xF]);
  }
  return out;
}

std::string from_hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

RetryPolicy sample_policy() {
  RetryPolicy policy;
  policy.max_attempts = 7;
  policy.base_ms = 1500;
  policy.factor = 3.5;
  policy.cap_ms = 90000;
  policy.jitter = 0.25;
  policy.strict_cap = true;
  policy.transient_base_ms = 200;
  policy.transient_factor = 1.25;
  policy.transient_cap_ms = 5000;
  policy.max_transient = 3;
  return policy;
}

TxRecord sample_tx() {
  TxRecord record;
  record.tx_id = "order-42";
  record.queue = "pay";
  record.state = TxState::kScheduled;
  record.attempt = 2;
  record.next_attempt = 3;
  record.policy = sample_policy();
  record.next_fire_at_ms = 1700000007000;
  record.deadline_at_ms = 1700000900000;
  record.created_at_ms = 1700000000000;
  record.updated_at_ms = 1700000001000;
  record.deliveries = 1;
  record.transients = 4;
  record.reason = "CANCELLED";
  record.payload = std::string("{\"a\":1}\0\xff", 9);
  record.events = 5;
  record.due_kind = DueKind::kRetry;
  record.due_at_ms = 1700000007000;
  record.ready_at_ms = 1700000000500;
  record.ready_seq = 9;
  record.dead_lettered = true;
  record.failures = {{1700000000600, "lease expired"}, {1700000000700, "released"}};
  return record;
}

EventRecord sample_event() {
  EventRecord event;
  event.at_ms = 1700000001000;
  event.from = TxState::kInFlight;
  event.to = TxState::kScheduled;
  event.attempt = 2;
  event.next_attempt = 3;
  event.cause = "RESPOND";
  event.reason = "CANCELLED";
  return event;
}

// The record of the TxRecord golden tests, and its bytes after the class
// version up to the end of version 1 (the failures).
TxRecord golden_tx() {
  TxRecord tx;
  tx.tx_id = "t1";
  tx.queue = "q";
  tx.state = TxState::kScheduled;
  tx.attempt = 1;
  tx.next_attempt = 2;
  tx.next_fire_at_ms = 1000;
  tx.payload = "p";
  tx.due_kind = DueKind::kRetry;
  tx.due_at_ms = 1000;
  tx.failures = {{5, "r"}};
  return tx;
}

// The event of the EventRecord golden tests: a retry's fire, SCHEDULED ->
// SENDING at 1003, due at 1000.
EventRecord golden_fire() {
  EventRecord fire;
  fire.at_ms = 1003;
  fire.from = TxState::kScheduled;
  fire.to = TxState::kSending;
  fire.attempt = 1;
  fire.next_attempt = 2;
  fire.cause = "timer";
  fire.due_at_ms = 1000;
  return fire;
}

// clang-format off
const std::string kGoldenTxFields =
      "02000000000000007431"                                // tx_id "t1"
      "010000000000000071"                                  // queue "q"
      "03"                                                  // state SCHEDULED
      "01000000" "02000000"                                 // attempt, next_attempt
      "01000000"                                            // RetryPolicy class version
      "04000000" "00dd6d0000000000" "0000000000000040"      // max_attempts, base, factor
      "005c260500000000" "9a9999999999b93f" "00"            // cap, jitter, strict_cap
      "e803000000000000" "9a9999999999f93f"                 // transient base, factor
      "c0d4010000000000" "0a000000"                         // transient cap, max_transient
      "e803000000000000" "0000000000000000"                 // next_fire_at, deadline_at
      "0000000000000000" "0000000000000000"                 // created_at, updated_at
      "00000000" "00000000"                                 // deliveries, transients
      "0000000000000000"                                    // reason ""
      "010000000000000070"                                  // payload "p"
      "0000000000000000"                                    // events
      "01" "e803000000000000"                               // due_kind RETRY, due_at
      "0000000000000000" "0000000000000000" "00"            // ready_at, ready_seq, dead
      "0100000000000000"                                    // 1 failure
      "01000000"                                            // DeliveryFailure class version
      "0500000000000000" "010000000000000072";              // at_ms 5, reason "r"
// clang-format on

TEST_CASE("codec: every record type round trips") {
  const TxRecord tx = sample_tx();
  Result<TxRecord> tx_back = decode_tx(encode_tx(tx));
  REQUIRE(tx_back.is_ok());
  CHECK(tx_back.value() == tx);

  const EventRecord event = sample_event();
  Result<EventRecord> event_back = decode_event(encode_event(event));
  REQUIRE(event_back.is_ok());
  CHECK(event_back.value() == event);

  const DueValue due{DueKind::kResponseTimeout, 6};
  Result<DueValue> due_back = decode_due_value(encode_due_value(due));
  REQUIRE(due_back.is_ok());
  CHECK(due_back.value() == due);

  const ReadyValue ready{"order-42", 3};
  Result<ReadyValue> ready_back = decode_ready_value(encode_ready_value(ready));
  REQUIRE(ready_back.is_ok());
  CHECK(ready_back.value() == ready);

  DeadLetter letter;
  letter.queue = "pay";
  letter.tx_id = "order-42";
  letter.attempt = 3;
  letter.deliveries = 5;
  letter.buried_at_ms = 1700000002000;
  letter.payload = "body";
  letter.failures = {{1, "x"}, {2, "disconnect"}};
  Result<DeadLetter> letter_back = decode_dead_letter(encode_dead_letter(letter));
  REQUIRE(letter_back.is_ok());
  CHECK(letter_back.value() == letter);

  QueueConfig config;
  config.policy = sample_policy();
  config.lease_ms = 1234;
  config.max_deliveries = 9;
  config.rate = 12.5;
  config.response_timeout_ms = 60000;
  config.breaker = false;
  config.retention_ms = 3600000;
  config.history_max = 50;
  config.stuck_after_ms = 120000;
  config.paused = true;
  Result<QueueConfig> config_back = decode_queue_config(encode_queue_config(config));
  REQUIRE(config_back.is_ok());
  CHECK(config_back.value() == config);

  Result<uint32_t> version = decode_format_version(encode_format_version(0x01020304));
  REQUIRE(version.is_ok());
  CHECK(version.value() == 0x01020304u);
  CHECK(encode_format_version(1) == std::string("\0\0\0\1", 4));
}

TEST_CASE("codec: golden bytes of the cereal layout (format byte 1, stores before format 4)") {
  const TxRecord tx = golden_tx();
  // Generated once from this build and pinned: a change here is a format
  // change (a new version plus a kept reader for the old one, FORMAT.md).
  const std::string tx_golden =
      "01"        // format byte
      "01"        // cereal: little-endian
      "02000000"  // TxRecord class version 2
      + kGoldenTxFields +
      "00"   // no first event held
      "00";  // no newest event held
  CHECK(to_hex(encode_tx_with_cereal_for_test(tx)) == tx_golden);
  Result<TxRecord> tx_back = decode_tx(from_hex(tx_golden));
  REQUIRE(tx_back.is_ok());
  CHECK(tx_back.value() == tx);
  EventRecord event;
  event.at_ms = 1000;
  event.from = TxState::kInFlight;
  event.to = TxState::kScheduled;
  event.attempt = 1;
  event.next_attempt = 2;
  event.cause = "RESPOND";
  // clang-format off
  const std::string event_golden =
      "01" "01" "02000000"                // format byte, little-endian, class version 2
      "e803000000000000"                  // at_ms 1000
      "02" "03"                           // from IN_FLIGHT, to SCHEDULED
      "01000000" "02000000"               // attempt, next_attempt
      "0700000000000000524553504f4e44"    // cause "RESPOND"
      "0000000000000000"                  // reason ""
      "0000000000000000";                 // due_at_ms 0: not a timer fire
  // clang-format on
  CHECK(to_hex(encode_event_with_cereal_for_test(event)) == event_golden);
  Result<EventRecord> event_back = decode_event(from_hex(event_golden));
  REQUIRE(event_back.is_ok());
  CHECK(event_back.value() == event);

  // A retry's fire: SCHEDULED -> SENDING at 1003, due at 1000.
  const EventRecord fire = golden_fire();
  // clang-format off
  const std::string fire_golden =
      "01" "01" "02000000"                // format byte, little-endian, class version 2
      "eb03000000000000"                  // at_ms 1003
      "03" "01"                           // from SCHEDULED, to SENDING
      "01000000" "02000000"               // attempt, next_attempt
      "050000000000000074696d6572"        // cause "timer"
      "0000000000000000"                  // reason ""
      "e803000000000000";                 // due_at_ms 1000
  // clang-format on
  Result<EventRecord> fire_back = decode_event(from_hex(fire_golden));
  REQUIRE(fire_back.is_ok());
  CHECK(fire_back.value() == fire);
  CHECK(to_hex(encode_event_with_cereal_for_test(fire)) == fire_golden);
}

TEST_CASE("codec: TxRecord version 1 bytes (stores before format 3) still read, holding no event") {
  const TxRecord tx = golden_tx();
  // The layout of version 1 pinned: now only an input of the old readers,
  // never written again.
  const std::string v1_golden =
      "0101"
      "01000000"  // TxRecord class version 1
      + kGoldenTxFields;
  const std::string bytes = from_hex(v1_golden);
  Result<TxRecord> direct = decode_tx(bytes);
  REQUIRE(direct.is_ok());
  CHECK(direct.value() == tx);
  CHECK_FALSE(direct.value().first_event);
  CHECK_FALSE(direct.value().newest_event);
  Result<TxRecord> cereal = decode_tx_with_cereal_for_test(bytes);
  REQUIRE(cereal.is_ok());
  CHECK(cereal.value() == tx);
  // cereal's version 2: the same fields and two empty flags.
  CHECK(to_hex(encode_tx_with_cereal_for_test(tx)) ==
        "010102000000" + v1_golden.substr(12) + "0000");
  // Version 1 with a version 2 tail is bytes left over; version 2 without
  // its tail is truncated; 0 and 3 are unknown: corrupt for both readers.
  std::string v1_long = bytes + std::string(2, '\0');
  CHECK(decode_tx(v1_long).status().code() == Status::Code::kCorruption);
  CHECK(decode_tx_with_cereal_for_test(v1_long).status().code() == Status::Code::kCorruption);
  std::string v2_short = bytes;
  v2_short[2] = 2;
  CHECK(decode_tx(v2_short).status().code() == Status::Code::kCorruption);
  CHECK(decode_tx_with_cereal_for_test(v2_short).status().code() == Status::Code::kCorruption);
  for (char version : {'\0', '\3'}) {
    std::string unknown = bytes;
    unknown[2] = version;
    CHECK(decode_tx(unknown).status().code() == Status::Code::kCorruption);
  }
}

TEST_CASE("codec: golden bytes of a TxRecord holding its first and newest events") {
  TxRecord tx;
  tx.tx_id = "t";
  tx.queue = "q";
  tx.events = 3;
  EventRecord first;
  first.at_ms = 1;
  first.to = TxState::kSending;
  first.cause = "E";
  EventRecord newest;
  newest.at_ms = 2;
  newest.from = TxState::kScheduled;
  newest.to = TxState::kSending;
  newest.cause = "t";
  newest.due_at_ms = 3;
  tx.first_event = first;
  tx.newest_event = newest;
  const std::string bytes = encode_tx_with_cereal_for_test(tx);
  // The record ends with each held event's flag and, before the first
  // EventRecord of the value only, EventRecord's class version (2).
  // clang-format off
  const std::string tail =
      "0000000000000000"                                    // 0 failures
      "01" "02000000"                                       // first held; EventRecord version 2
      "0100000000000000" "00" "01"                          // at_ms 1, from NONE, to SENDING
      "00000000" "00000000"                                 // attempt, next_attempt
      "010000000000000045" "0000000000000000"               // cause "E", reason ""
      "0000000000000000"                                    // due_at_ms 0
      "01"                                                  // newest held (no version again)
      "0200000000000000" "03" "01"                          // at_ms 2, SCHEDULED -> SENDING
      "00000000" "00000000"                                 // attempt, next_attempt
      "010000000000000074" "0000000000000000"               // cause "t", reason ""
      "0300000000000000";                                   // due_at_ms 3
  // clang-format on
  REQUIRE(to_hex(bytes).size() > tail.size());
  CHECK(to_hex(bytes).substr(to_hex(bytes).size() - tail.size()) == tail);
  Result<TxRecord> back = decode_tx(bytes);
  REQUIRE(back.is_ok());
  CHECK(back.value() == tx);
  // Only the newest held: the version goes before it (its 43 bytes of
  // fields are the last 86 hex digits).
  tx.first_event.reset();
  const std::string newest_only = to_hex(encode_tx_with_cereal_for_test(tx));
  CHECK(newest_only.substr(newest_only.size() - 98, 12) == "000102000000");
}

TEST_CASE("codec: a held event the record's events count cannot have is corruption") {
  TxRecord tx;
  tx.tx_id = "t";
  tx.queue = "q";
  tx.events = 1;
  tx.first_event = EventRecord{};
  REQUIRE(decode_tx(encode_tx(tx)).is_ok());
  TxRecord newest = tx;
  newest.events = 2;
  newest.newest_event = EventRecord{};
  REQUIRE(decode_tx(encode_tx(newest)).is_ok());
  // Encode a valid record, then lower its events count in the bytes.
  auto with_events = [](const TxRecord& record, uint64_t events) {
    std::string bytes = encode_tx_with_cereal_for_test(record);
    TxRecord probe = record;
    probe.events = 0x0102030405060708;
    const std::string marked = encode_tx_with_cereal_for_test(probe);
    for (size_t i = 0; i + 8 <= marked.size(); ++i) {
      if (marked.compare(i, 8, "\x08\x07\x06\x05\x04\x03\x02\x01") == 0) {
        for (size_t b = 0; b < 8; ++b) bytes[i + b] = static_cast<char>(events >> (8 * b));
      }
    }
    return bytes;
  };
  for (const auto& [record, events] :
       {std::pair{tx, uint64_t{0}}, std::pair{newest, uint64_t{1}}}) {
    Result<TxRecord> direct = decode_tx(with_events(record, events));
    REQUIRE_FALSE(direct.is_ok());
    CHECK(direct.status().code() == Status::Code::kCorruption);
    CHECK(direct.status().message().find("hold") != std::string::npos);
    CHECK(decode_tx_with_cereal_for_test(with_events(record, events)).status().code() ==
          Status::Code::kCorruption);
  }
  // A held event with a state out of range is corrupt too.
  TxRecord bad = tx;
  std::string bytes = encode_tx_with_cereal_for_test(bad);
  // From the end: the newest flag (1), due_at_ms (8), reason and cause (8
  // each, empty), next_attempt and attempt (4 each), then `to`.
  bytes[bytes.size() - 1 - 8 - 8 - 8 - 4 - 4 - 1] = 7;
  CHECK(decode_tx(bytes).status().code() == Status::Code::kCorruption);
}

TEST_CASE("codec: EventRecord version 1 bytes (stores written before due_at_ms) still read") {
  // Pinned when version 1 was the current layout (FORMAT.md's worked
  // example); now only an input of the old reader, never written again.
  // clang-format off
  const std::string v1_golden =
      "01" "01" "01000000"                // format byte, little-endian, class version 1
      "e803000000000000"                  // at_ms 1000
      "02" "03"                           // from IN_FLIGHT, to SCHEDULED
      "01000000" "02000000"               // attempt, next_attempt
      "0700000000000000524553504f4e44"    // cause "RESPOND"
      "0000000000000000";                 // reason ""
  // clang-format on
  EventRecord expected;
  expected.at_ms = 1000;
  expected.from = TxState::kInFlight;
  expected.to = TxState::kScheduled;
  expected.attempt = 1;
  expected.next_attempt = 2;
  expected.cause = "RESPOND";
  // Both readers, the direct one (decode_event) and cereal, agree.
  Result<EventRecord> direct = decode_event(from_hex(v1_golden));
  REQUIRE(direct.is_ok());
  CHECK(direct.value() == expected);
  CHECK(direct.value().due_at_ms == 0);
  Result<EventRecord> cereal = decode_event_with_cereal_for_test(from_hex(v1_golden));
  REQUIRE(cereal.is_ok());
  CHECK(cereal.value() == expected);
  // cereal's version 2: the same fields plus due_at_ms 0.
  CHECK(to_hex(encode_event_with_cereal_for_test(direct.value())) ==
        "010102000000" + v1_golden.substr(12) + "0000000000000000");

  // A version 1 value with a version 2 tail is bytes left over; a version 2
  // value without its tail is truncated: both are corrupt, for both readers.
  const std::string v1_long = from_hex(v1_golden) + std::string(8, '\0');
  CHECK(decode_event(v1_long).status().code() == Status::Code::kCorruption);
  CHECK(decode_event_with_cereal_for_test(v1_long).status().code() == Status::Code::kCorruption);
  std::string v2_short = from_hex(v1_golden);
  v2_short[2] = 2;
  CHECK(decode_event(v2_short).status().code() == Status::Code::kCorruption);
  CHECK(decode_event_with_cereal_for_test(v2_short).status().code() == Status::Code::kCorruption);
  // Version 0 and 3 are unknown.
  for (char version : {'\0', '\3'}) {
    std::string unknown = from_hex(v1_golden);
    unknown[2] = version;
    CHECK(decode_event(unknown).status().code() == Status::Code::kCorruption);
  }
}

TEST_CASE("codec: an EventRecord with a negative due time is corrupt") {
  EventRecord fire;
  fire.cause = "timer";
  fire.due_at_ms = 5;
  std::string cereal = encode_event_with_cereal_for_test(fire);
  cereal[cereal.size() - 1] = static_cast<char>(0x80);  // the due time's top byte: negative
  std::string compact = encode_event(fire);
  REQUIRE(compact.back() == 10);  // the due time, zigzag: 5 is 10
  compact.back() = 1;             // and 1 is -1
  for (const std::string& bytes : {cereal, compact}) {
    Result<EventRecord> decoded = decode_event(bytes);
    REQUIRE_FALSE(decoded.is_ok());
    CHECK(decoded.status().code() == Status::Code::kCorruption);
    CHECK(decoded.status().message().find("negative due time") != std::string::npos);
  }
}

TEST_CASE("codec: the direct coder reads cereal's bytes, and compact values read back") {
  std::mt19937_64 random(7);
  auto text = [&](size_t max) {
    std::string out(random() % (max + 1), 'a');
    for (char& c : out) c = static_cast<char>(random() % 256);
    return out;
  };
  for (int round = 0; round < 300; ++round) {
    TxRecord tx = sample_tx();
    tx.tx_id = "tx-" + std::to_string(random());
    tx.state = static_cast<TxState>(random() % 6);
    tx.attempt = static_cast<uint32_t>(random());
    tx.policy.factor = static_cast<double>(random() % 1000) / 7.0;
    tx.policy.strict_cap = random() % 2 == 0;
    tx.created_at_ms = static_cast<int64_t>(random() >> 1);
    tx.reason = text(20);
    tx.payload = text(300);
    tx.due_kind = static_cast<DueKind>(random() % 4);
    tx.dead_lettered = random() % 2 == 0;
    tx.failures.clear();
    for (size_t i = random() % 4; i > 0; --i)
      tx.failures.push_back({int64_t(random() >> 1), text(10)});
    auto random_event = [&] {
      EventRecord held = sample_event();
      held.at_ms = static_cast<int64_t>(random() >> 1);
      held.cause = text(12);
      held.reason = text(12);
      held.due_at_ms = random() % 2 == 0 ? 0 : static_cast<int64_t>(random() >> 1);
      return held;
    };
    tx.events = 2 + random() % 100;
    tx.first_event.reset();
    tx.newest_event.reset();
    if (random() % 2 == 0) tx.first_event = random_event();
    if (random() % 2 == 0) tx.newest_event = random_event();
    const std::string cereal = encode_tx_with_cereal_for_test(tx);
    Result<TxRecord> direct = decode_tx(cereal);
    REQUIRE(direct.is_ok());
    CHECK(direct.value() == tx);
    const std::string compact = encode_tx(tx);
    CHECK(compact[0] == kCompactValueFormat);
    CHECK(compact.size() < cereal.size());
    Result<TxRecord> back = decode_tx(compact);
    REQUIRE(back.is_ok());
    CHECK(back.value() == tx);

    EventRecord event = sample_event();
    event.at_ms = static_cast<int64_t>(random() >> 1);
    event.from = static_cast<TxState>(random() % 6);
    event.cause = text(12);
    event.reason = text(12);
    event.due_at_ms = random() % 2 == 0 ? 0 : static_cast<int64_t>(random() >> 1);
    Result<EventRecord> event_back = decode_event(encode_event(event));
    REQUIRE(event_back.is_ok());
    CHECK(event_back.value() == event);
    Result<EventRecord> event_direct = decode_event(encode_event_with_cereal_for_test(event));
    REQUIRE(event_direct.is_ok());
    CHECK(event_direct.value() == event);

    const DueValue due{static_cast<DueKind>(1 + random() % 3), static_cast<uint32_t>(random())};
    REQUIRE(to_hex(encode_due_value(due)) == to_hex(encode_due_with_cereal_for_test(due)));
    Result<DueValue> due_back = decode_due_value(encode_due_value(due));
    REQUIRE(due_back.is_ok());
    CHECK(due_back.value() == due);

    const ReadyValue ready{"tx-" + std::to_string(random()), static_cast<uint32_t>(random())};
    REQUIRE(to_hex(encode_ready_value(ready)) == to_hex(encode_ready_with_cereal_for_test(ready)));
    Result<ReadyValue> ready_back = decode_ready_value(encode_ready_value(ready));
    REQUIRE(ready_back.is_ok());
    CHECK(ready_back.value() == ready);
  }
}

TEST_CASE("codec: a big-endian TxRecord, which only cereal reads, still decodes") {
  // The direct reader takes only the little-endian flag; anything else
  // falls back to cereal, which FORMAT.md says accepts 0x00 (big-endian).
  TxRecord tx;
  tx.tx_id = "t";
  tx.queue = "q";
  tx.policy.max_attempts = 0x01020304;
  std::string bytes = encode_tx_with_cereal_for_test(tx);
  // With the flag flipped the direct reader must refuse, and the answer
  // (cereal reading every integer byte-swapped) must be cereal's, whatever
  // it is.
  bytes[1] = 0x00;
  Result<TxRecord> swapped = decode_tx(bytes);
  Result<TxRecord> reference = decode_tx_with_cereal_for_test(bytes);
  REQUIRE(swapped.is_ok() == reference.is_ok());
  if (reference.is_ok()) {
    CHECK(swapped.value() == reference.value());
  } else {
    CHECK(swapped.status().message() == reference.status().message());
  }
}

TEST_CASE("codec: truncated input is corruption at every length") {
  TxRecord holding = sample_tx();
  holding.first_event = sample_event();
  holding.newest_event = sample_event();
  for (const std::string& tx_bytes :
       {encode_tx(holding), encode_tx_with_cereal_for_test(holding)}) {
    for (size_t length = 0; length < tx_bytes.size(); ++length) {
      CAPTURE(length);
      Result<TxRecord> decoded = decode_tx(std::string_view(tx_bytes).substr(0, length));
      REQUIRE_FALSE(decoded.is_ok());
      CHECK(decoded.status().code() == Status::Code::kCorruption);
    }
  }
  for (const std::string& event_bytes :
       {encode_event(sample_event()), encode_event_with_cereal_for_test(sample_event())}) {
    for (size_t length = 0; length < event_bytes.size(); ++length) {
      CHECK(decode_event(std::string_view(event_bytes).substr(0, length)).status().code() ==
            Status::Code::kCorruption);
    }
  }
  const std::string due_bytes = encode_due_value(DueValue{DueKind::kRetry, 4});
  for (size_t length = 0; length < due_bytes.size(); ++length) {
    CHECK(decode_due_value(std::string_view(due_bytes).substr(0, length)).status().code() ==
          Status::Code::kCorruption);
  }
  const std::string ready_bytes = encode_ready_value(ReadyValue{"order-42", 4});
  for (size_t length = 0; length < ready_bytes.size(); ++length) {
    CHECK(decode_ready_value(std::string_view(ready_bytes).substr(0, length)).status().code() ==
          Status::Code::kCorruption);
  }
}

TEST_CASE("codec: index values with a bad kind, a bad tx_id or trailing bytes are corruption") {
  std::string due = encode_due_value(DueValue{DueKind::kRetry, 4});
  CHECK(decode_due_value(due + "x").status().code() == Status::Code::kCorruption);
  due[1 + 1 + 4] = 4;  // kind 4 is not a DueKind
  CHECK(decode_due_value(due).status().code() == Status::Code::kCorruption);

  std::string ready = encode_ready_value(ReadyValue{"order-42", 4});
  CHECK(decode_ready_value(ready + "x").status().code() == Status::Code::kCorruption);
  ready[1 + 1 + 4 + 8] = ' ';  // a space is not allowed in a tx_id
  CHECK(decode_ready_value(ready).status().code() == Status::Code::kCorruption);
}

TEST_CASE("codec: wrong format byte, trailing bytes and bad class version are corruption") {
  std::string bytes = encode_event_with_cereal_for_test(sample_event());
  std::string wrong_format = bytes;
  wrong_format[0] = 3;  // neither the cereal layout (1) nor the compact one (2)
  Result<EventRecord> decoded = decode_event(wrong_format);
  REQUIRE_FALSE(decoded.is_ok());
  CHECK(decoded.status().code() == Status::Code::kCorruption);
  CHECK(decoded.status().message().find("format byte 3") != std::string::npos);
  CHECK(decode_event(encode_event(sample_event()) + "x").status().code() ==
        Status::Code::kCorruption);

  CHECK(decode_event(bytes + "x").status().code() == Status::Code::kCorruption);

  std::string wrong_version = bytes;
  wrong_version[2] = 3;  // EventRecord class version 3 does not exist yet
  Result<EventRecord> versioned = decode_event(wrong_version);
  REQUIRE_FALSE(versioned.is_ok());
  CHECK(versioned.status().message().find("class version 3") != std::string::npos);

  // A DueValue is not an EventRecord: the shapes differ and decoding fails.
  CHECK_FALSE(decode_event(encode_due_value(DueValue{DueKind::kRetry, 1})).is_ok());
}

TEST_CASE("codec: out-of-range enums and bools are corruption") {
  std::string event = encode_event_with_cereal_for_test(sample_event());
  // Layout: format, endianness, version (4), at_ms (8), from, to, ...
  event[1 + 1 + 4 + 8] = 6;  // from = 6 is not a TxState
  Result<EventRecord> bad_from = decode_event(event);
  REQUIRE_FALSE(bad_from.is_ok());
  CHECK(bad_from.status().code() == Status::Code::kCorruption);
  CHECK(bad_from.status().message().find("from state") != std::string::npos);

  std::string due = encode_due_value(DueValue{DueKind::kRetention, 1});
  due[1 + 1 + 4] = 4;  // kind = 4 is not a DueKind
  CHECK(decode_due_value(due).status().code() == Status::Code::kCorruption);

  QueueConfig config;
  std::string config_bytes = encode_queue_config(config);
  // The breaker flag sits 1 (paused) + 8 (stuck_after_ms) + 4 (history_max)
  // + 8 (retention_ms) + 1 bytes from the end.
  config_bytes[config_bytes.size() - 22] = 2;
  CHECK(decode_queue_config(config_bytes).status().code() == Status::Code::kCorruption);
  std::string bad_paused = encode_queue_config(config);
  bad_paused.back() = 2;
  CHECK(decode_queue_config(bad_paused).status().code() == Status::Code::kCorruption);
}

TEST_CASE("codec: QueueConfig version 2 appends history_max, stuck_after_ms and paused") {
  QueueConfig config;
  config.history_max = 0x01020304;
  config.stuck_after_ms = 0x0a0b0c0d;
  config.paused = true;
  const std::string bytes = encode_queue_config(config);
  // format byte, little-endian flag, class version 2.
  CHECK(bytes.substr(0, 6) == std::string("\x01\x01\x02\x00\x00\x00", 6));
  CHECK(bytes.substr(bytes.size() - 13) == std::string("\x04\x03\x02\x01"
                                                       "\x0d\x0c\x0b\x0a\x00\x00\x00\x00"
                                                       "\x01",
                                                       13));

  // A version 1 value (what stores of format 1 hold) is the same bytes with
  // class version 1 and without the last 13: it reads with the new fields at
  // their defaults.
  QueueConfig old = config;
  old.lease_ms = 777;
  std::string v1 = encode_queue_config(old);
  v1[2] = 1;
  v1.resize(v1.size() - 13);
  Result<QueueConfig> read = decode_queue_config(v1);
  REQUIRE(read.is_ok());
  CHECK(read.value().lease_ms == 777);
  CHECK(read.value().history_max == QueueConfig{}.history_max);
  CHECK(read.value().stuck_after_ms == QueueConfig{}.stuck_after_ms);
  CHECK_FALSE(read.value().paused);

  // Version 1 with the version 2 tail left on is bytes left over: corrupt.
  std::string v1_long = encode_queue_config(old);
  v1_long[2] = 1;
  CHECK(decode_queue_config(v1_long).status().code() == Status::Code::kCorruption);
  // An unknown version is corrupt.
  std::string v3 = encode_queue_config(old);
  v3[2] = 3;
  CHECK(decode_queue_config(v3).status().code() == Status::Code::kCorruption);
}

TEST_CASE("codec: a huge length prefix fails without a huge allocation") {
  // format, endianness, version, then a tx_id length of 2^33 (8 GiB): a
  // reader that allocated the claimed length up front would try 8 GiB here.
  std::string bytes = from_hex("010101000000") + std::string("\0\0\0\0\x02\0\0\0", 8);
  CHECK(decode_tx(bytes).status().code() == Status::Code::kCorruption);
  // A failures list claiming 2^40 items, after a valid record's scalars.
  TxRecord record;
  record.tx_id = "t";
  record.queue = "q";
  std::string tx = encode_tx_with_cereal_for_test(record);
  tx.resize(tx.size() - 10);  // the count and the two held-event flags
  tx += std::string("\0\0\0\0\0\x01\0\0", 8) + std::string(2, '\0');
  CHECK(decode_tx(tx).status().code() == Status::Code::kCorruption);
}

TEST_CASE("codec: random bytes never crash and never decode into an invalid record") {
  std::mt19937_64 random(12345);
  const std::string valid[2] = {encode_tx(sample_tx()),
                                encode_tx_with_cereal_for_test(sample_tx())};
  for (int round = 0; round < 3000; ++round) {
    std::string bytes;
    if (round % 2 == 0) {
      bytes.resize(random() % 64);
      for (char& c : bytes) c = static_cast<char>(random());
      // Get past the format byte: the cereal layout, or the compact one.
      if (!bytes.empty() && round % 4 == 0) bytes[0] = static_cast<char>(1 + round % 8 / 4);
    } else {
      bytes = valid[round % 4 / 2];  // flip a few bytes of a valid record
      for (int flips = 0; flips < 3; ++flips) {
        bytes[random() % bytes.size()] = static_cast<char>(random());
      }
    }
    Result<TxRecord> tx = decode_tx(bytes);
    if (tx.is_ok()) {
      CHECK(validate(tx.value()).is_ok());
    } else {
      CHECK(tx.status().code() == Status::Code::kCorruption);
    }
    Result<EventRecord> event = decode_event(bytes);
    if (!event.is_ok()) CHECK(event.status().code() == Status::Code::kCorruption);
    Result<DeadLetter> letter = decode_dead_letter(bytes);
    if (!letter.is_ok()) CHECK(letter.status().code() == Status::Code::kCorruption);
  }
}

TEST_CASE("codec: golden bytes of the compact layout (format byte 2)") {
  // Generated once from this build and pinned: a change here is a format
  // change (a new format byte plus a kept reader for this one, FORMAT.md).
  // clang-format off
  const std::string tx_golden =
      "02"                                  // format byte: compact
      "027431" "0171"                       // tx_id "t1", queue "q"
      "03" "01" "02"                        // SCHEDULED, attempt 1, next_attempt 2
      "04" "80f4ee06" "0000000000000040"    // max_attempts 4, base 2 h (zigzag), factor 2.0
      "80f0b252" "9a9999999999b93f" "00"    // cap 24 h, jitter 0.1, strict_cap false
      "d00f" "9a9999999999f93f"             // transient base 1000 ms, factor 1.6
      "80d30e" "0a"                         // transient cap 120 s, max_transient 10
      "d00f" "00" "00" "00"                 // next_fire_at 1000, deadline, created, updated
      "00" "00" "00" "0170"                 // deliveries, transients, reason "", payload "p"
      "00" "01" "d00f"                      // events 0, due RETRY at 1000
      "00" "00" "00"                        // ready_at, ready_seq, dead_lettered
      "01" "0a" "0172"                      // 1 failure: at 5, reason "r"
      "00";                                 // no event held
  const std::string fire_golden =
      "02"                                  // format byte: compact
      "d60f" "03" "01"                      // at 1003, SCHEDULED -> SENDING
      "01" "02"                             // attempt, next_attempt
      "0574696d6572" "00"                   // cause "timer", reason ""
      "d00f";                               // due at 1000
  // clang-format on
  const TxRecord tx = golden_tx();
  CHECK(to_hex(encode_tx(tx)) == tx_golden);
  Result<TxRecord> tx_back = decode_tx(from_hex(tx_golden));
  REQUIRE(tx_back.is_ok());
  CHECK(tx_back.value() == tx);
  const EventRecord fire = golden_fire();
  CHECK(to_hex(encode_event(fire)) == fire_golden);
  Result<EventRecord> fire_back = decode_event(from_hex(fire_golden));
  REQUIRE(fire_back.is_ok());
  CHECK(fire_back.value() == fire);

  // Held events: a byte of flags (1 first, 2 newest), then each present one.
  TxRecord holding = tx;
  holding.events = 2;
  holding.newest_event = fire;
  std::string expected = tx_golden;
  const size_t events_at = expected.find(
                               "0170"
                               "00"
                               "01"
                               "d00f") +
                           4;
  expected.replace(events_at, 2, "02");
  expected.replace(expected.size() - 2, 2, "02" + fire_golden.substr(2));
  CHECK(to_hex(encode_tx(holding)) == expected);
  Result<TxRecord> holding_back = decode_tx(from_hex(expected));
  REQUIRE(holding_back.is_ok());
  CHECK(holding_back.value() == holding);
}

TEST_CASE("codec: the compact reader refuses what its writer never writes") {
  const std::string golden = encode_tx(golden_tx());
  auto corrupt = [](const Result<TxRecord>& read, std::string_view what) {
    REQUIRE_FALSE(read.is_ok());
    CHECK(read.status().code() == Status::Code::kCorruption);
    CHECK(read.status().message().find(what) != std::string::npos);
  };
  corrupt(decode_tx(golden + "x"), "bytes left over");
  // tx_id "t1" written with a length of two bytes (0x82 0x00) instead of one.
  corrupt(decode_tx(from_hex("0282007431") + golden.substr(4)), "longer than it needs");
  // attempt (offset 7) as 2^32: five bytes where a uint32 ends.
  std::string wide = golden;
  wide.replace(7, 1, from_hex("8080808010"));
  corrupt(decode_tx(wide), "32-bit");
  // A varint of eleven bytes.
  wide = golden;
  wide.replace(7, 1, from_hex("ffffffffffffffffffff01"));
  corrupt(decode_tx(wide), "64 bits");
  // strict_cap (offset 34) as 2; unknown held-event bits.
  std::string flag = golden;
  REQUIRE(flag[34] == 0);
  flag[34] = 2;
  corrupt(decode_tx(flag), "flag byte");
  std::string held = golden;
  held.back() = 4;
  corrupt(decode_tx(held), "held events");
  // A state out of range is the validator's finding, as corruption too.
  std::string state = golden;
  REQUIRE(state[6] == 3);
  state[6] = 9;
  corrupt(decode_tx(state), "state out of range");
  // Lengths and counts beyond the bytes fail before allocating: a tx_id of
  // 2^40 bytes, and 2^40 failures after a valid record's scalars.
  corrupt(decode_tx(from_hex("028080808080807f")), "past the end");
  TxRecord none = golden_tx();
  none.failures.clear();
  std::string many = encode_tx(none);
  REQUIRE(many.substr(many.size() - 2) == std::string(2, '\0'));
  many.replace(many.size() - 2, 1, from_hex("808080808020"));
  corrupt(decode_tx(many), "count");
  // An event of another format byte, or a TxRecord's bytes read as an event.
  CHECK(decode_event(from_hex("03")).status().code() == Status::Code::kCorruption);
  CHECK(decode_event(golden).status().code() == Status::Code::kCorruption);
}

TEST_CASE("codec: format version value") {
  CHECK(decode_format_version("abc").status().code() == Status::Code::kCorruption);
  CHECK(decode_format_version("abcde").status().code() == Status::Code::kCorruption);
}

}  // namespace
}  // namespace tarde::storage
