#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/kv.h"
#include "storage/recent_values.h"

namespace tarde::storage {

// StagedKv is the group-commit overlay. The engine writes through it and sees
// its own writes at once, while the writes of many commands collect in one
// open group; the server seals the group, writes it to the base Kv with one
// fsync (possibly on another thread), and reports back with committed() or,
// on failure, discard_from(). Replies wait until the group they depend on
// (observed_seq()) is committed.
//
// Groups are numbered 1, 2, 3, ...; numbers are never reused, so a discarded
// group's number is never committed and the server must fail the replies that
// observed it when it calls discard_from(). Committed transaction records,
// and those read from the base, are also remembered (RecentValues), so the
// read that follows a write or a read rarely reaches the base; this assumes,
// as the server guarantees, that the base is written only with the groups
// sealed here. The overlay keeps, per key, the value each uncommitted group
// gave it, so committed() and discard_from() are exact whatever the number
// of groups in flight.
//
// Owned by the server; the base must outlive it. Not thread-safe: every
// method is called from the engine thread (only the base's write of a sealed
// group may run elsewhere, on the Group's own copy of the batch). Errors are
// the base's read errors; write() never fails.
class StagedKv final : public Kv {
 public:
  // A sealed group: its number and every op staged into it, in order.
  struct Group {
    uint64_t seq = 0;
    KvBatch batch;
    size_t writes = 0;           // write() calls staged into it: transitions, for figures
    size_t replayed_writes = 0;  // ... of which replayed (KvBatch::mark_replayed)
  };

  explicit StagedKv(Kv& base) : base_(base) {}

  // The overlay's latest staged value or deletion wins over the base.
  [[nodiscard]] Result<std::optional<std::string>> get(Cf cf, std::string_view key) override;
  // The base's scan merged with the overlay in key order: overlay values win
  // on equal keys and overlay deletions hide base keys. Stops when visit
  // returns false.
  [[nodiscard]] Status scan(Cf cf, std::string_view lower, std::string_view upper,
                            const KvVisitor& visit) override;
  // Stages the batch into the open group (opening one if needed) and returns
  // ok. An empty batch stages nothing and opens no group.
  [[nodiscard]] Status write(const KvBatch& batch) override;
  // The same, moving the batch's keys and values into the open group.
  [[nodiscard]] Status write(KvBatch&& batch) override;
  // Reads the `tx` keys that no group holds and that are not remembered in
  // one batch from the base, and remembers those found (RecentValues), so
  // that their reads that follow are hash lookups. Other families: nothing.
  void prefetch(Cf cf, std::vector<std::string> keys) override;

  // True when something is staged and not yet sealed.
  bool has_open_group() const { return !open_batch_.empty(); }
  // Closes the open group for commit; the next write opens the next number.
  // Requires: has_open_group().
  Group seal();
  // The base now holds every group up to seq: drops the overlay values of
  // those groups (a key rewritten by a later group keeps that later value).
  // Costs O(ops in the groups). Requires: seq was sealed.
  void committed(uint64_t seq);
  // The commit of group seq failed: drops every overlay value of groups >= seq,
  // sealed or open, so reads see the base (plus older uncommitted groups).
  // Requires: seq is above committed_seq().
  void discard_from(uint64_t seq);

  // The highest seq passed to committed(); 0 before the first.
  uint64_t committed_seq() const { return committed_seq_; }
  // The seq of the newest group that received a write (open, sealed,
  // committed or discarded); 0 before the first write.
  uint64_t last_staged_seq() const { return last_staged_seq_; }

  // observed_seq() is the highest group seq of any overlay value that a get
  // or scan returned or that hid a base value (scans of the due and ready
  // indexes excepted: see scan()), or that a write staged, since
  // the last reset_observed(); 0 when none. The server resets it before each
  // command and afterwards knows which commit the command's reply depends on.
  void reset_observed() {
    observed_seq_ = 0;
    hand_out_seq_ = 0;
  }
  uint64_t observed_seq() const { return observed_seq_; }
  // The same for a hand-out, whose request a crash cannot take back: a value
  // staged by a replayed batch (KvBatch::mark_replayed) counts as the groups
  // the replay itself read, not as its own group. So the hand-out of a fired
  // retry waits for nothing the disk does not already hold, while any other
  // reply that reads the fire waits for its group.
  uint64_t hand_out_seq() const { return hand_out_seq_; }

  // The number the open group carries (or the next one will).
  uint64_t open_seq() const { return open_seq_; }
  // Something is staged and every write in the open group was replayed.
  bool open_group_replayed_only() const {
    return has_open_group() && open_replayed_writes_ == open_writes_;
  }

  // The number of keys with an uncommitted value, for tests and metrics.
  size_t overlay_size() const;
  // Committed transaction records remembered for reads (see RecentValues).
  size_t recent_size() const { return recent_tx_.size(); }

 private:
  // One group's value for a key: a put of value, or a deletion.
  struct Version {
    uint64_t seq = 0;
    uint64_t hand_out_dep = 0;  // seq, or for a replayed write what it read
    bool is_delete = false;
    std::string value;
    ReadLater read_later = ReadLater::kNo;  // as its KvOp said
  };
  // The uncommitted values of one key, oldest group first; the back wins.
  using Versions = std::vector<Version>;
  using Overlay = std::map<std::string, Versions, std::less<>>;
  // A key that holds a value of a group. A map node stays where it is until
  // it is erased, and it is erased only once its last version is dropped,
  // so the entry stays valid for as long as its group's version is there.
  struct Touched {
    Cf cf = Cf::kTx;
    Overlay::iterator at;
  };
  // The keys of a sealed, uncommitted group, each once: what committed() and
  // discard_from() revisit.
  struct SealedKeys {
    uint64_t seq = 0;
    std::vector<Touched> keys;
  };

  void observe(const Version& version);
  // Files the batch's values in the overlay for the open group; the caller
  // then adds its ops to the open batch. Requires: !batch.empty().
  void stage(const KvBatch& batch);
  // Before the committed versions of a `tx` key are dropped: remember the
  // newest of them (the base's value now) for later reads, taking its value
  // over when it is the version of group `dropping`, dropped next.
  void remember_committed(const Overlay::iterator& at, uint64_t seq, uint64_t dropping);
  // Removes the key's version of group seq, and the key when no version is
  // left (its node kept in spare_nodes_ while there is room).
  void drop_version(const Touched& key, uint64_t seq);
  // Adds key, absent from overlay, at hint (where lower_bound found its
  // place), in a spare node when there is one.
  Overlay::iterator insert_key(Overlay& overlay, Overlay::iterator hint, std::string_view key);
  bool emit(const Overlay::const_iterator& it, const KvVisitor& visit, bool observed);

  Kv& base_;
  std::array<Overlay, kCfCount> overlay_;
  // Transaction records the base holds, as committed through this overlay
  // or read from the base: the engine reads a record again right after
  // writing or reading it.
  RecentValues recent_tx_;
  // Map nodes of keys whose last version was dropped, with their key's and
  // version vector's memory, reused by the next new keys: most keys live
  // for one group (a record written and committed, a ready entry put and
  // deleted), and each new key otherwise allocated a node, its key and a
  // vector. Bounded, so that a burst of keys does not stay allocated.
  std::vector<Overlay::node_type> spare_nodes_;
  static constexpr size_t kSpareNodesMax = 1024;
  KvBatch open_batch_;
  std::vector<Touched> open_keys_;  // the open group's keys, each once
  size_t open_writes_ = 0;
  size_t open_replayed_writes_ = 0;
  uint64_t open_seq_ = 1;          // the number the open (or next) group carries
  std::deque<SealedKeys> sealed_;  // sealed and uncommitted, oldest first
  uint64_t committed_seq_ = 0;
  uint64_t last_staged_seq_ = 0;
  uint64_t observed_seq_ = 0;
  uint64_t hand_out_seq_ = 0;
};

}  // namespace tarde::storage
