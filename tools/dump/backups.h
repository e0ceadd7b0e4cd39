#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "tools/dump/dump.h"

namespace tarde::tools {

// `tarde-dump backups DIR`: every backup of a backup directory (id, time,
// size, files), each read back and its checksums compared. DumpOutput::
// problems is set when one is damaged. Errors: not_found for a missing
// directory, io_error when it cannot be read.
[[nodiscard]] Result<DumpOutput> list_backups_output(const std::string& backup_dir, bool json);

// `tarde-dump restore DIR ID TARGET`: restores backup `id` into `target`, a
// new or empty directory, and says what it restored and what to do next.
// Errors: invalid_argument when target is not empty (checked first, nothing
// written); not_found for a missing directory or unknown id; corruption when
// a file fails its checksum (nothing is left in target).
[[nodiscard]] Result<std::string> restore_output(const std::string& backup_dir, uint32_t id,
                                                 const std::string& target);

}  // namespace tarde::tools
