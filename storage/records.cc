#include "storage/records.h"

#include "base/assert.h"

namespace tarde::storage {

const char* to_string(TxState state) {
  switch (state) {
    case TxState::kNone:
      return "-";
    case TxState::kSending:
      return "SENDING";
    case TxState::kInFlight:
      return "IN_FLIGHT";
    case TxState::kScheduled:
      return "SCHEDULED";
    case TxState::kSucceeded:
      return "SUCCEEDED";
    case TxState::kFailed:
      return "FAILED";
  }
  return "?";
}

IndexedState indexed_state(const TxRecord& rec) {
  TARDE_ASSERT(rec.state != TxState::kNone);
  if (rec.state == TxState::kSending && rec.dead_lettered) return IndexedState::kDeadLettered;
  return static_cast<IndexedState>(rec.state);
}

std::optional<IndexedState> filed_state(const TxRecord& rec) {
  if (rec.state == TxState::kNone) return std::nullopt;
  const IndexedState state = indexed_state(rec);
  if (state == IndexedState::kSending) return std::nullopt;
  return state;
}

bool is_terminal(TxState state) {
  return state == TxState::kSucceeded || state == TxState::kFailed;
}

}  // namespace tarde::storage
