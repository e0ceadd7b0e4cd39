#include "net/core/commit_waiter_list.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace tarde::net {
namespace {

// Records the commits it is told of; `then` runs inside on_commit.
class Recorder final : public CommitWaiter {
 public:
  void on_commit(uint64_t seq, bool ok) override {
    told.emplace_back(seq, ok);
    if (then) then();
  }
  std::vector<std::pair<uint64_t, bool>> told;
  std::function<void()> then;
};

using Told = std::vector<std::pair<uint64_t, bool>>;

// A list and two live waiters, both listed.
struct TwoListed {
  TwoListed() {
    list.add(a);
    list.add(b);
  }
  CommitWaiterList list;
  std::shared_ptr<Recorder> a = std::make_shared<Recorder>();
  std::shared_ptr<Recorder> b = std::make_shared<Recorder>();
};

TEST_CASE_FIXTURE(TwoListed, "a waiter added several times is listed and told once") {
  list.add(a);
  list.add(a);
  CHECK(list.size() == 2);
  list.notify(7, true);
  CHECK(a->told == Told{{7, true}});
  CHECK(b->told == Told{{7, true}});
  CHECK(list.size() == 0);
  // The list is empty after a commit: the next tells nobody.
  list.notify(8, false);
  CHECK(a->told.size() == 1);
  // Added again, a waiter is told of the next commit, a failed one too.
  list.add(b);
  list.add(b);
  CHECK(list.size() == 1);
  list.notify(9, false);
  CHECK(b->told == Told{{7, true}, {9, false}});
  CHECK(a->told.size() == 1);
}

TEST_CASE_FIXTURE(TwoListed, "a removed waiter is not told, and may be added again") {
  list.remove(a.get());
  list.remove(a.get());  // not listed: nothing
  CHECK(list.size() == 1);
  list.notify(3, true);
  CHECK(a->told.empty());
  CHECK(b->told == Told{{3, true}});
  list.add(a);
  CHECK(list.size() == 1);
  list.notify(4, true);
  CHECK(a->told == Told{{4, true}});
}

TEST_CASE("a destroyed waiter is skipped, and its address may list another") {
  CommitWaiterList list;
  auto kept = std::make_shared<Recorder>();
  auto gone = std::make_shared<Recorder>();
  list.add(gone);
  list.add(kept);
  gone.reset();  // destroyed without remove()
  list.notify(5, true);
  CHECK(kept->told == Told{{5, true}});

  // A dead entry and a live waiter at the same address: remove() takes
  // the live one off. (Allocated apart from their control blocks, so that
  // the first one's memory is freed while the list holds its weak_ptr, and
  // the allocator hands it out again.)
  std::shared_ptr<Recorder> first(new Recorder);
  Recorder* const address = first.get();
  list.add(first);
  first.reset();
  std::shared_ptr<Recorder> second(new Recorder);
  list.add(second);
  if (second.get() == address) {
    list.remove(second.get());
    list.notify(6, true);
    CHECK(second->told.empty());
  } else {
    list.notify(6, true);
    CHECK(second->told == Told{{6, true}});
  }
  CHECK(list.size() == 0);
}

TEST_CASE_FIXTURE(TwoListed,
                  "a waiter may add itself again while it is told, for the next commit") {
  a->then = [&] {
    list.add(a);
    list.add(b);  // b is still to be told of this commit: listed for the next as well
  };
  list.notify(1, true);
  CHECK(a->told == Told{{1, true}});
  CHECK(b->told == Told{{1, true}});
  CHECK(list.size() == 2);
  a->then = nullptr;
  list.notify(2, true);
  CHECK(a->told == Told{{1, true}, {2, true}});
  CHECK(b->told == Told{{1, true}, {2, true}});
  CHECK(list.size() == 0);
}

TEST_CASE_FIXTURE(TwoListed, "a commit may be told of from inside another's on_commit") {
  auto c = std::make_shared<Recorder>();
  bool first = true;
  a->then = [&] {
    if (!first) return;
    first = false;
    list.add(c);
    list.notify(11, false);  // tells c only: a and b left the list at 10
  };
  list.notify(10, true);
  CHECK(a->told == Told{{10, true}});
  CHECK(b->told == Told{{10, true}});
  CHECK(c->told == Told{{11, false}});
  CHECK(list.size() == 0);
  // The list still works afterwards, its room whichever vector kept it.
  list.add(b);
  list.notify(12, true);
  CHECK(b->told == Told{{10, true}, {12, true}});
}

}  // namespace
}  // namespace tarde::net
