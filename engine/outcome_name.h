#pragma once

#include "engine/engine.h"

namespace tarde::engine {

// The word a reply shows for an Outcome ("CREATED", "STALE", ...): one
// spelling for the protocol's replies and the HTTP API's JSON.
inline const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kCreated:
      return "CREATED";
    case Outcome::kExists:
      return "EXISTS";
    case Outcome::kOk:
      return "OK";
    case Outcome::kBuried:
      return "BURIED";
    case Outcome::kStale:
      return "STALE";
    case Outcome::kConflict:
      return "CONFLICT";
    case Outcome::kNotFound:
      return "NOT_FOUND";
  }
  return "?";
}

}  // namespace tarde::engine
