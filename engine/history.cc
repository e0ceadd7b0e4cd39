#include "engine/history.h"

#include <algorithm>

namespace tarde::engine {

std::optional<uint64_t> event_trimmed_by(uint64_t seq, uint32_t history_max) {
  const uint64_t kept = std::max(history_max, kHistoryMaxMin);
  if (seq < kept) return std::nullopt;
  return seq - kept + 1;
}

std::vector<HistoryEntry> select_history(
    std::vector<std::pair<uint64_t, storage::EventRecord>> stored, uint32_t history_max,
    uint64_t limit) {
  const uint64_t kept = std::max(history_max, kHistoryMaxMin);
  // The first stored event, then the newest kept − 1 of the rest.
  const size_t skip_from = stored.size() > kept ? 1 : stored.size();
  const size_t skip_to = stored.size() > kept ? stored.size() - (kept - 1) : stored.size();
  std::vector<HistoryEntry> shown;
  shown.reserve(stored.size() - (skip_to - skip_from));
  uint64_t next_seq = 0;  // the sequence number right after the previous entry shown
  for (size_t i = 0; i < stored.size(); ++i) {
    if (i >= skip_from && i < skip_to) continue;
    auto& [seq, event] = stored[i];
    // Stored sequence numbers only grow (the events column family's key
    // order), so the count cannot wrap.
    const uint64_t dropped = seq >= next_seq ? seq - next_seq : 0;
    shown.push_back(HistoryEntry{seq, dropped, std::move(event)});
    next_seq = seq + 1;
  }
  if (limit != 0 && shown.size() > limit) {
    shown.erase(shown.begin(), shown.end() - static_cast<std::ptrdiff_t>(limit));
  }
  return shown;
}

std::optional<int64_t> lateness_ms(const storage::EventRecord& event) {
  if (event.due_at_ms == 0) return std::nullopt;
  return std::max<int64_t>(0, event.at_ms - event.due_at_ms);
}

}  // namespace tarde::engine
