#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tarde::net {

// Where tarde keeps its data when --data is not given: a directory in the
// current working directory, so that a first `tarde serve` just works.
inline constexpr const char* kDefaultDataDir = "./tarde-data";
inline constexpr const char* kDefaultListen = "127.0.0.1:7400";
inline constexpr const char* kDefaultHttpListen = "127.0.0.1:7401";
// PROTOCOL.md's defaults for --max-connections and --max-payload.
inline constexpr size_t kDefaultMaxConnections = 10'000;
inline constexpr size_t kDefaultMaxPayloadBytes = 1 << 20;

// --retry-lead: longer than a group commit usually takes on a busy disk, so
// that a retry is durable in the ready queue when its instant comes.
inline constexpr int64_t kDefaultRetryLeadMs = 10;
inline constexpr int64_t kMaxRetryLeadMs = 1000;

// --reconcile-every: a pass of the periodic reconciler a minute after the
// previous one ended, so that a stuck transaction is reported within about
// a minute of its queue's stuck_after (docs/design.md "Reconciler").
inline constexpr int64_t kDefaultReconcileEveryMs = 60'000;

// --due-memory: the retry timers held in memory at most (engine/due_timers.h):
// about 28 MB; more, due within a minute, are read back from disk as they
// come due.
inline constexpr size_t kDefaultDueMemoryEntries = 131'072;
inline constexpr size_t kMaxDueMemoryEntries = 100'000'000;

// Everything `tarde serve` can be told on its command line.
struct ServerOptions {
  std::string listen_host = "127.0.0.1";
  uint16_t listen_port = 7400;  // 0: any free port (tests), printed at start
  std::string data_dir = kDefaultDataDir;
  bool sync = true;  // --sync=always (fsync every commit) or none
  size_t max_connections = kDefaultMaxConnections;
  size_t max_payload_bytes = kDefaultMaxPayloadBytes;
  std::string auth_token_file;  // empty: no AUTH required
  // The HTTP listener (--http-listen; --metrics-listen is an alias): the
  // dashboard, the JSON API, /metrics and /healthz. Empty host: off.
  std::string http_host = "127.0.0.1";
  uint16_t http_port = 7401;
  // False while the address is the default: then a port already in use is
  // a warning and tarde serves without HTTP (a second server on one
  // machine, tests), instead of refusing to start.
  bool http_explicit = false;
  std::string log_level = "info";
  // A connection that completes no command for this long is closed, unless it
  // waits in RESERVE or has replies on their way (slow-loris defence). 0: never.
  int64_t idle_timeout_ms = 300'000;
  // A due retry is moved to SENDING (and committed) this long before its due
  // instant; its request is still handed out no earlier than the instant.
  int64_t retry_lead_ms = kDefaultRetryLeadMs;
  bool log_json = false;  // --log-format json: one JSON object per line
  // BACKUP writes its backups here (RocksDB's BackupEngine layout); empty:
  // BACKUP answers ERR NOT_CONFIGURED.
  std::string backup_dir;
  // Bytes per second a backup may copy; 0: as fast as the disks go.
  uint64_t backup_rate_limit_bytes_per_s = 0;
  // A reconciler pass starts this long after the previous one ended. 0: off.
  int64_t reconcile_every_ms = kDefaultReconcileEveryMs;
  size_t due_memory_entries = kDefaultDueMemoryEntries;
  // A commit may wait for clients not waiting for it (GroupCommitter).
  bool commit_wait = true;
  // Time every commit's store write by its parts (storage/write_profile.h).
  bool profile_writes = false;
};

}  // namespace tarde::net
