#include "storage/records.h"

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

bool is_terminal(TxState state) {
  return state == TxState::kSucceeded || state == TxState::kFailed;
}

}  // namespace tarde::storage
