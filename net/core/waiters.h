#pragma once

#include <cstdint>
#include <string>

namespace tarde::net {

// A RESERVE waiting for a queue's next request: a connection parked in
// RESERVE wait=, or a caller of the embedded engine. Held weakly by the Core;
// io thread only.
class ReserveWaiter {
 public:
  // Still waiting on `queue` (not timed out, answered or closed).
  virtual bool waits_on(const std::string& queue) const = 0;
  // Tries to take the queue's next request, with the core's observed commit
  // sequence just reset; false when the queue had nothing (it stays parked).
  // After a true, the Core removes the waiter from the queue's line and
  // calls deliver(), which hands over what was taken.
  virtual bool try_take(const std::string& queue) = 0;
  virtual void deliver() = 0;

 protected:
  ~ReserveWaiter() = default;
};

class CommitWaiterList;

// Something with replies that wait for a group commit. Held weakly by the
// Core and told of the next commit; io thread only.
class CommitWaiter {
 public:
  // The commit of group `seq` finished, durable when `ok`; a failed one
  // discarded it and everything staged after it.
  virtual void on_commit(uint64_t seq, bool ok) = 0;

 protected:
  ~CommitWaiter() = default;

 private:
  friend class CommitWaiterList;
  // The CommitWaiterList round (between two commits) that listed it last;
  // 0 before any.
  uint64_t listed_in_ = 0;
};

}  // namespace tarde::net
