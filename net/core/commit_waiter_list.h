#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "net/core/waiters.h"

namespace tarde::net {

// CommitWaiterList holds the CommitWaiters to tell of the next commit, each
// once however often it was added. A connection adds itself for every
// command whose reply waits for a commit, and the list is emptied at every
// commit: kept in vectors whose room stays, that costs no allocation in
// steady state, where a hash map cost a node per command and a bucket array
// per commit (docs/benchmarks.md). Waiters are held weakly; a waiter is in
// at most one list. io thread only.
class CommitWaiterList {
 public:
  CommitWaiterList() = default;
  CommitWaiterList(const CommitWaiterList&) = delete;
  CommitWaiterList& operator=(const CommitWaiterList&) = delete;

  // Lists the waiter for the next commit; nothing when it is listed already.
  void add(const std::shared_ptr<CommitWaiter>& waiter);
  // Takes a live waiter off the list, if it is there. One that is being
  // told of a commit right now may still be told of that one. A waiter
  // destroyed while listed need not be removed: notify() skips it.
  void remove(CommitWaiter* waiter);
  // The waiters listed, each counted once.
  size_t size() const { return listed_.size(); }
  // Empties the list, then tells each waiter it held that is still alive of
  // the commit, in the order they were added. A waiter may add itself again
  // from on_commit (for a later commit), and a commit may be told of from
  // inside another's on_commit.
  void notify(uint64_t seq, bool ok);

 private:
  struct Entry {
    CommitWaiter* raw = nullptr;
    std::weak_ptr<CommitWaiter> weak;
  };
  std::vector<Entry> listed_;
  // The room of the list notify() last emptied, reused for the next one.
  std::vector<Entry> spare_;
  // Numbers the lists between two commits: a waiter is in listed_ exactly
  // when its listed_in_ is round_, so notify() unlists them all at once.
  uint64_t round_ = 1;
};

}  // namespace tarde::net
