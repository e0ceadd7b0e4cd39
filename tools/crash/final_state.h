#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <string>

#include "base/status.h"
#include "tools/crash/checks.h"
#include "tools/crash/recorder.h"

namespace tarde::crash {

// Sets the campaign queue's CONFIG (workload.h) on the server at `port`.
[[nodiscard]] Status configure_queue(uint16_t port);

// Pipelines `count` delayed ENQUEUEs (delays of 300 ms to 1.5 s) so that more
// due entries than one page of the server's wheel holds are on disk: a
// restart then has to page them in (crash point wheel.after_page). Everything
// is recorded like any producer's work; `*planned` counts the transactions
// it recorded (some may be pending when it fails). `burst` numbers the
// bursts of one campaign, so that each has tx ids of its own.
[[nodiscard]] Status enqueue_burst(uint16_t port, Recorder& recorder, uint64_t seed, uint64_t burst,
                                   uint64_t count, uint64_t* planned);

// The drain's responder: every transaction still IN_FLIGHT gets RESPOND
// SUCCESS (its answer was lost with a connection), while the workload's
// dispatchers answer SUCCESS to every request they reserve. Returns true once
// every transaction is terminal, dead-lettered or was never created, false
// when no transaction settled for `stall_limit` (a backlog that is still
// shrinking, however slowly, is drained to its end). GETs and RESPONDs are
// recorded.
bool drain(uint16_t port, Recorder& recorder, std::chrono::steady_clock::duration stall_limit);

// GET, HISTORY and the dead-letter status of every transaction in `ids`.
// FinalTx::read is false for one that could not be read.
std::map<std::string, FinalTx> read_finals(uint16_t port, const std::vector<std::string>& ids);

}  // namespace tarde::crash
