#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "storage/store.h"

namespace tarde::tools {

// What a tarde-dump invocation asked for.
struct DumpRequest {
  std::string command;   // summary, tx, list, due, ready, dead, check
  std::string argument;  // the tx id or queue name, when the command takes one
  std::optional<std::string> state;
  std::optional<std::string> queue;
  uint64_t limit = 0;  // 0: no limit
  bool json = false;
  // `backups DIR` and `restore DIR ID TARGET` (tools/dump/backups.h): DIR is
  // the backup directory, in place of a data directory.
  uint32_t backup_id = 0;
  std::string target;
};

// The text to print and whether the dump found problems (check: violations).
struct DumpOutput {
  std::string text;
  bool problems = false;
};

// Runs one tarde-dump command over a store (read-only use). Storage errors
// and unknown commands come back as a Status.
[[nodiscard]] Result<DumpOutput> run_dump(storage::Store& store, const DumpRequest& request);

}  // namespace tarde::tools
