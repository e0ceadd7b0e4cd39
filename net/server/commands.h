#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/figures.h"
#include "engine/engine.h"
#include "net/wire/codec.h"

namespace tarde::net {

// What a command handler may use: the engine, the connection it runs for, and
// the server-wide facts STATS and AUTH need. The session owns one per
// connection; handlers run on the engine thread.
struct CommandContext {
  engine::Engine* engine = nullptr;
  uint64_t conn_id = 0;
  bool authenticated = false;
  const std::optional<std::string>* auth_token = nullptr;  // unset: no AUTH needed
  const Figures* figures = nullptr;                        // what STATS shows
  bool backups_enabled = false;                            // --backup-dir was given
  // Advanced by each multi-queue RESERVE: the position in its list it starts
  // at, so that consecutive calls start at each queue in turn (fairness).
  uint64_t reserve_turn = 0;
};

// What a command asks the session to do next.
struct Action {
  enum class Kind {
    kReply,   // send `text` (then close when close_after)
    kWait,    // RESERVE wait=: park until the queue has work or wait_ms passes
    kBackup,  // BACKUP: park until the backup is made (SessionHost::start_backup)
  };
  Kind kind = Kind::kReply;
  std::string text;
  bool close_after = false;
  std::vector<std::string> wait_queues;  // kWait: woken by the first with work
  int64_t wait_ms = 0;
  // kReply of a hand-out: it waits for Core::hand_out_seq, not for all it read.
  bool hand_out = false;
};

// Runs one decoded command: checks its arguments, calls the engine, and
// formats the reply. Every protocol error becomes an `ERR` reply here; storage
// errors become `ERR INTERNAL`. Dispatch is a table from verb to a short
// handler (commands.cc).
Action dispatch(CommandContext& ctx, const Command& command);

// The reply to give when nothing at all is reservable before a RESERVE's wait
// ran out.
std::string empty_reply();

// The REQUEST reply of a hand-out (and the crash point right after one).
std::string hand_out_reply(const engine::HandOut& hand_out);

// Runs RESERVE for a parked connection: a REQUEST reply, or nullopt when the
// queue still has nothing. Storage errors become an `ERR INTERNAL` reply.
std::optional<std::string> try_reserve(CommandContext& ctx, const std::string& queue);

}  // namespace tarde::net
