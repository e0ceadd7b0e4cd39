#pragma once

#include <cstdint>
#include <string>

namespace tarde::crash_embedded {

// Journal is the embedding program's record of what its calls saw, for the
// harness to read after the program was killed (tools/crash/journal_reader.h
// reads it). One line per record, tab-separated, each written with a single
// write() to a file opened O_APPEND: a kill -9 loses at most the line being
// written, never one that was written (the kernel has it). Lines:
//
//   P tx queue max_attempts sent delay_ms payload          a transaction planned
//   B op kind tx attempt word deliberate client send_us    a call begins
//   E op R recv_us <summary line as the protocol writes it> it answered
//   E op E recv_us message                                 it failed (not acknowledged)
//   H tx attempt deliveries key client reserve_send_us recv_us payload   a hand-out
//
// Thread-safe: every append is one system call.
class Journal {
 public:
  // Opens (creating) `path` for appending; aborts the program when it cannot.
  explicit Journal(const std::string& path);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Appends one line made of `fields` joined by tabs.
  void append(std::initializer_list<std::string> fields);

 private:
  int fd_ = -1;
};

// Wall-clock microseconds since the epoch (the harness and the engine use
// the same clock).
int64_t wall_us();

}  // namespace tarde::crash_embedded
