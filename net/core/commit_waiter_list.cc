#include "net/core/commit_waiter_list.h"

#include <algorithm>
#include <utility>

namespace tarde::net {

void CommitWaiterList::add(const std::shared_ptr<CommitWaiter>& waiter) {
  if (waiter->listed_in_ == round_) return;
  waiter->listed_in_ = round_;
  listed_.push_back(Entry{waiter.get(), waiter});
}

void CommitWaiterList::remove(CommitWaiter* waiter) {
  if (waiter->listed_in_ != round_) return;
  waiter->listed_in_ = 0;
  // An entry of a destroyed waiter may carry the same address.
  const auto at = std::find_if(listed_.begin(), listed_.end(), [waiter](const Entry& entry) {
    return entry.raw == waiter && !entry.weak.expired();
  });
  if (at != listed_.end()) listed_.erase(at);
}

void CommitWaiterList::notify(uint64_t seq, bool ok) {
  // The list goes out whole before anyone is told, so that what they add
  // lands in a fresh list, in spare_'s room (a moved-from vector is empty;
  // a notify from inside this one finds spare_ taken and starts from none).
  std::vector<Entry> told = std::move(spare_);
  told.swap(listed_);
  round_ += 1;
  for (const Entry& entry : told) {
    // A destroyed waiter is skipped, its raw pointer never touched.
    if (const std::shared_ptr<CommitWaiter> waiter = entry.weak.lock()) {
      waiter->on_commit(seq, ok);
    }
  }
  told.clear();
  if (told.capacity() > spare_.capacity()) spare_ = std::move(told);
}

}  // namespace tarde::net
