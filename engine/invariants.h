#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "storage/kv.h"
#include "storage/records.h"
#include "storage/store.h"

namespace tarde::engine {

// One broken invariant of docs/design.md "Recovery", with what a repair needs.
struct Violation {
  enum class Kind {
    kBadRecord,     // a record's own fields disagree; reported, never repaired
    kMissingIndex,  // a record owns an index entry that is not there
    kOrphanIndex,   // an index entry whose transaction does not own it
  };
  Kind kind = Kind::kBadRecord;
  std::string text;                   // one line for people
  storage::TxRecord record;           // the record concerned (kMissingIndex: to rebuild from)
  storage::Cf cf = storage::Cf::kTx;  // the index column family concerned
  std::string key;                    // kOrphanIndex: the key to delete
};

// What a full sweep saw besides violations: the counts recovery needs.
struct Sweep {
  // Requests and dead letters owned by transactions of one queue, and its
  // transactions IN_FLIGHT and SCHEDULED.
  struct QueueCounts {
    uint64_t ready = 0;
    uint64_t dead = 0;
    uint64_t in_flight = 0;
    uint64_t scheduled = 0;
  };
  std::vector<Violation> violations;
  std::array<uint64_t, 6> by_state{};  // indexed by storage::TxState
  uint64_t transactions = 0;
  std::map<std::string, QueueCounts> queues;
};

// Shared with a sweep running on another thread: its progress for STATS,
// and a flag that stops it early (it then returns shutting_down).
struct SweepControl {
  std::atomic<uint64_t> scanned{0};  // transactions and index entries visited
  std::atomic<bool> cancel{false};
};

// Checks every invariant over the whole store: each transaction's fields,
// that it owns exactly the `due`, `ready` and `dead` entries its record
// names and exactly one state index key (its queue and IndexedState; not
// checked in a store of format version 1, which has no index yet), and that
// every such entry has its owner. This is what start-up
// recovery runs (in the background) and what `tarde-dump check` prints. Reads
// only; the cost is one scan of each column family plus a point read per
// owned entry; an index holding more keys than the records own intact is
// walked again with a point read of each entry's owner, to name the orphans.
// With a control, progress is counted in it and a cancel stops the sweep.
[[nodiscard]] Status sweep_invariants(storage::Store& store, Sweep* sweep,
                                      SweepControl* control = nullptr);

// Keeps, of violations found earlier (on a snapshot), those that still hold
// in the store as it is now, re-derived from the current record or entry: a
// transition since the snapshot may have fixed one, or changed which entry a
// record must own.
[[nodiscard]] Status still_violated(storage::Store& store, const std::vector<Violation>& found,
                                    std::vector<Violation>* still);

// Repairs what can be repaired (missing entries are rebuilt from their owner,
// orphans deleted) in one batch, and describes each repair in `repaired`.
[[nodiscard]] Status repair_violations(storage::Store& store,
                                       const std::vector<Violation>& violations,
                                       std::vector<std::string>* repaired);

}  // namespace tarde::engine
