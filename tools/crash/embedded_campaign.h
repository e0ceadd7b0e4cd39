#pragma once

#include "tools/crash/options.h"

namespace tarde::crash {

// tarde-crash --embedded: the campaign for the embedded engine. Each life
// runs tarde-crash-embedded, a program that embeds tarde and runs the
// workload in-process, journaling every call; it is killed with SIGKILL at a
// random instant or dies at an armed crash point of the library
// (commit.before_write, commit.after_write, timer.after_fire, when
// --crash-points names them), `tarde-dump check` runs, and the next life
// starts on the same directory. At the end `tarde serve` takes the directory over (the
// same format), the drain and the final reads run over the wire as in the
// server's campaign, and the five guarantees are checked against the
// journal. Prints the same progress and summary lines; returns kExit*.
int run_embedded_campaign(const CampaignOptions& options);

}  // namespace tarde::crash
