#include "base/status.h"

namespace tarde {

std::string Status::to_string() const {
  const char* name = "ok";
  switch (code_) {
    case Code::kOk:
      return "ok";
    case Code::kNotFound:
      name = "not found";
      break;
    case Code::kInvalidArgument:
      name = "invalid argument";
      break;
    case Code::kCorruption:
      name = "corruption";
      break;
    case Code::kIoError:
      name = "io error";
      break;
    case Code::kBusy:
      name = "busy";
      break;
    case Code::kShuttingDown:
      name = "shutting down";
      break;
  }
  return std::string(name) + ": " + message_;
}

}  // namespace tarde
