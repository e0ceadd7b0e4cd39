#include "storage/staged_kv.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "storage/mem_kv.h"

namespace tarde::storage {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

// What RecentValues counts for a 1000-byte value under a 6-byte key.
constexpr size_t kThousandByteEntry = 1000 + RecentValues::kEntryOverheadBytes + 6;

void put(Kv& kv, std::string_view key, std::string_view value, Cf cf = Cf::kTx) {
  KvBatch batch;
  batch.put(cf, std::string(key), std::string(value));
  REQUIRE(kv.write(batch).is_ok());
}

void del(Kv& kv, std::string_view key, Cf cf = Cf::kTx) {
  KvBatch batch;
  batch.del(cf, std::string(key));
  REQUIRE(kv.write(batch).is_ok());
}

std::optional<std::string> read(Kv& kv, std::string_view key, Cf cf = Cf::kTx) {
  Result<std::optional<std::string>> value = kv.get(cf, key);
  REQUIRE(value.is_ok());
  return value.value();
}

Pairs scan(Kv& kv, std::string_view lower = {}, std::string_view upper = {}, size_t limit = 1000,
           Cf cf = Cf::kTx) {
  Pairs out;
  Status status = kv.scan(cf, lower, upper, [&](std::string_view key, std::string_view value) {
    out.emplace_back(std::string(key), std::string(value));
    return out.size() < limit;
  });
  REQUIRE(status.is_ok());
  return out;
}

TEST_CASE("staged_kv: a batch written by move stages and commits like a copied one") {
  MemKv base;
  put(base, "gone", "base");
  StagedKv staged(base);
  put(staged, "first", "copied");  // the open group holds a copied op first

  KvBatch moved;
  moved.put(Cf::kTx, "k", std::string(100, 'v'));  // beyond any small-string buffer
  moved.del(Cf::kTx, "gone");
  moved.put(Cf::kDue, "d", "due");
  REQUIRE(staged.write(std::move(moved)).is_ok());
  CHECK(moved.empty());  // NOLINT(bugprone-use-after-move): taken over, and cleared
  CHECK(read(staged, "k") == std::string(100, 'v'));
  CHECK(read(staged, "gone") == std::nullopt);
  CHECK(read(staged, "d", Cf::kDue) == "due");
  CHECK(staged.observed_seq() == 1);

  StagedKv::Group group = staged.seal();
  CHECK(group.writes == 2);
  REQUIRE(group.batch.size() == 4);
  CHECK(group.batch.ops()[0].key == "first");
  CHECK(group.batch.ops()[1].value == std::string(100, 'v'));
  CHECK(group.batch.ops()[2].is_delete);
  CHECK(group.batch.ops()[3].cf == Cf::kDue);
  REQUIRE(base.write(group.batch).is_ok());
  staged.committed(group.seq);
  CHECK(staged.overlay_size() == 0);
  CHECK(read(staged, "k") == std::string(100, 'v'));
  CHECK(read(staged, "gone") == std::nullopt);

  // An empty batch by move opens no group.
  KvBatch empty;
  REQUIRE(staged.write(std::move(empty)).is_ok());
  CHECK_FALSE(staged.has_open_group());
}

TEST_CASE("staged_kv: overlay values win and deletions hide the base") {
  MemKv base;
  put(base, "k", "base");
  put(base, "gone", "base");
  StagedKv staged(base);
  CHECK(read(staged, "k") == "base");

  put(staged, "k", "staged");
  del(staged, "gone");
  put(staged, "new", "staged", Cf::kDue);
  CHECK(read(staged, "k") == "staged");
  CHECK(read(staged, "gone") == std::nullopt);
  CHECK(read(staged, "new", Cf::kDue) == "staged");
  CHECK(read(staged, "new") == std::nullopt);  // column families stay apart
  // The base is untouched until the group is committed.
  CHECK(read(base, "k") == "base");
  CHECK(read(base, "gone") == "base");
  CHECK(staged.has_open_group());
}

TEST_CASE("staged_kv: scan merges base and overlay in key order, honouring bounds and stops") {
  MemKv base;
  for (std::string key : {"a", "c", "e", "g"}) put(base, key, "base-" + key);
  StagedKv staged(base);
  put(staged, "0", "ov-0");  // before every base key
  put(staged, "b", "ov-b");  // between base keys
  put(staged, "c", "ov-c");  // replaces a base key
  del(staged, "e");          // hides a base key
  del(staged, "f");          // deletes a key the base never had
  put(staged, "h", "ov-h");  // after every base key
  put(staged, "z", "ov-z");

  const Pairs all = {{"0", "ov-0"},   {"a", "base-a"}, {"b", "ov-b"}, {"c", "ov-c"},
                     {"g", "base-g"}, {"h", "ov-h"},   {"z", "ov-z"}};
  CHECK(scan(staged) == all);
  CHECK(scan(staged, "b", "h") == Pairs{{"b", "ov-b"}, {"c", "ov-c"}, {"g", "base-g"}});
  CHECK(scan(staged, "d", "g") == Pairs{});
  CHECK(scan(staged, "h") == Pairs{{"h", "ov-h"}, {"z", "ov-z"}});
  for (size_t limit = 1; limit <= all.size(); ++limit) {
    CAPTURE(limit);
    CHECK(scan(staged, {}, {}, limit) == Pairs(all.begin(), all.begin() + limit));
  }
}

TEST_CASE("staged_kv: committed drops only the committed group's values") {
  MemKv base;
  StagedKv staged(base);
  put(staged, "k1", "g1");
  put(staged, "k2", "g1");
  REQUIRE(staged.has_open_group());
  StagedKv::Group group1 = staged.seal();
  CHECK(group1.seq == 1);
  CHECK(group1.batch.size() == 2);
  CHECK(group1.batch.ops()[0].key == "k1");
  CHECK_FALSE(staged.has_open_group());

  put(staged, "k2", "g2");  // a later group rewrites k2
  CHECK(staged.last_staged_seq() == 2);
  REQUIRE(base.write(group1.batch).is_ok());
  staged.committed(1);
  CHECK(staged.committed_seq() == 1);
  CHECK(staged.overlay_size() == 1);  // only k2, held by group 2
  CHECK(read(staged, "k1") == "g1");  // now from the base
  CHECK(read(staged, "k2") == "g2");  // group 2's value stays

  StagedKv::Group group2 = staged.seal();
  CHECK(group2.seq == 2);
  REQUIRE(base.write(group2.batch).is_ok());
  staged.committed(2);
  CHECK(staged.overlay_size() == 0);
  CHECK(read(staged, "k2") == "g2");
}

// Dropped keys leave their map nodes for the next new keys, of any column
// family and any length: what is read and scanned must not show it.
TEST_CASE("staged_kv: keys staged after others were dropped read and scan as their own") {
  MemKv base;
  StagedKv staged(base);
  const std::string long_key(100, 'L');
  for (int round = 0; round < 3; ++round) {
    const std::string tag = std::to_string(round);
    put(staged, long_key + tag, "tx" + tag);
    put(staged, "b" + tag, "ready-b" + tag, Cf::kReady);
    put(staged, "a" + tag, "ready-a" + tag, Cf::kReady);
    del(staged, "gone" + tag, Cf::kDue);
    CHECK(staged.overlay_size() == 4);
    CHECK(read(staged, long_key + tag) == "tx" + tag);
    CHECK(read(staged, "a" + tag, Cf::kReady) == "ready-a" + tag);
    const Pairs ready = scan(staged, {}, {}, 1000, Cf::kReady);
    REQUIRE(ready.size() == 2 * static_cast<size_t>(round + 1));
    CHECK(std::is_sorted(ready.begin(), ready.end()));
    CHECK(scan(staged, {}, {}, 1000, Cf::kDue).empty());
    StagedKv::Group group = staged.seal();
    REQUIRE(base.write(group.batch).is_ok());
    staged.committed(group.seq);
    CHECK(staged.overlay_size() == 0);  // every node dropped, to be reused next round
  }
  CHECK(read(staged, long_key + "0") == "tx0");
  CHECK(read(staged, "b2", Cf::kReady) == "ready-b2");
}

TEST_CASE("staged_kv: committed covers several sealed groups at once") {
  MemKv base;
  StagedKv staged(base);
  put(staged, "a", "1");
  StagedKv::Group group1 = staged.seal();
  put(staged, "a", "2");
  put(staged, "b", "2");
  StagedKv::Group group2 = staged.seal();
  put(staged, "c", "3");  // open group 3
  REQUIRE(base.write(group1.batch).is_ok());
  REQUIRE(base.write(group2.batch).is_ok());
  staged.committed(2);
  CHECK(staged.overlay_size() == 1);  // only c, of the open group
  CHECK(read(staged, "a") == "2");
  CHECK(scan(staged) == Pairs{{"a", "2"}, {"b", "2"}, {"c", "3"}});
  CHECK(staged.has_open_group());
}

TEST_CASE("staged_kv: discard_from restores the base view") {
  MemKv base;
  put(base, "k", "base");
  StagedKv staged(base);
  put(staged, "k", "g1");
  put(staged, "n", "g1");
  StagedKv::Group group1 = staged.seal();
  put(staged, "k", "g2");
  del(staged, "base-only");
  staged.discard_from(group1.seq);
  CHECK_FALSE(staged.has_open_group());
  CHECK(staged.overlay_size() == 0);
  CHECK(read(staged, "k") == "base");
  CHECK(read(staged, "n") == std::nullopt);
  CHECK(scan(staged) == Pairs{{"k", "base"}});
  // Numbers are not reused: the next group is 3.
  put(staged, "k", "g3");
  CHECK(staged.last_staged_seq() == 3);
  CHECK(staged.seal().seq == 3);
}

TEST_CASE("staged_kv: discard_from keeps older uncommitted groups, even under a rewrite") {
  MemKv base;
  put(base, "k", "base");
  StagedKv staged(base);
  put(staged, "k", "g1");
  StagedKv::Group group1 = staged.seal();
  put(staged, "k", "g2");
  put(staged, "only2", "g2");
  StagedKv::Group group2 = staged.seal();
  put(staged, "k", "g3");  // open
  staged.discard_from(group2.seq);
  CHECK(read(staged, "k") == "g1");
  CHECK(read(staged, "only2") == std::nullopt);
  CHECK_FALSE(staged.has_open_group());
  REQUIRE(base.write(group1.batch).is_ok());
  staged.committed(group1.seq);
  CHECK(staged.overlay_size() == 0);
  CHECK(read(staged, "k") == "g1");
}

// A model of what the overlay must show: the base plus every uncommitted
// group's ops, applied in order. Random writes, seals, commits and discards,
// with keys rewritten within a group and across groups, are checked against
// it after every step.
TEST_CASE("staged_kv: random groups, commits and discards read like the model") {
  using View = std::map<std::pair<Cf, std::string>, std::optional<std::string>>;
  std::mt19937 random(20261202);
  for (int round = 0; round < 40; ++round) {
    MemKv base;
    StagedKv staged(base);
    View committed_view;
    struct ModelGroup {
      uint64_t seq = 0;
      KvBatch batch;  // the ops, in order
    };
    std::deque<ModelGroup> uncommitted;  // sealed groups, then the open one
    std::deque<StagedKv::Group> sealed;
    const std::vector<std::string> keys = {"a", "b", "c", "longer-key-than-sso-0001"};
    const std::vector<Cf> cfs = {Cf::kTx, Cf::kDue};
    auto expected = [&](Cf cf, const std::string& key) {
      std::optional<std::string> value;
      auto at = committed_view.find({cf, key});
      if (at != committed_view.end()) value = at->second;
      for (const ModelGroup& group : uncommitted) {
        for (const KvOp& op : group.batch.ops()) {
          if (op.cf == cf && op.key == key) {
            value = op.is_delete ? std::nullopt : std::optional<std::string>(op.value);
          }
        }
      }
      return value;
    };
    for (int step = 0; step < 200; ++step) {
      const unsigned action = random() % 10;
      if (action < 6) {  // a write of 1 to 3 ops
        KvBatch batch;
        for (unsigned n = 1 + random() % 3; n > 0; --n) {
          const Cf cf = cfs[random() % cfs.size()];
          const std::string key = keys[random() % keys.size()];
          if (random() % 4 == 0) {
            batch.del(cf, key);
          } else {
            batch.put(cf, key, "v" + std::to_string(step) + std::string(random() % 40, 'x'));
          }
        }
        if (uncommitted.empty() || uncommitted.back().seq != staged.open_seq()) {
          uncommitted.push_back({staged.open_seq(), {}});
        }
        uncommitted.back().batch.append(batch);
        if (random() % 2 == 0) {
          REQUIRE(staged.write(batch).is_ok());
        } else {
          REQUIRE(staged.write(std::move(batch)).is_ok());
        }
      } else if (action < 8 && staged.has_open_group()) {
        sealed.push_back(staged.seal());
      } else if (action == 8 && !sealed.empty()) {  // commit the oldest one or two
        uint64_t last = 0;
        for (unsigned n = 1 + random() % 2; n > 0 && !sealed.empty(); --n) {
          REQUIRE(base.write(sealed.front().batch).is_ok());
          for (const KvOp& op : sealed.front().batch.ops()) {
            committed_view[{op.cf, op.key}] =
                op.is_delete ? std::nullopt : std::optional<std::string>(op.value);
          }
          last = sealed.front().seq;
          REQUIRE(uncommitted.front().seq == last);
          uncommitted.pop_front();
          sealed.pop_front();
        }
        staged.committed(last);
      } else if (action == 9 && !uncommitted.empty()) {  // discard from a random group on
        const size_t from = random() % uncommitted.size();
        const uint64_t seq = uncommitted[from].seq;
        staged.discard_from(seq);
        uncommitted.erase(uncommitted.begin() + static_cast<std::ptrdiff_t>(from),
                          uncommitted.end());
        while (!sealed.empty() && sealed.back().seq >= seq) sealed.pop_back();
      }
      for (Cf cf : cfs) {
        for (const std::string& key : keys) {
          CAPTURE(round);
          CAPTURE(step);
          CAPTURE(key);
          CHECK(read(staged, key, cf) == expected(cf, key));
        }
      }
      size_t keys_in_groups = 0;
      for (Cf cf : cfs) {
        for (const std::string& key : keys) {
          bool found = false;
          for (const ModelGroup& group : uncommitted) {
            for (const KvOp& op : group.batch.ops())
              found = found || (op.cf == cf && op.key == key);
          }
          keys_in_groups += found ? 1 : 0;
        }
      }
      CHECK(staged.overlay_size() == keys_in_groups);
    }
  }
}

TEST_CASE("staged_kv: committed transaction records are read without the base") {
  MemKv base;
  StagedKv staged(base);
  put(staged, "t1", "v1");
  put(staged, "gone", "v1");
  StagedKv::Group group1 = staged.seal();
  REQUIRE(base.write(group1.batch).is_ok());
  staged.committed(group1.seq);
  CHECK(staged.recent_size() == 2);
  // Proof that the read is served from memory: the base changes behind the
  // overlay's back (which the server never does) and the committed value is
  // still what a read returns.
  put(base, "t1", "changed behind");
  CHECK(read(staged, "t1") == "v1");

  // A committed deletion is forgotten, so the base answers again.
  del(staged, "gone");
  StagedKv::Group group2 = staged.seal();
  REQUIRE(base.write(group2.batch).is_ok());
  staged.committed(group2.seq);
  CHECK(staged.recent_size() == 1);
  CHECK(read(staged, "gone") == std::nullopt);

  // Other column families are never remembered.
  put(staged, "d", "v", Cf::kDue);
  StagedKv::Group group3 = staged.seal();
  REQUIRE(base.write(group3.batch).is_ok());
  staged.committed(group3.seq);
  CHECK(staged.recent_size() == 1);

  // A failed commit forgets everything: reads go to the base again.
  put(staged, "t1", "v4");
  staged.seal();
  staged.discard_from(4);
  CHECK(staged.recent_size() == 0);
  CHECK(read(staged, "t1") == "changed behind");
}

TEST_CASE("staged_kv: a record read from the base is read again without it") {
  MemKv base;
  put(base, "t1", "v1");
  put(base, "d", "v1", Cf::kDue);
  StagedKv staged(base);
  CHECK(read(staged, "t1") == "v1");
  CHECK(read(staged, "absent") == std::nullopt);
  CHECK(read(staged, "d", Cf::kDue) == "v1");
  CHECK(staged.recent_size() == 1);  // the found record only
  // Proof that the second read is served from memory: the base changes
  // behind the overlay's back (which the server never does).
  put(base, "t1", "changed behind");
  CHECK(read(staged, "t1") == "v1");
  CHECK(staged.observed_seq() == 0);  // a committed value waits for nothing

  // A staged write hides the remembered value, and its commit replaces it.
  put(staged, "t1", "v2");
  CHECK(read(staged, "t1") == "v2");
  StagedKv::Group group = staged.seal();
  REQUIRE(base.write(group.batch).is_ok());
  staged.committed(group.seq);
  put(base, "t1", "changed behind again");
  CHECK(read(staged, "t1") == "v2");

  // A key held by an uncommitted group is read from the overlay, and its
  // base value is not remembered while the group is in flight.
  put(base, "t2", "base");
  put(staged, "t2", "staged");
  StagedKv::Group pending = staged.seal();
  CHECK(read(staged, "t2") == "staged");
  CHECK(staged.recent_size() == 1);  // t1 only
  staged.discard_from(pending.seq);
  CHECK(staged.recent_size() == 0);  // a failed commit forgets everything
  CHECK(read(staged, "t2") == "base");
}

TEST_CASE("staged_kv: prefetch remembers the records no group holds, and only those") {
  MemKv base;
  put(base, "t1", "v1");
  put(base, "t2", "v2");
  put(base, "t3", "v3");
  put(base, "d", "v1", Cf::kDue);
  StagedKv staged(base);
  put(staged, "t2", "staged");  // held by the open group
  staged.prefetch(Cf::kTx, {"t1", "t2", "absent", "t3"});
  staged.prefetch(Cf::kDue, {"d"});  // other families: nothing
  CHECK(staged.recent_size() == 2);  // t1 and t3
  // Served from memory: the base changes behind the overlay's back (which
  // the server never does).
  put(base, "t1", "changed behind");
  put(base, "t2", "changed behind");
  put(base, "t3", "changed behind");
  put(base, "d", "changed behind", Cf::kDue);
  CHECK(read(staged, "t1") == "v1");
  CHECK(read(staged, "t3") == "v3");
  CHECK(read(staged, "t2") == "staged");
  CHECK(read(staged, "absent") == std::nullopt);
  CHECK(read(staged, "d", Cf::kDue) == "changed behind");
  CHECK(staged.observed_seq() != 0);  // the staged read, not the prefetched ones

  // A key already remembered is not read again.
  put(base, "t4", "v4");
  staged.prefetch(Cf::kTx, {"t1", "t4"});
  CHECK(staged.recent_size() == 3);
  CHECK(read(staged, "t1") == "v1");
  CHECK(read(staged, "t4") == "v4");
}

TEST_CASE("recent_values: memory stays within its bound, oldest evicted first") {
  RecentValues recent;
  const std::string value(1000, 'v');
  const size_t fits = RecentValues::kBytesMax / kThousandByteEntry;
  for (size_t i = 0; i < 2 * fits; ++i) recent.remember("k" + std::to_string(i), value);
  CHECK(recent.bytes() <= RecentValues::kBytesMax);
  CHECK(recent.size() >= fits / 2);
  CHECK(recent.find("k0") == nullptr);
  REQUIRE(recent.find("k" + std::to_string(2 * fits - 1)) != nullptr);
  CHECK(*recent.find("k" + std::to_string(2 * fits - 1)) == value);
  // Rewriting one key many times keeps one entry, not one per write.
  RecentValues rewritten;
  for (int i = 0; i < 100000; ++i) rewritten.remember("same", std::to_string(i));
  CHECK(rewritten.size() == 1);
  CHECK(*rewritten.find("same") == "99999");
  rewritten.forget("same");
  CHECK(rewritten.find("same") == nullptr);
  CHECK(rewritten.bytes() == 0);
}

TEST_CASE("recent_values: a value read later outlives the recent ones, within its own bound") {
  RecentValues recent;
  const std::string value(1000, 'v');
  const size_t entry = kThousandByteEntry;
  recent.remember("held", "queued", ReadLater::kYes);
  const size_t held = 4 + 6 + RecentValues::kEntryOverheadBytes;
  CHECK(recent.held_bytes() == held);
  CHECK(recent.bytes() == 0);
  for (size_t i = 0; i < 2 * (RecentValues::kBytesMax / entry); ++i) {
    recent.remember("k" + std::to_string(i), value);
  }
  CHECK(recent.find("k0") == nullptr);      // recent ones go oldest first ...
  REQUIRE(recent.find("held") != nullptr);  // ... the held one, older still, stays
  CHECK(*recent.find("held") == "queued");
  CHECK(recent.bytes() <= RecentValues::kBytesMax);
  CHECK(recent.held_bytes() == held);

  // Rewritten as a value not read later, it becomes the youngest recent one
  // and goes its way.
  recent.remember("held", "answered");
  CHECK(recent.held_bytes() == 0);
  REQUIRE(recent.find("held") != nullptr);
  CHECK(*recent.find("held") == "answered");
  for (size_t i = 0; i < RecentValues::kBytesMax / entry / 2; ++i) {
    recent.remember("n" + std::to_string(i), value);
  }
  CHECK(recent.find("held") != nullptr);  // younger than half the recent ones
  for (size_t i = 0; i < RecentValues::kBytesMax / entry; ++i) {
    recent.remember("m" + std::to_string(i), value);
  }
  CHECK(recent.find("held") == nullptr);

  // Held values beyond the held bound are remembered as recent ones.
  RecentValues full;
  auto key = [](size_t i) {  // 6 bytes, as `entry` counts
    std::string digits = std::to_string(i);
    return "h" + std::string(5 - digits.size(), '0') + digits;
  };
  const size_t held_fit = RecentValues::kHeldBytesMax / entry;
  REQUIRE(held_fit + 100 < 100000);
  for (size_t i = 0; i < held_fit + 100; ++i) full.remember(key(i), value, ReadLater::kYes);
  CHECK(full.held_bytes() <= RecentValues::kHeldBytesMax);
  CHECK(full.held_bytes() > RecentValues::kHeldBytesMax - entry);
  CHECK(full.bytes() == 100 * entry);
  CHECK(full.size() == held_fit + 100);
  REQUIRE(full.find(key(0)) != nullptr);
  // A forgotten held value gives its room back: the next one is held.
  full.forget(key(0));
  full.remember("again!", value, ReadLater::kYes);
  CHECK(full.held_bytes() <= RecentValues::kHeldBytesMax);
  CHECK(full.bytes() == 100 * entry);
  full.clear();
  CHECK(full.size() == 0);
  CHECK(full.held_bytes() == 0);
  CHECK(full.bytes() == 0);
}

TEST_CASE("staged_kv: a committed value to be read later is remembered past many recent ones") {
  MemKv base;
  StagedKv staged(base);
  KvBatch queued;
  queued.put(Cf::kTx, "queued", "request", ReadLater::kYes);
  queued.put(Cf::kTx, "answered", "done");
  REQUIRE(staged.write(std::move(queued)).is_ok());
  auto commit = [&] {
    StagedKv::Group group = staged.seal();
    REQUIRE(base.write(group.batch).is_ok());
    staged.committed(group.seq);
  };
  commit();
  const std::string value(1000, 'v');
  const size_t entry = kThousandByteEntry;
  for (size_t i = 0; i < 2 * (RecentValues::kBytesMax / entry); ++i) {
    put(staged, "k" + std::to_string(i), value);
    if (i % 100 == 99) commit();
  }
  commit();
  // Both changed behind the overlay's back: only a remembered value hides it.
  put(base, "queued", "changed behind");
  put(base, "answered", "changed behind");
  CHECK(read(staged, "queued") == "request");
  CHECK(read(staged, "answered") == "changed behind");
}

TEST_CASE("recent_values: a replaced value keeps its key's place; forget and remember again") {
  RecentValues recent;
  const std::string value(1000, 'v');
  const size_t fits = RecentValues::kBytesMax / kThousandByteEntry;
  recent.remember("first", value);
  for (size_t i = 0; i + 2 < fits; ++i) recent.remember("k" + std::to_string(i), value);
  recent.remember("first", "newer");  // replaced: still the oldest insertion
  REQUIRE(recent.find("first") != nullptr);
  CHECK(*recent.find("first") == "newer");
  for (size_t i = 0; i < fits / 4; ++i) recent.remember("n" + std::to_string(i), value);
  CHECK(recent.find("first") == nullptr);  // the oldest insertion, though replaced late
  CHECK(recent.bytes() <= RecentValues::kBytesMax);

  // A key forgotten and remembered again is one live entry; the queue's
  // leftover of the forgotten one never evicts it.
  RecentValues cycled;
  for (int i = 0; i < 10000; ++i) {
    cycled.remember("x", "1");
    cycled.forget("x");
  }
  cycled.remember("x", "2");
  cycled.remember("y", "3");
  CHECK(cycled.size() == 2);
  REQUIRE(cycled.find(std::string_view("x")) != nullptr);
  CHECK(*cycled.find("x") == "2");
  CHECK(cycled.bytes() == 2 * (1 + 1 + RecentValues::kEntryOverheadBytes));
}

TEST_CASE("staged_kv: observed_seq tracks the newest group a command depended on") {
  MemKv base;
  put(base, "base", "v");
  put(base, "x", "v");
  StagedKv staged(base);
  put(staged, "a", "g1");
  put(staged, "m", "g1");
  StagedKv::Group group1 = staged.seal();
  put(staged, "b", "g2");
  del(staged, "x");

  staged.reset_observed();
  CHECK(staged.observed_seq() == 0);
  CHECK(read(staged, "base") == "v");
  CHECK(read(staged, "absent") == std::nullopt);
  CHECK(staged.observed_seq() == 0);  // base-only reads depend on no group
  CHECK(read(staged, "a") == "g1");
  CHECK(staged.observed_seq() == 1);
  CHECK(read(staged, "x") == std::nullopt);  // hidden by group 2's deletion
  CHECK(staged.observed_seq() == 2);

  staged.reset_observed();
  CHECK(scan(staged, {}, {}, 1) == Pairs{{"a", "g1"}});  // stops before "b"
  CHECK(staged.observed_seq() == 1);
  staged.reset_observed();
  CHECK(scan(staged, "m", "n") == Pairs{{"m", "g1"}});
  CHECK(staged.observed_seq() == 1);
  staged.reset_observed();
  scan(staged, "w");  // passes x, deleted by group 2
  CHECK(staged.observed_seq() == 2);

  staged.reset_observed();
  put(staged, "c", "g2");
  CHECK(staged.observed_seq() == 2);

  REQUIRE(base.write(group1.batch).is_ok());
  staged.committed(group1.seq);
  staged.reset_observed();
  CHECK(read(staged, "a") == "g1");
  CHECK(staged.observed_seq() == 0);  // committed values come from the base
}

TEST_CASE("staged_kv: a hand-out of a replayed value waits for what the replay read") {
  MemKv base;
  put(base, "durable", "v");
  StagedKv staged(base);
  auto replay = [&](std::string_view key, std::string_view value) {
    KvBatch batch;
    batch.put(Cf::kTx, std::string(key), std::string(value));
    batch.mark_replayed();
    REQUIRE(staged.write(batch).is_ok());
  };

  // Group 1: a write that must be durable. Group 2: a replay of a record that
  // group 1 wrote, and one of a record the base holds.
  put(staged, "pending", "g1");
  staged.seal();
  staged.reset_observed();
  CHECK(read(staged, "pending") == "g1");
  replay("pending", "g2");
  staged.reset_observed();
  CHECK(read(staged, "durable") == "v");
  replay("durable", "g2");
  CHECK(staged.open_group_replayed_only());
  CHECK(staged.hand_out_seq() == 0);  // the replay read the base only
  CHECK(staged.observed_seq() == 2);

  staged.reset_observed();
  CHECK(read(staged, "durable") == "g2");
  CHECK(staged.hand_out_seq() == 0);  // nothing a crash could take back
  CHECK(staged.observed_seq() == 2);  // any other reply waits for the group
  CHECK(read(staged, "pending") == "g2");
  CHECK(staged.hand_out_seq() == 1);  // the group its replay read
  CHECK(staged.observed_seq() == 2);

  // A replay that reads a replayed value inherits what that one read.
  staged.reset_observed();
  CHECK(read(staged, "pending") == "g2");
  replay("chained", "g2");
  staged.reset_observed();
  CHECK(read(staged, "chained") == "g2");
  CHECK(staged.hand_out_seq() == 1);

  // A write that is not replayed ends the group's replayed-only status, and
  // a value it writes is a dependency of its own group for hand-outs too.
  put(staged, "fresh", "g2");
  CHECK_FALSE(staged.open_group_replayed_only());
  staged.reset_observed();
  CHECK(read(staged, "fresh") == "g2");
  CHECK(staged.hand_out_seq() == 2);
  StagedKv::Group group = staged.seal();
  CHECK(group.writes == 4);
  CHECK(group.replayed_writes == 3);
  CHECK_FALSE(staged.open_group_replayed_only());  // nothing open
}

TEST_CASE("staged_kv: scans of the due and ready indexes are no dependency; reads of them are") {
  MemKv base;
  put(base, "r0", "v", Cf::kReady);
  StagedKv staged(base);
  put(staged, "r1", "g1", Cf::kReady);
  put(staged, "d1", "g1", Cf::kDue);
  del(staged, "r0", Cf::kReady);
  staged.seal();

  staged.reset_observed();
  CHECK(scan(staged, {}, {}, 1000, Cf::kReady) == Pairs{{"r1", "g1"}});
  CHECK(scan(staged, {}, {}, 1000, Cf::kDue) == Pairs{{"d1", "g1"}});
  CHECK(staged.observed_seq() == 0);
  CHECK(read(staged, "r1", Cf::kReady) == "g1");
  CHECK(staged.observed_seq() == 1);
}

TEST_CASE("staged_kv: a group's batch holds every staged op in order") {
  MemKv base;
  StagedKv staged(base);
  KvBatch first;
  first.put(Cf::kTx, "t", "1");
  first.put(Cf::kDue, "d", "x");
  REQUIRE(staged.write(first).is_ok());
  KvBatch second;
  second.del(Cf::kDue, "d");
  second.put(Cf::kTx, "t", "2");
  REQUIRE(staged.write(second).is_ok());
  REQUIRE(staged.write(KvBatch()).is_ok());  // empty: stages nothing
  StagedKv::Group group = staged.seal();
  REQUIRE(group.batch.size() == 4);
  CHECK(group.batch.ops()[2].is_delete);
  CHECK(group.batch.ops()[3].value == "2");
  // Applying the group to the base gives what the overlay showed.
  REQUIRE(base.write(group.batch).is_ok());
  staged.committed(group.seq);
  CHECK(read(staged, "t") == "2");
  CHECK(read(staged, "d", Cf::kDue) == std::nullopt);
  // An empty write after a seal opens no group.
  REQUIRE(staged.write(KvBatch()).is_ok());
  CHECK_FALSE(staged.has_open_group());
}

}  // namespace
}  // namespace tarde::storage
