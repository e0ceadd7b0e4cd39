#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "clients/cpp/client.h"
#include "tools/crash/recorder.h"

namespace tarde::crash {

// One transaction as the server shows it after the drain: GET, HISTORY and
// whether its queue's DEADLETTERS lists it.
struct FinalTx {
  bool read = false;   // GET and HISTORY both answered
  bool found = false;  // GET did not answer NOT_FOUND
  client::TxInfo info;
  std::vector<client::TxEvent> history;
  bool dead_lettered = false;
};

// A broken guarantee: which one ("G1".."G5", "DUMP", "SERVER"), the
// transaction (may be empty) and what was seen.
struct Violation {
  std::string guarantee;
  std::string tx_id;
  std::string text;
};

// The outcome of the final checks.
struct CheckReport {
  uint64_t checks = 0;              // individual assertions evaluated
  uint64_t late_messages = 0;       // deliberate late or duplicate messages answered
  uint64_t late_refused_stale = 0;  // ... of which the server answered STALE
  std::vector<Violation> violations;
};

// Checks the five guarantees of docs/design.md for every transaction, from what the
// clients saw (`logs`) and what the server shows at the end (`finals`).
// Pure: no IO. Requires: no client records anymore.
CheckReport check_guarantees(const std::map<std::string, TxLog>& logs,
                             const std::map<std::string, FinalTx>& finals);

namespace detail {

// The per-guarantee checks, split so that each stays readable. Each appends
// its violations to `report` and counts its checks.
void check_kept(const std::string& id, const TxLog& log, const FinalTx& final, CheckReport& report);
void check_attempts(const std::string& id, const TxLog& log, const FinalTx& final,
                    CheckReport& report);
void check_fire_times(const std::string& id, const TxLog& log, const FinalTx& final,
                      CheckReport& report);
void check_stale(const std::string& id, const TxLog& log, CheckReport& report);
void check_history_rows(const std::string& id, const FinalTx& final, CheckReport& report);
void check_settled(const std::string& id, const TxLog& log, const FinalTx& final,
                   CheckReport& report);
std::string describe(const Op& op);

// SUCCEEDED and FAILED end a transaction.
inline bool is_terminal(const std::string& state) {
  return state == "SUCCEEDED" || state == "FAILED";
}

// Records that transaction `id` broke `guarantee` ("G1" ... "G5"), and how.
inline void add_violation(CheckReport& report, const char* guarantee, const std::string& id,
                          std::string text) {
  report.violations.push_back(Violation{guarantee, id, std::move(text)});
}

}  // namespace detail
}  // namespace tarde::crash
