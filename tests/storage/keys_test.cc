#include "storage/keys.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tarde::storage {
namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

TEST_CASE("keys: due key round trip and corruption") {
  for (int64_t ms :
       {int64_t{0}, int64_t{1}, int64_t{255}, int64_t{256}, int64_t{1700000000123}, INT64_MAX}) {
    Result<DueKey> decoded = decode_due_key(due_key(ms, "tx-1"));
    REQUIRE(decoded.is_ok());
    CHECK(decoded->fire_at_ms == ms);
    CHECK(decoded->tx_id == "tx-1");
  }
  CHECK(decode_due_key("").status().code() == Status::Code::kCorruption);
  CHECK(decode_due_key(bytes({0, 0, 0, 0, 0, 0, 0, 1})).status().code() ==
        Status::Code::kCorruption);  // no tx_id
  CHECK(decode_due_key(bytes({0x80, 0, 0, 0, 0, 0, 0, 1, 'a'})).status().code() ==
        Status::Code::kCorruption);  // negative time
  CHECK(decode_due_key(bytes({0, 0, 0, 0, 0, 0, 0, 1, 'a', ' '})).status().code() ==
        Status::Code::kCorruption);  // space is not a tx_id byte
}

TEST_CASE("keys: due keys sort by time, then tx_id") {
  const std::vector<int64_t> times = {0,
                                      1,
                                      2,
                                      255,
                                      256,
                                      257,
                                      511,
                                      65535,
                                      65536,
                                      16777215,
                                      16777216,
                                      4294967295LL,
                                      4294967296LL,
                                      1700000000000,
                                      INT64_MAX - 1,
                                      INT64_MAX};
  for (size_t i = 1; i < times.size(); ++i) {
    CAPTURE(times[i]);
    // A longer tx_id at the earlier time must still sort first.
    CHECK(due_key(times[i - 1], "~~~~~~~~") < due_key(times[i], "!"));
  }
  CHECK(due_key(5, "a") < due_key(5, "b"));
  CHECK(due_key(5, "a") < due_key(5, "a0"));
  // The upper bound of until_ms lies above every key at until_ms and below
  // every key after it.
  CHECK(due_key(256, "~~~~") < due_upper_bound(256));
  CHECK(due_upper_bound(256) < due_key(257, "!"));
  CHECK(due_key(INT64_MAX, "~") < due_upper_bound(INT64_MAX));
}

TEST_CASE("keys: ready keys round trip and sort by time then seq within a queue") {
  Result<ReadyKey> decoded = decode_ready_key(ready_key("q.1", 256, 7));
  REQUIRE(decoded.is_ok());
  CHECK(decoded->queue == "q.1");
  CHECK(decoded->ready_at_ms == 256);
  CHECK(decoded->seq == 7);

  CHECK(ready_key("q", 255, 999) < ready_key("q", 256, 0));
  CHECK(ready_key("q", 256, 255) < ready_key("q", 256, 256));
  CHECK(ready_key("q", 1, 1) < ready_key("q", 1, UINT64_MAX));
  // Every key of queue "q" lies inside its prefix range; "q0" and "q-" do not.
  const std::string lower = ready_prefix("q");
  const std::string upper = prefix_end(lower);
  CHECK(lower <= ready_key("q", 0, 0));
  CHECK(ready_key("q", INT64_MAX, UINT64_MAX) < upper);
  CHECK_FALSE((lower <= ready_key("q0", 0, 0) && ready_key("q0", 0, 0) < upper));
  CHECK_FALSE((lower <= ready_key("q-", 0, 0) && ready_key("q-", 0, 0) < upper));

  CHECK(decode_ready_key("q").status().code() == Status::Code::kCorruption);
  CHECK(decode_ready_key(ready_prefix("q") + "short").status().code() == Status::Code::kCorruption);
  CHECK(decode_ready_key(bytes({'b', ' ', 'q', 0}) + std::string(16, '\0')).status().code() ==
        Status::Code::kCorruption);
}

TEST_CASE("keys: event keys round trip and sort by seq") {
  Result<EventKey> decoded = decode_event_key(event_key("tx#9", 300));
  REQUIRE(decoded.is_ok());
  CHECK(decoded->tx_id == "tx#9");
  CHECK(decoded->seq == 300);
  CHECK(event_key("a", 255) < event_key("a", 256));
  CHECK(event_key("a", 0) < event_key("a", UINT64_MAX));
  // Another transaction whose id extends this one stays outside its range.
  CHECK(event_key("a", UINT64_MAX) < prefix_end(event_prefix("a")));
  CHECK(prefix_end(event_prefix("a")) < event_key("a!", 0));
  CHECK(decode_event_key(event_prefix("a") + "1234567").status().code() ==
        Status::Code::kCorruption);
}

TEST_CASE("keys: dead, tx and queue config keys round trip") {
  Result<DeadKey> dead = decode_dead_key(dead_key("billing", "tx-7"));
  REQUIRE(dead.is_ok());
  CHECK(dead->queue == "billing");
  CHECK(dead->tx_id == "tx-7");
  CHECK(decode_dead_key(dead_prefix("billing")).status().code() == Status::Code::kCorruption);

  Result<std::string> tx = decode_tx_key(tx_key("abc"));
  REQUIRE(tx.is_ok());
  CHECK(tx.value() == "abc");
  CHECK(decode_tx_key(bytes({'a', 0x7F})).status().code() == Status::Code::kCorruption);

  Result<std::string> queue = decode_queue_config_key(queue_config_key("q_2"));
  REQUIRE(queue.is_ok());
  CHECK(queue.value() == "q_2");
  CHECK(decode_queue_config_key("format").status().code() == Status::Code::kCorruption);
  CHECK(decode_queue_config_key("queue/").status().code() == Status::Code::kCorruption);
}

TEST_CASE("keys: state keys round trip, sort by queue, state, tx_id, and bad ones are corruption") {
  Result<StateKey> state = decode_state_key(state_key("billing", 3, "tx-7"));
  REQUIRE(state.is_ok());
  CHECK(state->queue == "billing");
  CHECK(state->state == 3);
  CHECK(state->tx_id == "tx-7");
  // The queue q sorts before q-; within a queue, by state, then tx_id; a
  // state's keys all start with its prefix.
  CHECK(state_key("q", 6, "z") < state_key("q-", 1, "a"));
  CHECK(state_key("q", 1, "z") < state_key("q", 2, "a"));
  CHECK(state_key("q", 3, "a") < state_key("q", 3, "a0"));
  CHECK(state_key("q", 3, "a0").starts_with(state_prefix("q", 3)));
  CHECK(prefix_end(state_prefix("q", 3)) == state_prefix("q", 4));
  auto corrupt = [](const std::string& key) {
    return decode_state_key(key).status().code() == Status::Code::kCorruption;
  };
  CHECK(corrupt(""));
  CHECK(corrupt("q"));                           // no separator
  CHECK(corrupt(bytes({'q', 0})));               // no state byte
  CHECK(corrupt(bytes({'q', 0, 3})));            // no tx_id
  CHECK(corrupt(bytes({'q', 0, 0, 'a'})));       // state 0
  CHECK(corrupt(bytes({'q', 0, 7, 'a'})));       // state above kIndexedStateMax
  CHECK(corrupt(bytes({'q', 0, 3, 'a', ' '})));  // space in tx_id
  CHECK(corrupt(bytes({'q', '/', 0, 3, 'a'})));  // bad queue name
  const Status status = decode_state_key(bytes({'q', 0, 9, 'a'})).status();
  CHECK(status.message() == "bad state key 'q\\x00\\x09a': unknown state");
}

TEST_CASE("keys: golden bytes") {
  CHECK(state_key("q", 3, "t1") == bytes({'q', 0, 3, 't', '1'}));
  CHECK(state_prefix("pay", 6) == bytes({'p', 'a', 'y', 0, 6}));
  CHECK(tx_key("t1") == "t1");
  CHECK(tx_key_view("t1") == tx_key("t1"));
  CHECK(due_key(0x0102030405, "t1") == bytes({0, 0, 0, 0x01, 0x02, 0x03, 0x04, 0x05, 't', '1'}));
  CHECK(ready_key("q", 256, 1) == bytes({'q', 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
  CHECK(event_key("t1", 2) == bytes({'t', '1', 0, 0, 0, 0, 0, 0, 0, 0, 2}));
  CHECK(dead_key("q", "t1") == bytes({'q', 0, 't', '1'}));
  CHECK(queue_config_key("q") == "queue/q");
  CHECK(kMetaFormatKey == "format");
}

TEST_CASE("keys: validity of ids and names") {
  CHECK(is_valid_tx_id("!~azAZ09#"));
  CHECK_FALSE(is_valid_tx_id(""));
  CHECK_FALSE(is_valid_tx_id("a b"));
  CHECK_FALSE(is_valid_tx_id(bytes({'a', 0})));
  CHECK_FALSE(is_valid_tx_id(bytes({'a', 0x80})));
  CHECK(is_valid_queue_name("a-Z_0.9"));
  CHECK_FALSE(is_valid_queue_name(""));
  CHECK_FALSE(is_valid_queue_name("a/b"));
  CHECK_FALSE(is_valid_queue_name("a#b"));
  CHECK(printable_key(bytes({'a', 0, '\''})) == "'a\\x00\\x27'");
}

}  // namespace
}  // namespace tarde::storage
