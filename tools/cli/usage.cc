// The help texts of tarde-cli, kept apart from the parsing so that each reads
// as the documentation it is. The flags' lines of --help come from their
// definitions (args.cc), between usage_head() and usage_tail().
#include "tools/cli/cli.h"

namespace tarde::cli {

const char* usage_head() {
  return R"(tarde-cli - talk to a tarde server

Usage:
  tarde-cli [global flags] <command> [arguments] [flags]
  tarde-cli [global flags] [shell]          interactive mode (the default)

Commands:
  enqueue QUEUE TX [--payload TEXT | --payload-file F] [--max-attempts N]
          [--base DUR] [--factor F] [--cap DUR] [--jitter F] [--strict-cap]
          [--deadline DUR] [--sent] [--delay DUR]
                     create a transaction (the payload defaults to empty)
  reserve QUEUE[,QUEUE...] [--wait DUR]
                     take a request to send; EMPTY when none is ready in time.
                     With several queues, from whichever has one.
                     The lease belongs to the connection: when tarde-cli exits,
                     the request counts a failed delivery and is ready again
                     (RESPOND and SENT still work); use the shell to keep it.
  touch TX N         extend the lease held on attempt N (shell only: the lease
                     belongs to the connection)
  sent TX N          attempt N's request went out
  release TX N [--delay DUR] [--reason R]
                     give a reserved request back
  respond TX N SUCCESS|CANCELLED|TRANSIENT|REJECTED [--reason R] [--retry-after DUR]
                     report the external service's answer to attempt N
  resolve TX SUCCEEDED|FAILED [--reason R]
                     settle a waiting transaction by other means
  get TX [--show-payload]
                     show a transaction (and its payload)
  history TX [--limit N]
                     show its transitions, oldest first, as a table
  deadletters QUEUE [--limit N] [--show-payload]
                     list the queue's dead letters (and their payloads)
  list QUEUE STATE [--limit N] [--after CURSOR] [--prefix P] [--reason R]
                     one page of the queue's transactions in STATE (ready,
                     leased, in_flight, scheduled, succeeded, failed, dead);
                     the last line gives the cursor of the next page
  redrive QUEUE TX   make a dead letter's request ready again
  redrive-all QUEUE [--prefix P] [--last-error R] [--limit N]
                     redrive the matching dead letters (at most 100 unless
                     --limit says otherwise, up to 10000); prints how many
  resolve-all QUEUE SUCCEEDED|FAILED [--prefix P] [--last-error R] [--reason R]
          [--limit N]
                     end the matching dead letters' transactions
  pause QUEUE        stop the queue handing out requests (persisted)
  resume QUEUE       let it hand out requests again
  config QUEUE [name=value ...]
                     show a queue's settings, or set some and show them all
                     (max_attempts base factor cap jitter strict_cap
                     transient_base transient_factor transient_cap
                     max_transient lease max_deliveries rate response_timeout
                     breaker retention history_max stuck_after; paused is
                     shown, and set by pause and resume)
  stats              server figures
  ping               check the server answers
  backup             make a backup into the server's --backup-dir and wait
                     until it is made and verified (raise --timeout for a
                     large store)
  shell              interactive mode (see below)
)";
}

const char* usage_tail() {
  return R"(Forms: QUEUE is 1-64 of A-Z a-z 0-9 _ . -; TX is 1-200 printable bytes
without spaces; N is an attempt, 1-1000; DUR is a whole number with unit
ms, s, m, h or d (1500ms, 2h; no unit means ms); F is a decimal (1.6);
R is a reason, 1-200 printable bytes without spaces. Answers and states
may be given in lower case. After a lone --, every word is an argument, even
one that starts with - (tarde-cli get -- --odd-id).

Output: summaries, records and settings as labelled lists, HISTORY and
DEADLETTERS and LIST as aligned tables. Times are shown in UTC ISO-8601, relative to
now ("in 1h59m", "3s ago") and as the raw milliseconds since the epoch.

Interactive mode: a `tarde> ` prompt reads one line at a time:
  - the commands above without the leading tarde-cli (`get TX-1`,
    `reserve q --wait 2s`);
  - `enqueue QUEUE TX [flags] payload text...`: everything after the flags
    is the payload;
  - raw protocol lines (`RESPOND TX-1 1 SUCCESS`); a raw `ENQUEUE ... <bytes>`
    line is followed by that many payload bytes and a line end;
  - `help`; `quit` or `exit` (or end of input) leaves.

Exit status:
  0  the server answered (OK, CREATED, EXISTS, BURIED, REQUEST, EMPTY, TX,
     EVENTS, LETTERS, ITEMS, CONFIG, STATS, PONG, BACKUP, PAUSED, RESUMED,
     REDRIVEN, RESOLVED)
  1  NOT_FOUND, STALE or CONFLICT (explained on stderr)
  2  usage error: the command line is wrong (explained on stderr)
  3  ERR reply, or no connection / timeout (explained on stderr)

Examples:
  tarde-cli enqueue payments TX-1 --payload '{"amount":5}' --base 10m
  tarde-cli reserve payments --wait 30s
  tarde-cli respond TX-1 1 CANCELLED --reason not_now
  tarde-cli history TX-1
  tarde-cli --raw get TX-1
)";
}

std::string shell_help_text() {
  return R"(Commands (as in tarde-cli --help, without the leading tarde-cli):
  enqueue QUEUE TX [--max-attempts N --base DUR ...] payload text...
  reserve QUEUE[,QUEUE...] [--wait DUR]    sent TX N    touch TX N
  release TX N [--delay DUR] [--reason R]
  respond TX N SUCCESS|CANCELLED|TRANSIENT|REJECTED [--reason R] [--retry-after DUR]
  resolve TX SUCCEEDED|FAILED [--reason R]
  get TX [--show-payload]    history TX [--limit N]
  deadletters QUEUE [--limit N] [--show-payload]    redrive QUEUE TX
  list QUEUE STATE [--limit N] [--after CURSOR] [--prefix P] [--reason R]
  redrive-all QUEUE [--prefix P] [--last-error R] [--limit N]
  resolve-all QUEUE SUCCEEDED|FAILED [--prefix P] [--last-error R] [--reason R] [--limit N]
  pause QUEUE    resume QUEUE    config QUEUE [name=value ...]    stats    ping
  backup
Raw protocol lines are sent as typed (RESPOND TX 1 SUCCESS); after a raw
ENQUEUE ... <bytes> line, type the payload bytes and a line end.
help shows this; quit or exit leaves.
)";
}

}  // namespace tarde::cli
