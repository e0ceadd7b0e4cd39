#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/records.h"

// The vocabulary of LIST (net/PROTOCOL.md): which transactions of a queue a
// listing walks, how big a page may be, and the page itself. Engine::list
// reads the pages; these are plain values any layer may hold.
namespace tarde::engine {

// What LIST lists. Each is one ordered range, so a page costs a seek and a
// step per entry: kReady the queue's requests not leased (the `ready` index,
// in hand-out order); kLeased those held by a dispatcher (engine memory);
// the others the state index (`state` column family) in tx_id order.
enum class ListState { kReady, kLeased, kInFlight, kScheduled, kSucceeded, kFailed, kDead };

// "ready", "leased", "in_flight", "scheduled", "succeeded", "failed", "dead".
const char* list_state_name(ListState state);
std::optional<ListState> parse_list_state(std::string_view word);

// Items per page when LIST says no limit=, and the most it may ask for: a
// page is read (one point read per item) while other commands wait.
inline constexpr size_t kListDefaultLimit = 100;
inline constexpr size_t kListLimitMax = 1000;
// Index entries one page may walk past without listing them (a reason=
// filter that rejects them, leased requests in the ready index, entries of
// transactions gone since): the page then ends early, possibly empty, with
// a cursor to go on from. Bounds the work of one page whatever the filter.
inline constexpr size_t kListExaminedMax = 10'000;
static_assert(kListLimitMax <= kListExaminedMax);
// Cursors are at most a tx_id (200 bytes) and a byte of kind.
inline constexpr size_t kListCursorBytesMax = 201;

// One page of a listing: the transactions, as GET shows them, and the cursor
// of the next page (empty when the listing is complete). `examined` counts
// the index entries the page walked, for tests and logs.
struct ListPage {
  std::vector<storage::TxRecord> items;
  std::string next;
  size_t examined = 0;
};

// The reason an item shows and reason= matches: the record's (terminal)
// reason, else the last failed delivery's, else empty.
std::string_view shown_reason(const storage::TxRecord& rec);

}  // namespace tarde::engine
