#include "storage/decoded_records.h"

#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "storage/codec.h"
#include "storage/keys.h"
#include "storage/mem_kv.h"
#include "storage/store.h"

namespace tarde::storage {
namespace {

TxRecord make_tx(std::string tx_id, std::string payload = "payload") {
  TxRecord record;
  record.tx_id = std::move(tx_id);
  record.queue = "q";
  record.state = TxState::kSending;
  record.next_attempt = 1;
  record.ready_at_ms = 1700000000000;
  record.ready_seq = 7;
  record.payload = std::move(payload);
  record.events = 2;
  record.first_event =
      EventRecord{1700000000000, TxState::kNone, TxState::kSending, 0, 1, "ENQUEUE", "", 0};
  record.newest_event =
      EventRecord{1700000000100, TxState::kSending, TxState::kSending, 0, 1, "RELEASE", "BUSY", 0};
  record.failures = {{1700000000100, "BUSY"}};
  return record;
}

TEST_CASE("decoded records: a record is found only with the bytes it was remembered with") {
  DecodedRecords decoded;
  const TxRecord record = make_tx("t1");
  const std::string bytes = encode_tx(record);
  CHECK(decoded.find("t1", bytes) == nullptr);  // nothing remembered yet

  decoded.remember(bytes, record);
  const TxRecord* found = decoded.find("t1", bytes);
  REQUIRE(found != nullptr);
  CHECK(*found == record);

  TxRecord changed = record;
  changed.attempt = 1;
  CHECK(decoded.find("t1", encode_tx(changed)) == nullptr);  // rewritten since
  CHECK(decoded.find("t1", "") == nullptr);
  CHECK(decoded.find("t2", bytes) == nullptr);  // another tx_id, even with the same bytes

  decoded.remember(encode_tx(changed), changed);  // replaces the older record
  CHECK(decoded.find("t1", bytes) == nullptr);
  REQUIRE(decoded.find("t1", encode_tx(changed)) != nullptr);
  CHECK(*decoded.find("t1", encode_tx(changed)) == changed);
}

TEST_CASE("decoded records: a record over the size bound is not kept") {
  DecodedRecords decoded;
  const TxRecord big = make_tx("big", std::string(DecodedRecords::kRecordBytesMax, 'x'));
  const std::string bytes = encode_tx(big);
  REQUIRE(bytes.size() > DecodedRecords::kRecordBytesMax);
  decoded.remember(bytes, big);
  CHECK(decoded.find("big", bytes) == nullptr);
}

TEST_CASE("decoded records: many tx_ids stay within the slots, and each hit is the right one") {
  DecodedRecords decoded;
  const size_t count = DecodedRecords::kSlots * 4;
  for (size_t i = 0; i < count; ++i) {
    const TxRecord record = make_tx("t" + std::to_string(i));
    decoded.remember(encode_tx(record), record);
  }
  size_t hits = 0;
  for (size_t i = 0; i < count; ++i) {
    const TxRecord record = make_tx("t" + std::to_string(i));
    const TxRecord* found = decoded.find(record.tx_id, encode_tx(record));
    if (found == nullptr) continue;
    CHECK(*found == record);
    hits += 1;
  }
  CHECK(hits > 0);
  CHECK(hits <= DecodedRecords::kSlots);
}

// Through a Store: what get_tx returns is always what the bytes in the Kv
// decode to, also when they were changed behind the Store's back.
TEST_CASE("decoded records: Store::get_tx follows the stored bytes, not what it remembered") {
  MemKv kv;
  Store store(kv);
  const TxRecord record = make_tx("t1");
  Batch batch = store.batch();
  batch.put_tx(record);
  REQUIRE(store.write(std::move(batch)).is_ok());

  Result<std::optional<TxRecord>> read = store.get_tx("t1");
  REQUIRE(read.is_ok());
  REQUIRE(read->has_value());
  CHECK(read.value().value() == record);
  // A second Store over the same Kv remembers nothing and decodes.
  Store fresh(kv);
  Result<std::optional<TxRecord>> decoded = fresh.get_tx("t1");
  REQUIRE(decoded.is_ok());
  REQUIRE(decoded->has_value());
  CHECK(decoded.value().value() == read.value().value());

  // Another writer changes the record: the remembered one is not returned.
  TxRecord changed = record;
  changed.state = TxState::kSucceeded;
  changed.ready_seq = 0;
  Batch other = fresh.batch();
  other.put_tx(changed);
  REQUIRE(fresh.write(std::move(other)).is_ok());
  read = store.get_tx("t1");
  REQUIRE(read.is_ok());
  REQUIRE(read->has_value());
  CHECK(read.value().value() == changed);

  // Bytes that do not decode are corruption, whatever was remembered.
  KvBatch corrupt;
  corrupt.put(Cf::kTx, tx_key("t1"), "\x02garbage");
  REQUIRE(kv.write(corrupt).is_ok());
  read = store.get_tx("t1");
  CHECK(read.status().code() == Status::Code::kCorruption);

  // Deleted: absent, whatever was remembered.
  KvBatch gone;
  gone.del(Cf::kTx, tx_key("t1"));
  REQUIRE(kv.write(gone).is_ok());
  read = store.get_tx("t1");
  REQUIRE(read.is_ok());
  CHECK(!read->has_value());
}

}  // namespace
}  // namespace tarde::storage
