// LIST: one page of a queue's transactions in one state, read from an index
// ordered the way the page is (engine/listing.h). Every page is a seek and a
// walk of at most kListExaminedMax entries, with a point read of each
// entry's record: its cost does not grow with the store.
#include <charconv>

#include "engine/engine.h"
#include "storage/keys.h"

namespace tarde::engine {

using storage::TxRecord;

namespace {

// Cursors: a kind byte, then the position of the last entry the page
// walked. 't' + tx_id for the listings in tx_id order; 'r' + ready_at_ms +
// '.' + seq for the ready index. Every byte is printable, so a cursor is a
// protocol token.
constexpr char kTxCursor = 't';
constexpr char kReadyCursor = 'r';

std::string tx_cursor(std::string_view tx_id) { return kTxCursor + std::string(tx_id); }

std::string ready_cursor(const ReadyQueue::Key& key) {
  return kReadyCursor + std::to_string(key.first) + "." + std::to_string(key.second);
}

Status bad_cursor(std::string_view cursor) {
  return Status::invalid_argument("not a cursor of this listing: " +
                                  storage::printable_key(cursor));
}

// Strict decimal: digits only, the whole text, no overflow.
template <typename Int>
bool parse_decimal(std::string_view text, Int* out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end && text.front() != '-' && text.front() != '+';
}

Result<std::string> parse_tx_cursor(std::string_view cursor) {
  if (cursor.empty()) return std::string();
  if (cursor.front() != kTxCursor || !storage::is_valid_tx_id(cursor.substr(1))) {
    return bad_cursor(cursor);
  }
  return std::string(cursor.substr(1));
}

Result<std::optional<ReadyQueue::Key>> parse_ready_cursor(std::string_view cursor) {
  if (cursor.empty()) return std::optional<ReadyQueue::Key>();
  if (cursor.front() != kReadyCursor) return bad_cursor(cursor);
  const std::string_view rest = cursor.substr(1);
  const size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return bad_cursor(cursor);
  ReadyQueue::Key key{};
  if (!parse_decimal(rest.substr(0, dot), &key.first) ||
      !parse_decimal(rest.substr(dot + 1), &key.second)) {
    return bad_cursor(cursor);
  }
  return std::optional<ReadyQueue::Key>(key);
}

}  // namespace

// Collects one page: stops one entry past a full page (so the cursor says
// more may follow) or when kListExaminedMax entries were walked.
class PageBuilder {
 public:
  PageBuilder(size_t limit, std::string_view reason, int64_t now_ms)
      : limit_(limit), reason_(reason), now_ms_(now_ms) {}

  // Called with each entry before it is looked at: false (and the page
  // ends, continuing after the last entry walked) when it is full.
  bool room() {
    if (page_.items.size() < limit_ && page_.examined < kListExaminedMax) return true;
    page_.next = position_;
    return false;
  }
  // The entry at `position` was walked; rec is its transaction when the
  // listing shows it (before the reason filter).
  void walked(std::string position, std::optional<TxRecord> rec) {
    page_.examined += 1;
    position_ = std::move(position);
    if (!rec) return;
    if (!reason_.empty() && shown_reason(*rec) != reason_) return;
    rec->next_fire_at_ms = shown_next_fire_at_ms(*rec, now_ms_);
    page_.items.push_back(std::move(*rec));
  }
  ListPage take() { return std::move(page_); }

 private:
  size_t limit_;
  std::string_view reason_;
  int64_t now_ms_;
  std::string position_;
  ListPage page_;
};

namespace {

storage::IndexedState indexed_for(ListState state) {
  switch (state) {
    case ListState::kReady:
    case ListState::kLeased:
      return storage::IndexedState::kSending;
    case ListState::kInFlight:
      return storage::IndexedState::kInFlight;
    case ListState::kScheduled:
      return storage::IndexedState::kScheduled;
    case ListState::kSucceeded:
      return storage::IndexedState::kSucceeded;
    case ListState::kFailed:
      return storage::IndexedState::kFailed;
    case ListState::kDead:
      return storage::IndexedState::kDeadLettered;
  }
  return storage::IndexedState::kSending;
}

}  // namespace

const char* list_state_name(ListState state) {
  switch (state) {
    case ListState::kReady:
      return "ready";
    case ListState::kLeased:
      return "leased";
    case ListState::kInFlight:
      return "in_flight";
    case ListState::kScheduled:
      return "scheduled";
    case ListState::kSucceeded:
      return "succeeded";
    case ListState::kFailed:
      return "failed";
    case ListState::kDead:
      return "dead";
  }
  return "?";
}

std::optional<ListState> parse_list_state(std::string_view word) {
  for (ListState state :
       {ListState::kReady, ListState::kLeased, ListState::kInFlight, ListState::kScheduled,
        ListState::kSucceeded, ListState::kFailed, ListState::kDead}) {
    if (word == list_state_name(state)) return state;
  }
  return std::nullopt;
}

std::string_view shown_reason(const TxRecord& rec) {
  if (!rec.reason.empty()) return rec.reason;
  if (!rec.failures.empty()) return rec.failures.back().reason;
  return {};
}

Result<ListPage> Engine::list(std::string_view queue, ListState state, std::string_view cursor,
                              size_t limit, std::string_view prefix, std::string_view reason) {
  if (!storage::is_valid_queue_name(queue)) {
    return Status::invalid_argument("bad queue name " + storage::printable_key(queue));
  }
  if (limit < 1 || limit > kListLimitMax) {
    return Status::invalid_argument("limit must be from 1 to " + std::to_string(kListLimitMax));
  }
  if (!prefix.empty() && !storage::is_valid_tx_id(prefix)) {
    return Status::invalid_argument("bad tx_id prefix " + storage::printable_key(prefix));
  }
  PageBuilder page(limit, reason, clock_.now_wall_ms());
  Status status;
  if (state == ListState::kReady) {
    status = list_ready(queue, cursor, prefix, &page);
  } else if (state == ListState::kLeased) {
    status = list_leased(queue, cursor, prefix, &page);
  } else {
    status = list_indexed(queue, state, cursor, prefix, &page);
  }
  if (!status.is_ok()) return status;
  return page.take();
}

// The state index in tx_id order.
Status Engine::list_indexed(std::string_view queue, ListState state, std::string_view cursor,
                            std::string_view prefix, PageBuilder* page) {
  Result<std::string> after = parse_tx_cursor(cursor);
  if (!after.is_ok()) return after.status();
  const storage::IndexedState wanted = indexed_for(state);
  Status inner;
  TARDE_RETURN_IF_ERROR(
      store_.scan_state(queue, wanted, prefix, after.value(), [&](const std::string& tx_id) {
        if (!page->room()) return false;
        auto found = store_.get_tx(tx_id);
        if (!found.is_ok()) {
          inner = found.status();
          return false;
        }
        std::optional<TxRecord>& rec = found.value();
        // A key whose transaction moved on is not listed (the sweep deletes
        // such keys).
        const bool shown = rec && rec->queue == queue && storage::filed_state(*rec) == wanted;
        page->walked(tx_cursor(tx_id), shown ? std::move(rec) : std::nullopt);
        return true;
      }));
  return inner;
}

// The ready index in hand-out order, less the leased requests; with a
// prefix, those whose tx_id starts with it (SENDING transactions have no
// state index key: their ready entry is their index).
Status Engine::list_ready(std::string_view queue, std::string_view cursor, std::string_view prefix,
                          PageBuilder* page) {
  Result<std::optional<ReadyQueue::Key>> after = parse_ready_cursor(cursor);
  if (!after.is_ok()) return after.status();
  Status inner;
  auto visit = [&](const storage::ReadyEntry& entry) {
    if (!page->room()) return false;
    const ReadyQueue::Key key{entry.ready_at_ms, entry.seq};
    auto found = store_.get_tx(entry.tx_id);
    if (!found.is_ok()) {
      inner = found.status();
      return false;
    }
    std::optional<TxRecord>& rec = found.value();
    const bool owned = rec && rec->state == storage::TxState::kSending &&
                       rec->ready_seq == entry.seq && rec->ready_at_ms == entry.ready_at_ms;
    const bool shown = owned && leases_.count(entry.tx_id) == 0 && entry.tx_id.starts_with(prefix);
    page->walked(ready_cursor(key), shown ? std::move(rec) : std::nullopt);
    return true;
  };
  if (after.value()) {
    TARDE_RETURN_IF_ERROR(
        store_.scan_ready_after(queue, after.value()->first, after.value()->second, visit));
  } else {
    TARDE_RETURN_IF_ERROR(store_.scan_ready(queue, visit));
  }
  return inner;
}

// The queue's leases, in tx_id order (memory: QueueState::leased_ids).
Status Engine::list_leased(std::string_view queue_name, std::string_view cursor,
                           std::string_view prefix, PageBuilder* page) {
  Result<std::string> after = parse_tx_cursor(cursor);
  if (!after.is_ok()) return after.status();
  auto found_queue = queues_.find(queue_name);
  if (found_queue == queues_.end()) return Status::ok();  // never named: nothing leased
  const std::set<std::string_view, std::less<>>& leased = found_queue->second.leased_ids;
  auto it = after->empty() ? leased.lower_bound(prefix) : leased.upper_bound(after.value());
  if (it != leased.end() && *it < prefix) it = leased.lower_bound(prefix);
  for (; it != leased.end() && it->starts_with(prefix); ++it) {
    if (!page->room()) break;
    auto found = store_.get_tx(*it);
    if (!found.is_ok()) return found.status();
    page->walked(tx_cursor(*it), std::move(found.value()));
  }
  return Status::ok();
}

}  // namespace tarde::engine
