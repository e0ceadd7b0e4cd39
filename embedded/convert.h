#pragma once

#include "engine/engine.h"
#include "storage/records.h"
#include "tarde/types.h"

namespace tarde::embedded {

// Conversions between the engine's records and the public values of
// tarde/types.h, so that no public header names engine or storage types.
// Pure functions; any thread.
TxState to_public(storage::TxState state);
storage::TxState to_storage(TxState state);
engine::Answer to_engine(Answer answer);
Summary to_public(const engine::TxReply& reply);
Request to_public(const std::string& queue, const engine::HandOut& hand_out);
Transaction to_public(const storage::TxRecord& record);
Event to_public(const engine::HistoryEntry& entry);
Letter to_public(const storage::DeadLetter& letter);

}  // namespace tarde::embedded
