#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "base/status.h"
#include "tools/crash/recorder.h"

namespace tarde::crash {

// Reads the journal tarde-crash-embedded writes (tools/crash-embedded/
// journal.h) into `recorder`, as if its calls had been made over the wire:
// plans, hand-outs, and every call with its outcome. A call that began and
// never ended (its life was killed first) is kPending, received at its
// life's death (`death_us`, by life number). A last line cut short by a kill
// is ignored. invalid_argument for a line that is not a journal line.
Status read_journal(const std::string& path, const std::map<uint64_t, int64_t>& death_us,
                    Recorder& recorder);

}  // namespace tarde::crash
