#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace tarde::crash {

// The --retry-lead every life of the server runs with: a due retry's timer
// event may come this much before the announced instant (its hand-out may
// not), and the fire-time check allows exactly that.
inline constexpr int64_t kRetryLeadMs = 10;

// The --reconcile-every every life of the server runs with: often, so that
// kills land inside reconciler slices (crash point reconcile.after_slice)
// and its repairs are checked like any other change.
inline constexpr int64_t kReconcileEveryMs = 200;

// The --due-memory every life of the server runs with: below a burst
// (campaign.cc's kBurstTransactions), so that bursts overflow the engine's
// memory of due entries and the rest is read back from disk as it comes due.
inline constexpr size_t kDueMemoryEntries = 1000;

// How a server life ended.
struct Death {
  bool killed = false;       // we sent SIGKILL
  bool crash_point = false;  // it exited with the crash-point status by itself
  int raw_status = 0;        // waitpid's status
  std::string describe() const;
};

// ServerControl runs the real `tarde serve` binary on one data directory, one
// life at a time: start (optionally with TARDE_CRASH_AT armed), notice when it
// died, SIGKILL it, and run `tarde-dump <dir> check` while it is stopped. The
// server's stdout and stderr go to a log file beside the data directory. It
// listens on one free port chosen by ServerControl, the same for every life:
// with --log-level warn the server does not log its listening line, so a
// start is complete when the line appears or the port answers PING.
//
// Owned by the campaign's main thread; not thread-safe. The destructor kills
// a server still running.
class ServerControl {
 public:
  ServerControl(std::string server_path, std::string dump_path, std::string data_dir,
                std::string log_path);
  ~ServerControl();
  ServerControl(const ServerControl&) = delete;
  ServerControl& operator=(const ServerControl&) = delete;

  // Starts a life and waits (at most 15 s) for its listening line. With
  // `crash_at` the server gets TARDE_CRASH_AT=<crash_at>. Returns the port, or:
  // aborted when the server died before listening (see last_death()), io_error
  // when it could not be started at all.
  Result<uint16_t> start(const std::optional<std::string>& crash_at);
  // The running server's exit, if it exited since start (reaped), else nullopt.
  std::optional<Death> poll_exit();
  // SIGKILLs the running server and reaps it. The death is `killed` unless it
  // had already exited by itself.
  Death kill_now();
  // Asks for a clean stop (SIGTERM), waiting up to 10 s before SIGKILL.
  Death stop();
  bool running() const { return pid_ > 0; }
  // Runs `tarde-dump <dir> check`; the violation lines it printed (empty:
  // clean). A dump that could not run at all is reported as one line.
  std::vector<std::string> dump_check() const;
  // The end of the server log, for messages about unexpected exits.
  std::string log_tail(size_t bytes) const;
  const std::string& data_dir() const { return data_dir_; }
  const std::string& log_path() const { return log_path_; }

 private:
  Death reap_blocking();

  std::string server_path_;
  std::string dump_path_;
  std::string data_dir_;
  std::string log_path_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;  // chosen once (and again only if it was taken)
  std::optional<Death> last_death_;
};

}  // namespace tarde::crash
