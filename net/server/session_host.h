#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/figures.h"
#include "engine/engine.h"
#include "net/server/client_activity.h"
#include "net/server/read_readiness.h"
#include "net/server/send_queue.h"
#include "net/wire/codec.h"

namespace tarde::net {

class Session;

// SessionHost is all a Session sees of the server that owns it: the shared
// engine, decoder and figures, the commit sequence its replies wait for, and
// the notices of a session's life (a command ran, it parks in RESERVE, it
// closed). The Server implements it; keeping it narrow keeps session.cc from
// depending on the rest of the server. io thread only.
class SessionHost {
 public:
  virtual engine::Engine& engine() = 0;
  virtual const Decoder& decoder() const = 0;
  virtual const Figures& figures() const = 0;
  virtual const std::optional<std::string>& auth_token() const = 0;
  virtual bool shutting_down() const = 0;
  virtual bool backups_enabled() const = 0;
  // Where the session learns that its socket has input.
  virtual ReadReadiness& read_readiness() = 0;
  // Where the session's output waits for the end of the io thread's turn.
  virtual SendQueue& send_queue() = 0;

  // A command of the connection of `activity` came at `at` and is about to
  // run: count it, and start watching which staged commit its reply reads
  // (observed_seq() after it ran).
  virtual void begin_command(ClientActivity::Mark& activity,
                             std::chrono::steady_clock::time_point at) = 0;
  virtual uint64_t observed_seq() const = 0;
  // What the reply of a hand-out waits for (Core::hand_out_seq).
  virtual uint64_t hand_out_seq() const = 0;
  virtual uint64_t committed_seq() const = 0;
  // After a session ran commands: commit what they staged, re-arm the timer.
  virtual void after_commands() = 0;
  // The session has replies waiting for a commit, the first for group
  // `dep`: tell it when one finishes.
  virtual void wait_for_commit(const std::shared_ptr<Session>& session, uint64_t dep) = 0;
  // A RESERVE with wait=: hand the session the queue's next request.
  virtual void park(const std::shared_ptr<Session>& session, const std::string& queue) = 0;
  // BACKUP: starts a backup whose reply goes to session->unpark() once it is
  // made (or failed). An error reply when it cannot start (busy, stopping).
  virtual std::optional<std::string> start_backup(const std::shared_ptr<Session>& session) = 0;
  virtual void session_closed(Session* session) = 0;

 protected:
  ~SessionHost() = default;
};

}  // namespace tarde::net
