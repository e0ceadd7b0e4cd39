#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "storage/records.h"

// The rules of a transaction's audit trail (PROTOCOL.md "HISTORY",
// storage/FORMAT.md "History trimming"), as pure functions shared by the
// engine, which writes and reads the trail, and by tools that read a store.
// A transaction keeps its first event and its newest history_max − 1; a
// transition deletes at most one old event, in its own batch. No IO; any
// thread.
namespace tarde::engine {

// The smallest history_max that keeps the first event and the newest one.
// CONFIG refuses less; a smaller stored value is read as this.
inline constexpr uint32_t kHistoryMaxMin = 2;

// The sequence number of the event that the transition writing event `seq`
// deletes in the same batch, or nullopt when it deletes none: with
// history_max H, event seq − H + 1 once that is at least 1, so that event 0
// and the newest H − 1 stay. One key per transition, never a scan.
std::optional<uint64_t> event_trimmed_by(uint64_t seq, uint32_t history_max);

// One event as HISTORY shows it.
struct HistoryEntry {
  uint64_t seq = 0;  // its number in the transaction's life (0: the first)
  // Events of the transaction's life that came right before this one (after
  // the previous entry shown, or from the start) and are not shown: deleted
  // by trimming, or hidden because history_max was lowered. Not counting
  // what a `limit` leaves out.
  uint64_t dropped_before = 0;
  storage::EventRecord event;

  bool operator==(const HistoryEntry&) const = default;
};

// What HISTORY shows of the stored events of one transaction (oldest first,
// with their sequence numbers): the first stored one and the newest
// history_max − 1, each with the count of events missing before it; then,
// when limit is not 0, only the newest `limit` of those.
std::vector<HistoryEntry> select_history(
    std::vector<std::pair<uint64_t, storage::EventRecord>> stored, uint32_t history_max,
    uint64_t limit);

// How late a timer fire took effect: for an event with a due time, fire
// time minus due time, and 0 when the fire came earlier (a retry moved
// ahead by the retry lead is handed out at its instant, not before);
// nullopt for an event that is not a timer fire.
std::optional<int64_t> lateness_ms(const storage::EventRecord& event);

}  // namespace tarde::engine
