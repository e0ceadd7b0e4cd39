#include "storage/store.h"

#include <doctest/doctest.h>
#include <rocksdb/db.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "storage/codec.h"
#include "storage/keys.h"
#include "storage/mem_kv.h"
#include "storage/rocks_kv.h"
#include "tests/support/temp_dir.h"

namespace tarde::storage {
namespace {

using tarde::testing::TempDir;

// The same checks run over every Kv: the in-memory reference and RocksDB.
struct MemBackend {
  MemKv mem;
  Kv& kv() { return mem; }
};

struct RocksBackend {
  TempDir dir;
  std::unique_ptr<RocksKv> rocks;
  RocksBackend() {
    RocksKv::Options options;
    options.sync = false;  // tests need no power-loss safety
    Result<std::unique_ptr<RocksKv>> opened = RocksKv::open(dir.path(), options);
    REQUIRE_MESSAGE(opened.is_ok(), opened.status().to_string());
    rocks = std::move(opened).value();
  }
  Kv& kv() { return *rocks; }
};

#define STORE_BACKENDS MemBackend, RocksBackend

TxRecord make_tx(std::string tx_id, std::string queue = "q") {
  TxRecord record;
  record.tx_id = std::move(tx_id);
  record.queue = std::move(queue);
  record.state = TxState::kScheduled;
  record.attempt = 1;
  record.next_attempt = 2;
  record.payload = "payload of " + record.tx_id;
  return record;
}

DeadLetter make_dead(std::string queue, std::string tx_id) {
  DeadLetter letter;
  letter.queue = std::move(queue);
  letter.tx_id = std::move(tx_id);
  letter.attempt = 2;
  letter.failures = {{7, "lease expired"}};
  return letter;
}

EventRecord event_at(int64_t at_ms) {
  EventRecord event;
  event.at_ms = at_ms;
  return event;
}

QueueConfig config_with_lease(int64_t lease_ms) {
  QueueConfig config;
  config.lease_ms = lease_ms;
  return config;
}

std::vector<std::string> due_ids(Store& store, const DueEntry* after, int64_t until_ms) {
  std::vector<std::string> ids;
  Status status = store.scan_due(after, until_ms, [&ids](const DueEntry& entry) {
    ids.push_back(std::to_string(entry.fire_at_ms) + entry.tx_id);
    return true;
  });
  REQUIRE(status.is_ok());
  return ids;
}

using Ids = std::vector<std::string>;

TEST_CASE_TEMPLATE("store: a batch applies all of its ops, in order", Backend, STORE_BACKENDS) {
  Backend backend;
  Store store(backend.kv());
  Batch batch;
  batch.put_tx(make_tx("a"));
  batch.put_due(DueEntry{100, "a", DueKind::kRetry, 2});
  batch.put_event("a", 0, EventRecord{});
  batch.put_tx(make_tx("b"));
  batch.delete_tx("b");  // a later op on the same key wins
  REQUIRE(store.write(batch).is_ok());

  Result<std::optional<TxRecord>> a = store.get_tx("a");
  REQUIRE(a.is_ok());
  REQUIRE(a->has_value());
  CHECK(a.value().value() == make_tx("a"));
  Result<std::optional<TxRecord>> b = store.get_tx("b");
  REQUIRE(b.is_ok());
  CHECK_FALSE(b->has_value());
  CHECK(due_ids(store, nullptr, 100) == Ids{"100a"});
  int events = 0;
  REQUIRE(store
              .scan_events("a",
                           [&events](uint64_t, const EventRecord&) {
                             ++events;
                             return true;
                           })
              .is_ok());
  CHECK(events == 1);
}

TEST_CASE("store: put_tx marks the records the engine reads again later") {
  auto marked = [](const TxRecord& record) {
    Batch batch;
    batch.put_tx(record);
    REQUIRE(batch.kv().size() == 1);
    return batch.kv().ops()[0].read_later;
  };
  TxRecord queued = make_tx("queued");
  queued.state = TxState::kSending;
  queued.ready_seq = 1;
  CHECK(marked(queued) == ReadLater::kYes);  // handed out later
  TxRecord buried = queued;
  buried.dead_lettered = true;
  buried.ready_seq = 0;
  CHECK(marked(buried) == ReadLater::kNo);

  TxRecord soon = make_tx("soon");
  soon.updated_at_ms = 1'000'000;
  soon.due_kind = DueKind::kRetry;
  soon.due_at_ms = soon.updated_at_ms + 60'000;
  CHECK(marked(soon) == ReadLater::kYes);  // read when the retry fires
  TxRecord later = soon;
  later.due_at_ms = soon.updated_at_ms + 60'001;
  CHECK(marked(later) == ReadLater::kNo);

  TxRecord waiting = make_tx("waiting");
  waiting.state = TxState::kInFlight;
  waiting.due_kind = DueKind::kResponseTimeout;
  waiting.due_at_ms = 1;
  CHECK(marked(waiting) == ReadLater::kNo);
  TxRecord done = make_tx("done");
  done.state = TxState::kSucceeded;
  CHECK(marked(done) == ReadLater::kNo);
}

TEST_CASE("store: a failed write applies none of its ops (MemKv fault)") {
  MemKv kv;
  Store store(kv);
  Batch batch;
  batch.put_tx(make_tx("a"));
  batch.put_due(DueEntry{100, "a", DueKind::kRetry, 2});
  kv.fail_writes_for_test(true);
  Status failed = store.write(batch);
  CHECK(failed.code() == Status::Code::kIoError);
  CHECK(kv.size(Cf::kTx) == 0);
  CHECK(kv.size(Cf::kDue) == 0);
  kv.fail_writes_for_test(false);
  REQUIRE(store.write(batch).is_ok());
  CHECK(kv.size(Cf::kTx) == 1);
  CHECK(kv.size(Cf::kDue) == 1);
}

TEST_CASE_TEMPLATE("store: scan_due honours after and until", Backend, STORE_BACKENDS) {
  Backend backend;
  Store store(backend.kv());
  Batch batch;
  for (auto [ms, id] : std::vector<std::pair<int64_t, std::string>>{
           {11, "a"}, {5, "b"}, {10, "c"}, {5, "a"}, {10, "a"}, {256, "z"}, {255, "z"}, {0, "x"}}) {
    batch.put_due(DueEntry{ms, id, DueKind::kRetry, 1});
  }
  REQUIRE(store.write(batch).is_ok());

  CHECK(due_ids(store, nullptr, 10) == Ids{"0x", "5a", "5b", "10a", "10c"});
  CHECK(due_ids(store, nullptr, -1) == Ids{});
  CHECK(due_ids(store, nullptr, 0) == Ids{"0x"});
  CHECK(due_ids(store, nullptr, INT64_MAX) ==
        Ids{"0x", "5a", "5b", "10a", "10c", "11a", "255z", "256z"});
  CHECK(due_ids(store, nullptr, 255) == Ids{"0x", "5a", "5b", "10a", "10c", "11a", "255z"});

  DueEntry after{5, "b", DueKind::kNone, 0};
  CHECK(due_ids(store, &after, 10) == Ids{"10a", "10c"});
  after = DueEntry{10, "a", DueKind::kNone, 0};
  CHECK(due_ids(store, &after, 10) == Ids{"10c"});
  after = DueEntry{10, "c", DueKind::kNone, 0};
  CHECK(due_ids(store, &after, 10) == Ids{});
  after = DueEntry{7, "absent", DueKind::kNone, 0};  // need not exist
  CHECK(due_ids(store, &after, 256) == Ids{"10a", "10c", "11a", "255z", "256z"});
  after = DueEntry{10, "b", DueKind::kNone, 0};  // between two keys at the same time
  CHECK(due_ids(store, &after, 11) == Ids{"10c", "11a"});
  after = DueEntry{300, "a", DueKind::kNone, 0};  // after beyond until
  CHECK(due_ids(store, &after, 10) == Ids{});

  // Early stop, and the values come back.
  std::vector<DueEntry> first_two;
  REQUIRE(store
              .scan_due(nullptr, INT64_MAX,
                        [&first_two](const DueEntry& entry) {
                          first_two.push_back(entry);
                          return first_two.size() < 2;
                        })
              .is_ok());
  REQUIRE(first_two.size() == 2);
  CHECK(first_two[1] == DueEntry{5, "a", DueKind::kRetry, 1});
}

TEST_CASE_TEMPLATE("store: ready, dead, events, tx and config scans stay in bounds and order",
                   Backend, STORE_BACKENDS) {
  Backend backend;
  Store store(backend.kv());
  Batch batch;
  // Queues "q", "q-", "q0" and "r" bracket "q" on both sides.
  for (std::string queue : {"q", "q-", "q0", "r"}) {
    batch.put_ready(ReadyEntry{queue, 256, 1, "t-" + queue, 1});
    batch.put_dead(make_dead(queue, "t"));
  }
  batch.put_ready(ReadyEntry{"q", 255, 9, "t2", 3});
  batch.put_ready(ReadyEntry{"q", 256, 0, "t3", 1});
  batch.put_ready(ReadyEntry{"q", 65536, 2, "t4", 1});
  batch.put_dead(make_dead("q", "a"));
  for (uint64_t seq : {256, 1, 0, 255}) {
    batch.put_event("a", seq, event_at(static_cast<int64_t>(seq)));
  }
  batch.put_event("a!", 0, EventRecord{});  // another transaction that extends "a"
  for (std::string id : {"b", "a!", "a", "B"}) batch.put_tx(make_tx(id));
  batch.put_queue_config("zz", config_with_lease(1));
  batch.put_queue_config("aa", config_with_lease(2));
  batch.put_meta("other", "x");
  REQUIRE(store.write(batch).is_ok());

  Ids ready;
  REQUIRE(store
              .scan_ready("q",
                          [&ready](const ReadyEntry& entry) {
                            ready.push_back(entry.tx_id + "@" + std::to_string(entry.ready_at_ms) +
                                            "/" + std::to_string(entry.seq));
                            return true;
                          })
              .is_ok());
  CHECK(ready == Ids{"t2@255/9", "t3@256/0", "t-q@256/1", "t4@65536/2"});

  Ids all_ready;
  REQUIRE(store
              .scan_all_ready([&all_ready](const ReadyEntry& entry) {
                all_ready.push_back(entry.queue + ":" + entry.tx_id);
                return true;
              })
              .is_ok());
  CHECK(all_ready == Ids{"q:t2", "q:t3", "q:t-q", "q:t4", "q-:t-q-", "q0:t-q0", "r:t-r"});

  Ids dead;
  REQUIRE(store
              .scan_dead("q",
                         [&dead](const DeadLetter& letter) {
                           dead.push_back(letter.queue + ":" + letter.tx_id);
                           return true;
                         })
              .is_ok());
  CHECK(dead == Ids{"q:a", "q:t"});
  Ids all_dead;
  REQUIRE(store
              .scan_all_dead([&all_dead](const DeadLetter& letter) {
                all_dead.push_back(letter.queue + ":" + letter.tx_id);
                return all_dead.size() < 3;  // early stop
              })
              .is_ok());
  CHECK(all_dead == Ids{"q:a", "q:t", "q-:t"});
  Result<std::optional<DeadLetter>> letter = store.get_dead("q0", "t");
  REQUIRE(letter.is_ok());
  REQUIRE(letter->has_value());
  CHECK(letter.value().value() == make_dead("q0", "t"));
  CHECK_FALSE(store.get_dead("q0", "absent").value().has_value());

  std::vector<uint64_t> seqs;
  REQUIRE(store
              .scan_events("a",
                           [&seqs](uint64_t seq, const EventRecord& event) {
                             CHECK(event.at_ms == static_cast<int64_t>(seq));
                             seqs.push_back(seq);
                             return true;
                           })
              .is_ok());
  CHECK(seqs == std::vector<uint64_t>{0, 1, 255, 256});

  Ids txs;
  REQUIRE(store
              .scan_tx([&txs](const TxRecord& record) {
                txs.push_back(record.tx_id);
                return true;
              })
              .is_ok());
  CHECK(txs == Ids{"B", "a", "a!", "b"});

  Ids queues;
  REQUIRE(store
              .scan_queue_configs([&queues](const std::string& queue, const QueueConfig& c) {
                queues.push_back(queue + "=" + std::to_string(c.lease_ms));
                return true;
              })
              .is_ok());
  CHECK(queues == Ids{"aa=2", "zz=1"});
  Result<std::optional<std::string>> other = store.get_meta("other");
  REQUIRE(other.is_ok());
  CHECK(other.value() == std::optional<std::string>("x"));

  CHECK(store.scan_ready("bad/queue", [](const ReadyEntry&) { return true; }).code() ==
        Status::Code::kInvalidArgument);
  CHECK(store.get_tx("has space").status().code() == Status::Code::kInvalidArgument);
}

TEST_CASE_TEMPLATE("store: undecodable records come back as corruption naming the key", Backend,
                   STORE_BACKENDS) {
  Backend backend;
  Store store(backend.kv());
  KvBatch raw;
  raw.put(Cf::kTx, "broken", "\x01garbage");
  raw.put(Cf::kTx, "mismatch", encode_tx(make_tx("other")));
  raw.put(Cf::kDue, "short", encode_due_value(DueValue{}));
  REQUIRE(backend.kv().write(raw).is_ok());

  Result<std::optional<TxRecord>> broken = store.get_tx("broken");
  REQUIRE_FALSE(broken.is_ok());
  CHECK(broken.status().code() == Status::Code::kCorruption);
  CHECK(broken.status().message().find("tx 'broken'") != std::string::npos);
  CHECK(store.get_tx("mismatch").status().code() == Status::Code::kCorruption);

  int visited = 0;
  Status scanned = store.scan_tx([&visited](const TxRecord&) {
    ++visited;
    return true;
  });
  CHECK(scanned.code() == Status::Code::kCorruption);
  CHECK(visited == 0);  // "broken" sorts first and stops the scan
  CHECK(store.scan_due(nullptr, INT64_MAX, [](const DueEntry&) { return true; }).code() ==
        Status::Code::kCorruption);
}

TEST_CASE_TEMPLATE("store: ready floors round trip, one per queue, and bad ones are corruption",
                   Backend, STORE_BACKENDS) {
  Backend backend;
  Store store(backend.kv());
  Batch batch;
  batch.put_ready_floor("b", {2000, 7});
  batch.put_ready_floor("a", {1000, 3});
  batch.put_ready_floor("a", {1500, 4});  // replaces
  REQUIRE(store.write(batch).is_ok());
  std::vector<std::string> seen;
  REQUIRE(store
              .scan_ready_floors([&seen](const std::string& queue, const ReadyFloor& floor) {
                seen.push_back(queue + "@" + std::to_string(floor.ready_at_ms) + "/" +
                               std::to_string(floor.seq));
                return true;
              })
              .is_ok());
  CHECK(seen == std::vector<std::string>{"a@1500/4", "b@2000/7"});

  KvBatch raw;
  raw.put(Cf::kMeta, ready_floor_key("c"), "short");
  REQUIRE(backend.kv().write(raw).is_ok());
  const Status bad =
      store.scan_ready_floors([](const std::string&, const ReadyFloor&) { return true; });
  CHECK(bad.code() == Status::Code::kCorruption);
  CHECK(bad.message().find("ready_floor/c") != std::string::npos);
  std::string negative;
  append_be64(&negative, uint64_t{1} << 63);
  append_be64(&negative, 1);
  CHECK(decode_ready_floor(negative).status().code() == Status::Code::kCorruption);
}

TEST_CASE_TEMPLATE("store: the ready seq reservation round trips, and a bad one is corruption",
                   Backend, STORE_BACKENDS) {
  Backend backend;
  Store store(backend.kv());
  auto none = store.get_ready_seq_reserved();
  REQUIRE(none.is_ok());
  CHECK_FALSE(none.value().has_value());
  Batch batch;
  batch.put_ready_seq_reserved(uint64_t{1} << 40);
  REQUIRE(store.write(batch).is_ok());
  auto stored = store.get_ready_seq_reserved();
  REQUIRE(stored.is_ok());
  REQUIRE(stored.value().has_value());
  CHECK(*stored.value() == uint64_t{1} << 40);

  KvBatch raw;
  raw.put(Cf::kMeta, std::string(kMetaReadySeqKey), "seven b");
  REQUIRE(backend.kv().write(raw).is_ok());
  auto bad = store.get_ready_seq_reserved();
  CHECK(bad.status().code() == Status::Code::kCorruption);
  CHECK(bad.status().message().find("ready_seq_reserved") != std::string::npos);
}

TEST_CASE_TEMPLATE("store: ensure_format", Backend, STORE_BACKENDS) {
  Backend backend;
  Store store(backend.kv());
  SUBCASE("a new store gets the current version, and accepts it again") {
    REQUIRE(store.ensure_format().is_ok());
    Result<std::optional<std::string>> format = store.get_meta("format");
    REQUIRE(format.is_ok());
    CHECK(format.value() == std::optional<std::string>(std::string("\0\0\0\5", 4)));
    CHECK(store.has_state_index().value());
    CHECK(store.ensure_format().is_ok());
  }
  SUBCASE("a newer version is refused") {
    Batch batch;
    batch.put_meta("format", encode_format_version(kFormatVersion + 1));
    REQUIRE(store.write(batch).is_ok());
    Status status = store.ensure_format();
    CHECK(status.code() == Status::Code::kInvalidArgument);
    CHECK(status.message().find("newer") != std::string::npos);
  }
  SUBCASE("data without a format record is refused") {
    Batch batch;
    batch.put_due(DueEntry{1, "a", DueKind::kRetry, 1});
    REQUIRE(store.write(batch).is_ok());
    Status status = store.ensure_format();
    CHECK(status.code() == Status::Code::kCorruption);
    CHECK(status.message().find("due") != std::string::npos);
    CHECK_FALSE(store.get_meta("format").value().has_value());  // nothing written
  }
  SUBCASE("a malformed format record is corruption") {
    Batch batch;
    batch.put_meta("format", "1");
    REQUIRE(store.write(batch).is_ok());
    CHECK(store.ensure_format().code() == Status::Code::kCorruption);
  }
}

// The state keys of the store, as "queue/state/tx_id" strings.
std::vector<std::string> state_keys(Store& store) {
  std::vector<std::string> keys;
  REQUIRE(store
              .scan_all_state([&keys](const StateKey& k) {
                keys.push_back(k.queue + "/" + std::to_string(k.state) + "/" + k.tx_id);
                return true;
              })
              .is_ok());
  return keys;
}

TEST_CASE_TEMPLATE("store: scan_state pages one queue's state by prefix and after", Backend,
                   STORE_BACKENDS) {
  Backend backend;
  Store store(backend.kv());
  Batch batch;
  for (const char* id : {"a1", "a2", "a3", "b1", "b2"}) {
    batch.put_state("q", IndexedState::kScheduled, id);
  }
  batch.put_state("q", IndexedState::kInFlight, "a0");     // another state
  batch.put_state("q-", IndexedState::kScheduled, "a15");  // another queue
  batch.put_state("p", IndexedState::kScheduled, "a16");
  REQUIRE(store.write(batch).is_ok());
  auto ids = [&](std::string_view prefix, std::string_view after, size_t stop_at = 100) {
    Ids out;
    REQUIRE(store
                .scan_state("q", IndexedState::kScheduled, prefix, after,
                            [&](const std::string& id) {
                              out.push_back(id);
                              return out.size() < stop_at;
                            })
                .is_ok());
    return out;
  };
  CHECK(ids("", "") == Ids{"a1", "a2", "a3", "b1", "b2"});
  CHECK(ids("", "", 2) == Ids{"a1", "a2"});
  CHECK(ids("", "a2") == Ids{"a3", "b1", "b2"});
  CHECK(ids("a", "") == Ids{"a1", "a2", "a3"});
  CHECK(ids("a", "a1") == Ids{"a2", "a3"});
  CHECK(ids("b", "a2") == Ids{"b1", "b2"});  // a cursor before the prefix
  CHECK(ids("a", "b1").empty());             // a cursor past it
  CHECK(ids("c", "").empty());
  CHECK(ids("", "b2").empty());
  // Deleting a key takes it out.
  Batch moved;
  moved.delete_state("q", IndexedState::kScheduled, "a2");
  REQUIRE(store.write(moved).is_ok());
  CHECK(ids("a", "") == Ids{"a1", "a3"});
  CHECK(state_keys(store).size() == 7);

  auto bad = [&](std::string_view queue, IndexedState state, std::string_view prefix,
                 std::string_view after) {
    return store.scan_state(queue, state, prefix, after, [](const std::string&) { return true; })
        .code();
  };
  CHECK(bad("q/", IndexedState::kScheduled, "", "") == Status::Code::kInvalidArgument);
  CHECK(bad("q", static_cast<IndexedState>(0), "", "") == Status::Code::kInvalidArgument);
  CHECK(bad("q", static_cast<IndexedState>(7), "", "") == Status::Code::kInvalidArgument);
  CHECK(bad("q", IndexedState::kScheduled, "a b", "") == Status::Code::kInvalidArgument);
  CHECK(bad("q", IndexedState::kScheduled, "", "a b") == Status::Code::kInvalidArgument);

  KvBatch raw;
  raw.put(Cf::kState, std::string("q\0\x03", 3), "");  // a key without its tx_id
  REQUIRE(backend.kv().write(raw).is_ok());
  CHECK(bad("q", IndexedState::kScheduled, "", "") == Status::Code::kCorruption);
  CHECK(store.scan_all_state([](const StateKey&) { return true; }).code() ==
        Status::Code::kCorruption);
}

// Writes `value` under `key` in `cf` as it is; the upgrade then stops as
// corruption whose message holds `needle`, and the format stays `version`.
template <typename Backend>
void check_upgrade_stops(Backend& backend, Store& store, Cf cf, const std::string& key,
                         const std::string& value, const std::string& needle, uint32_t version) {
  KvBatch raw;
  raw.put(cf, key, value);
  REQUIRE(backend.kv().write(raw).is_ok());
  const Status status = store.ensure_format();
  CHECK(status.code() == Status::Code::kCorruption);
  CHECK(status.message().find(needle) != std::string::npos);
  CHECK(store.get_meta("format").value() ==
        std::optional<std::string>(encode_format_version(version)));
}

TEST_CASE_TEMPLATE("store: ensure_format upgrades a version 1 store by filing every transaction",
                   Backend, STORE_BACKENDS) {
  Backend backend;
  Store store(backend.kv());
  Batch batch;
  batch.put_meta("format", encode_format_version(1));
  // More than one upgrade batch, in two queues and every filed state.
  const size_t count = kUpgradeBatchTransactions + 7;
  for (size_t i = 0; i < count; ++i) {
    TxRecord rec = make_tx("t" + std::to_string(i), i % 2 == 0 ? "even" : "odd");
    rec.state = static_cast<TxState>(1 + i % 5);
    rec.dead_lettered = i % 10 == 5;  // SENDING, in queue odd: dead-lettered
    batch.put_tx(rec);
  }
  REQUIRE(store.write(batch).is_ok());
  CHECK_FALSE(store.has_state_index().value());
  Result<Store::FormatCheck> check = store.check_format();
  REQUIRE(check.is_ok());
  CHECK(check->format == Store::Format::kOlder);

  std::vector<uint64_t> progress;
  FormatUpgrade upgrade;
  REQUIRE(store
              .ensure_format(&upgrade,
                             [&](const FormatUpgrade& so_far) {
                               CHECK(so_far.from_version == 1);
                               CHECK(so_far.unfiled == 0);
                               progress.push_back(so_far.indexed);
                             })
              .is_ok());
  CHECK(upgrade.from_version == 1);
  CHECK(upgrade.indexed == count);
  CHECK(progress == std::vector<uint64_t>{kUpgradeBatchTransactions, count});
  CHECK(store.get_meta("format").value() == std::optional<std::string>(encode_format_version(5)));
  CHECK(store.has_state_index().value());
  CHECK_FALSE(store.files_sending().value());
  // Filed as format 5 files: a SENDING transaction with a ready request
  // (every fifth, but the dead-lettered ones) has no key.
  const std::vector<std::string> keys = state_keys(store);
  CHECK(keys.size() == count - (count + 9) / 10);
  CHECK(std::find(keys.begin(), keys.end(), "even/1/t0") == keys.end());
  CHECK(std::find(keys.begin(), keys.end(), "odd/6/t5") != keys.end());   // dead-lettered
  CHECK(std::find(keys.begin(), keys.end(), "odd/2/t1") != keys.end());   // IN_FLIGHT
  CHECK(std::find(keys.begin(), keys.end(), "odd/5/t9") != keys.end());   // FAILED
  CHECK(std::find(keys.begin(), keys.end(), "even/3/t2") != keys.end());  // SCHEDULED

  // Opened again: the current version, nothing to do.
  upgrade = FormatUpgrade{7, 7};
  REQUIRE(store.ensure_format(&upgrade).is_ok());
  CHECK(upgrade.from_version == 0);
  CHECK(upgrade.indexed == 0);
}

TEST_CASE_TEMPLATE("store: a version 2 to 4 store loses its SENDING keys, queue by queue", Backend,
                   STORE_BACKENDS) {
  for (const uint32_t version : {2u, 4u}) {
    CAPTURE(version);
    Backend backend;
    Store store(backend.kv());
    Batch batch;
    batch.put_meta("format", encode_format_version(version));
    // Queue names that prefix each other, around the 0x00 after a name: the
    // scan must go from each queue to the next without skipping or mixing.
    const std::vector<std::string> queues{"a", "q", "q-", "q0", "qq"};
    size_t sending = 0;
    for (const std::string& queue : queues) {
      const size_t n = queue == "q" ? kUpgradeBatchTransactions + 3 : 2;
      for (size_t i = 0; i < n; ++i) {
        batch.put_state(queue, IndexedState::kSending, "s" + std::to_string(i));
      }
      sending += n;
      batch.put_state(queue, IndexedState::kInFlight, "f");
      batch.put_state(queue, IndexedState::kDeadLettered, "d");
      batch.put_state(queue, IndexedState::kSucceeded, "s0");
    }
    REQUIRE(store.write(batch).is_ok());
    CHECK(store.files_sending().value());

    FormatUpgrade upgrade;
    std::vector<uint64_t> progress;
    REQUIRE(store
                .ensure_format(&upgrade,
                               [&](const FormatUpgrade& so_far) {
                                 CHECK(so_far.from_version == version);
                                 CHECK(so_far.indexed == 0);
                                 progress.push_back(so_far.unfiled);
                               })
                .is_ok());
    CHECK(upgrade.from_version == version);
    CHECK(upgrade.unfiled == sending);
    // After each write: queue a's 2 keys, q's first full write and its last
    // 3, then q-, q0 and qq.
    const uint64_t full = kUpgradeBatchTransactions;
    CHECK(progress == std::vector<uint64_t>{2, 2 + full, 5 + full, 7 + full, 9 + full, 11 + full});
    CHECK(store.get_meta("format").value() == std::optional<std::string>(encode_format_version(5)));
    CHECK_FALSE(store.files_sending().value());
    std::vector<std::string> expected;
    for (const std::string& queue : queues) {
      for (const char* rest : {"/2/f", "/4/s0", "/6/d"}) expected.push_back(queue + rest);
    }
    CHECK(state_keys(store) == expected);
  }
}

TEST_CASE_TEMPLATE("store: a state key that does not decode stops the upgrade from 4", Backend,
                   STORE_BACKENDS) {
  Backend backend;
  Store store(backend.kv());
  Batch batch;
  batch.put_meta("format", encode_format_version(4));
  batch.put_state("q", IndexedState::kSending, "a");
  REQUIRE(store.write(batch).is_ok());
  check_upgrade_stops(backend, store, Cf::kState, "no separator", "", "no separator", 4);
}

TEST_CASE_TEMPLATE("store: a version 2, 3 or 4 store keeps its records as they are", Backend,
                   STORE_BACKENDS) {
  for (const uint32_t version : {2u, 3u, 4u}) {
    CAPTURE(version);
    Backend backend;
    Store store(backend.kv());
    Batch batch;
    batch.put_meta("format", encode_format_version(version));
    TxRecord rec = make_tx("a");
    batch.put_state(rec.queue, indexed_state(rec), rec.tx_id);
    batch.put_event("a", 0, EventRecord{});
    REQUIRE(store.write(batch).is_ok());
    // The record and the event as those versions wrote them: cereal's layout.
    KvBatch old;
    old.put(Cf::kTx, tx_key("a"), encode_tx_with_cereal_for_test(rec));
    old.put(Cf::kEvents, event_key("a", 0), encode_event_with_cereal_for_test(EventRecord{}));
    REQUIRE(backend.kv().write(old).is_ok());
    Result<Store::FormatCheck> check = store.check_format();
    REQUIRE(check.is_ok());
    CHECK(check->format == Store::Format::kOlder);
    size_t progress_calls = 0;
    FormatUpgrade upgrade;
    REQUIRE(
        store.ensure_format(&upgrade, [&](const FormatUpgrade&) { progress_calls += 1; }).is_ok());
    CHECK(upgrade.from_version == version);
    CHECK(upgrade.indexed == 0);
    CHECK(progress_calls == 0);
    CHECK(upgrade.unfiled == 0);
    CHECK(store.get_meta("format").value() == std::optional<std::string>(encode_format_version(5)));
    // The record and its event stay as they were written, and read.
    CHECK(backend.kv().get(Cf::kTx, tx_key("a")).value() ==
          std::optional<std::string>(encode_tx_with_cereal_for_test(rec)));
    CHECK(state_keys(store) == std::vector<std::string>{"q/3/a"});
    Result<std::optional<TxRecord>> read = store.get_tx("a");
    REQUIRE(read.is_ok());
    CHECK(read.value() == std::optional<TxRecord>(rec));
    size_t events = 0;
    REQUIRE(store
                .scan_history(rec,
                              [&](uint64_t seq, const EventRecord&) {
                                CHECK(seq == 0);
                                events += 1;
                                return true;
                              })
                .is_ok());
    CHECK(events == 1);
    // Its next write takes the compact layout.
    Batch next;
    next.put_tx(rec);
    REQUIRE(store.write(next).is_ok());
    CHECK(backend.kv().get(Cf::kTx, tx_key("a")).value().value()[0] == kCompactValueFormat);
  }
}

TEST_CASE_TEMPLATE("store: scan_history gives the held first event, `events`, then the held newest",
                   Backend, STORE_BACKENDS) {
  Backend backend;
  Store store(backend.kv());
  auto event_at = [](int64_t at) {
    EventRecord e;
    e.at_ms = at;
    return e;
  };
  TxRecord rec = make_tx("a");
  rec.events = 5;
  rec.first_event = event_at(100);
  rec.newest_event = event_at(104);
  Batch batch;
  batch.put_tx(rec);
  for (uint64_t seq : {2, 3}) batch.put_event("a", seq, event_at(100 + static_cast<int64_t>(seq)));
  batch.put_event("a!", 1, event_at(999));  // another transaction's
  REQUIRE(store.write(batch).is_ok());
  std::vector<std::pair<uint64_t, int64_t>> seen;
  auto collect = [&](size_t stop_after) {
    seen.clear();
    REQUIRE(store
                .scan_history(rec,
                              [&](uint64_t seq, const EventRecord& e) {
                                seen.emplace_back(seq, e.at_ms);
                                return seen.size() < stop_after;
                              })
                .is_ok());
  };
  collect(100);
  CHECK(seen == std::vector<std::pair<uint64_t, int64_t>>{{0, 100}, {2, 102}, {3, 103}, {4, 104}});
  for (size_t stop = 1; stop <= 4; ++stop) {
    collect(stop);
    CHECK(seen.size() == stop);
  }
  // A record that holds none (written before format 3): `events` alone.
  TxRecord old = rec;
  old.first_event.reset();
  old.newest_event.reset();
  seen.clear();
  REQUIRE(store
              .scan_history(old,
                            [&](uint64_t seq, const EventRecord& e) {
                              seen.emplace_back(seq, e.at_ms);
                              return true;
                            })
              .is_ok());
  CHECK(seen == std::vector<std::pair<uint64_t, int64_t>>{{2, 102}, {3, 103}});
}

TEST_CASE_TEMPLATE("store: an upgrade cut short is done again, and a bad record stops it", Backend,
                   STORE_BACKENDS) {
  Backend backend;
  Store store(backend.kv());
  Batch batch;
  batch.put_meta("format", encode_format_version(1));
  batch.put_tx(make_tx("a"));
  batch.put_tx(make_tx("b"));
  // What a first run wrote before a crash: one key, no new format record.
  batch.put_state("q", IndexedState::kScheduled, "a");
  REQUIRE(store.write(batch).is_ok());
  SUBCASE("redone") {
    FormatUpgrade upgrade;
    REQUIRE(store.ensure_format(&upgrade).is_ok());
    CHECK(upgrade.indexed == 2);
    CHECK(state_keys(store) == std::vector<std::string>{"q/3/a", "q/3/b"});
  }
  SUBCASE("a record that does not decode is corruption, and the format stays 1") {
    check_upgrade_stops(backend, store, Cf::kTx, "c", "not a record", "'c'", 1);
  }
  SUBCASE("a record without a state is corruption") {
    TxRecord none = make_tx("c");
    none.state = TxState::kNone;
    Batch bad;
    bad.put_tx(none);
    REQUIRE(store.write(bad).is_ok());
    CHECK(store.ensure_format().code() == Status::Code::kCorruption);
  }
}

TEST_CASE("store: a stopped store of format 1, without the state family, opens read-only") {
  TempDir dir;
  {
    // A store as format 1 left it: every family but `state`.
    Result<std::unique_ptr<RocksKv>> kv = RocksKv::open(dir.path(), RocksKv::Options());
    REQUIRE(kv.is_ok());
    Store store(*kv.value());
    Batch batch;
    batch.put_meta("format", encode_format_version(1));
    batch.put_tx(make_tx("kept"));
    REQUIRE(store.write(batch).is_ok());
    REQUIRE(kv.value()->close().is_ok());
    rocksdb::DB* db = nullptr;
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    std::vector<std::string> names;
    REQUIRE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir.path(), &names).ok());
    for (const std::string& name : names)
      families.emplace_back(name, rocksdb::ColumnFamilyOptions());
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    REQUIRE(rocksdb::DB::Open(rocksdb::DBOptions(), dir.path(), families, &handles, &db).ok());
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == "state") REQUIRE(db->DropColumnFamily(handles[i]).ok());
    }
    for (auto* handle : handles) REQUIRE(db->DestroyColumnFamilyHandle(handle).ok());
    delete db;
  }
  std::vector<std::string> names;
  REQUIRE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir.path(), &names).ok());
  CHECK(std::find(names.begin(), names.end(), "state") == names.end());
  {
    RocksKv::Options read_only;
    read_only.read_only = true;
    read_only.create_if_missing = false;
    Result<std::unique_ptr<RocksKv>> kv = RocksKv::open(dir.path(), read_only);
    REQUIRE_MESSAGE(kv.is_ok(), kv.status().to_string());
    Store store(*kv.value());
    CHECK(store.get_tx("kept").value().has_value());
    CHECK(state_keys(store).empty());
    CHECK(store.kv().get(Cf::kState, "x").value() == std::nullopt);
    CHECK_FALSE(store.has_state_index().value());
  }
  // Opened for writing, the family is made and the upgrade fills it.
  Result<std::unique_ptr<RocksKv>> kv = RocksKv::open(dir.path(), RocksKv::Options());
  REQUIRE_MESSAGE(kv.is_ok(), kv.status().to_string());
  Store store(*kv.value());
  FormatUpgrade upgrade;
  REQUIRE(store.ensure_format(&upgrade).is_ok());
  CHECK(upgrade.indexed == 1);
  CHECK(state_keys(store) == std::vector<std::string>{"q/3/kept"});
}

TEST_CASE("store: a reopened RocksKv dir holds the same data") {
  TempDir dir;
  const TxRecord record = make_tx("kept");
  {
    Result<std::unique_ptr<RocksKv>> kv = RocksKv::open(dir.path(), RocksKv::Options());
    REQUIRE(kv.is_ok());
    Store store(*kv.value());
    REQUIRE(store.ensure_format().is_ok());
    Batch batch;
    batch.put_tx(record);
    batch.put_due(DueEntry{42, "kept", DueKind::kRetry, 2});
    QueueConfig config;
    config.max_deliveries = 3;
    batch.put_queue_config("q", config);
    REQUIRE(store.write(batch).is_ok());
    REQUIRE(kv.value()->close().is_ok());
  }
  Result<std::unique_ptr<RocksKv>> kv = RocksKv::open(dir.path(), RocksKv::Options());
  REQUIRE_MESSAGE(kv.is_ok(), kv.status().to_string());
  Store store(*kv.value());
  CHECK(store.ensure_format().is_ok());
  Result<std::optional<TxRecord>> back = store.get_tx("kept");
  REQUIRE(back.is_ok());
  CHECK(back.value() == std::optional<TxRecord>(record));
  CHECK(due_ids(store, nullptr, 100) == Ids{"42kept"});
  int configs = 0;
  REQUIRE(store
              .scan_queue_configs([&configs](const std::string& queue, const QueueConfig& c) {
                CHECK(queue == "q");
                CHECK(c.max_deliveries == 3);
                ++configs;
                return true;
              })
              .is_ok());
  CHECK(configs == 1);
}

}  // namespace
}  // namespace tarde::storage
