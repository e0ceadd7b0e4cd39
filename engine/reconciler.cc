#include "engine/reconciler.h"

#include <algorithm>
#include <set>

#include "base/assert.h"
#include "base/crash_point.h"
#include "base/figures.h"
#include "engine/invariants.h"
#include "storage/codec.h"
#include "storage/keys.h"

namespace tarde::engine {
namespace {

using storage::DueKind;
using storage::TxRecord;
using storage::TxState;

// Alerts are counted per minute of steady time.
constexpr int64_t kAlertWindowMs = 60'000;

std::string seconds_text(int64_t ms) {
  return std::to_string(std::max<int64_t>(0, ms) / 1000) + "s";
}

}  // namespace

std::optional<Stuck> judge_stuck(const TxRecord& rec, const storage::QueueConfig& config,
                                 bool leased, int64_t now_ms, int64_t overdue_after_ms) {
  const int64_t stuck_after_ms = config.stuck_after_ms;
  switch (rec.state) {
    case TxState::kInFlight: {
      const int64_t age_ms = now_ms - rec.updated_at_ms;
      if (rec.due_kind == DueKind::kResponseTimeout) {
        const int64_t late_ms = now_ms - rec.due_at_ms;
        if (late_ms <= overdue_after_ms) return std::nullopt;
        return Stuck{rec.state, age_ms,
                     "its response timeout has not fired, " + seconds_text(late_ms) + " late"};
      }
      if (stuck_after_ms <= 0 || age_ms <= stuck_after_ms) return std::nullopt;
      return Stuck{rec.state, age_ms, "no answer, and no response timeout will settle it"};
    }
    case TxState::kSending: {
      if (rec.ready_seq == 0 || leased || config.paused || stuck_after_ms <= 0) return std::nullopt;
      const int64_t age_ms = now_ms - rec.ready_at_ms;
      if (age_ms <= stuck_after_ms) return std::nullopt;
      return Stuck{rec.state, age_ms, "its request is ready but no dispatcher took it"};
    }
    case TxState::kScheduled: {
      if (rec.due_kind != DueKind::kRetry) return std::nullopt;  // a bad record: not ours
      const int64_t late_ms = now_ms - rec.due_at_ms;
      if (late_ms <= overdue_after_ms) return std::nullopt;
      return Stuck{rec.state, late_ms, "its retry timer has not fired"};
    }
    case TxState::kNone:
    case TxState::kSucceeded:
    case TxState::kFailed:
      break;
  }
  return std::nullopt;
}

Reconciler::Reconciler(Engine& engine, storage::Store& store, Clock& clock, Options options)
    : engine_(engine), store_(store), clock_(clock), options_(options) {
  TARDE_ASSERT(options_.keys_per_slice >= 1);
  TARDE_ASSERT(options_.tracked_max >= 1);
}

Status Reconciler::slice(SliceReport* report) {
  *report = SliceReport{};
  if (!in_pass_) {
    in_pass_ = true;
    cursor_.reset();
    pass_ += 1;
    pass_started_ms_ = clock_.now_steady_ms();
    pass_examined_ = 0;
  }
  std::vector<TxRecord> records;
  const std::optional<std::string> started_at = cursor_;
  bool at_end = false;
  TARDE_RETURN_IF_ERROR(read_slice(&records, &at_end));
  // Index entries first, on disk; memory is compared with the repaired store.
  std::vector<Violation> violations;
  Status checked = check_records(store_, records, &violations);
  std::erase_if(violations,
                [](const Violation& v) { return v.kind == Violation::Kind::kBadRecord; });
  if (checked.is_ok() && !violations.empty())
    checked = engine_.repair(violations, &report->repairs);
  if (!checked.is_ok()) {
    cursor_ = started_at;  // the next slice reads these again
    return checked;
  }
  for (const TxRecord& rec : records) {
    const Engine::MemoryCheck memory = engine_.check_memory(rec, &report->repairs);
    examine(rec, memory.leased, report);
  }
  report->examined = records.size();
  examined_ += records.size();
  pass_examined_ += records.size();
  repairs_ += report->repairs.size();
  roll_alert_window(report);
  if (at_end) {
    finish_pass();
    report->pass_done = true;
  }
  TARDE_CRASH_POINT("reconcile.after_slice");
  return Status::ok();
}

// Reads the next transactions of the pass into `records` and moves the
// cursor past them; an undecodable record is passed over (the start-up
// sweep and `tarde-dump check` name it).
Status Reconciler::read_slice(std::vector<TxRecord>* records, bool* at_end) {
  const int64_t started_ms = clock_.now_steady_ms();
  const std::string lower = cursor_ ? storage::key_after(*cursor_) : std::string();
  size_t read = 0;
  std::string last;
  *at_end = true;
  Status status = store_.kv().scan(
      storage::Cf::kTx, lower, {}, [&](std::string_view key, std::string_view value) {
        const bool over_time = clock_.now_steady_ms() - started_ms >= options_.slice_budget_ms;
        if (read >= options_.keys_per_slice || (read > 0 && over_time)) {
          *at_end = false;
          return false;
        }
        read += 1;
        last.assign(key);
        auto rec = storage::decode_tx(value);
        if (rec.is_ok()) records->push_back(std::move(rec.value()));
        return true;
      });
  TARDE_RETURN_IF_ERROR(status);
  if (read > 0) cursor_ = std::move(last);
  return Status::ok();
}

void Reconciler::examine(const TxRecord& rec, bool leased, SliceReport* report) {
  const std::optional<Stuck> stuck = judge_stuck(rec, engine_.config(rec.queue), leased,
                                                 clock_.now_wall_ms(), options_.overdue_after_ms);
  auto it = tracked_.find(rec.tx_id);
  if (!stuck) {
    if (it != tracked_.end()) forget(it);
    return;
  }
  const Group group{rec.queue, stuck->state};
  if (it != tracked_.end()) {
    if (it->second.group == group && it->second.updated_at_ms == rec.updated_at_ms) {
      it->second.pass = pass_;  // still the same stuck transaction: told once
      return;
    }
    forget(it);  // it moved since, and is stuck again
  }
  if (tracked_.size() >= options_.tracked_max) {
    untracked_counting_[group] += 1;
    unlogged_in_window_ += 1;
    return;
  }
  tracked_.emplace(rec.tx_id, Tracked{group, rec.updated_at_ms, pass_});
  tracked_counts_[group] += 1;
  alert(rec, *stuck, report);
}

void Reconciler::forget(std::unordered_map<std::string, Tracked>::iterator it) {
  uint64_t& count = tracked_counts_[it->second.group];
  if (count > 0) count -= 1;
  tracked_.erase(it);
}

void Reconciler::alert(const TxRecord& rec, const Stuck& stuck, SliceReport* report) {
  roll_alert_window(report);
  if (alerts_in_window_ >= options_.alerts_per_minute) {
    unlogged_in_window_ += 1;
    return;
  }
  alerts_in_window_ += 1;
  report->alerts.push_back("transaction " + rec.tx_id + " of queue " + rec.queue + " is stuck in " +
                           storage::to_string(stuck.state) + " for " + seconds_text(stuck.age_ms) +
                           ": " + stuck.why);
}

// A new minute: the summary of the one that ended, if it left some untold.
void Reconciler::roll_alert_window(SliceReport* report) {
  const int64_t now_ms = clock_.now_steady_ms();
  if (now_ms - alert_window_ms_ < kAlertWindowMs) return;
  if (unlogged_in_window_ > 0) {
    report->alerts.push_back(std::to_string(unlogged_in_window_) +
                             " more transactions were found stuck in the last minute and not " +
                             "logged one by one (see stuck_transactions)");
  }
  alert_window_ms_ = now_ms;
  alerts_in_window_ = 0;
  unlogged_in_window_ = 0;
}

void Reconciler::finish_pass() {
  // Tracked transactions the pass did not find stuck again are gone.
  for (auto it = tracked_.begin(); it != tracked_.end();) {
    auto next = std::next(it);
    if (it->second.pass != pass_) forget(it);
    it = next;
  }
  untracked_shown_ = std::move(untracked_counting_);
  untracked_counting_.clear();
  in_pass_ = false;
  passes_ += 1;
  last_pass_ms_ = clock_.now_steady_ms() - pass_started_ms_;
  last_pass_examined_ = pass_examined_;
}

void Reconciler::on_transition(const TransitionNote& note) {
  if (tracked_.empty()) return;
  auto it = tracked_.find(note.after->tx_id);
  if (it != tracked_.end()) forget(it);
}

uint64_t Reconciler::stuck(const std::string& queue, TxState state) const {
  const Group group{queue, state};
  uint64_t n = 0;
  if (auto it = tracked_counts_.find(group); it != tracked_counts_.end()) n += it->second;
  if (auto it = untracked_shown_.find(group); it != untracked_shown_.end()) n += it->second;
  return n;
}

void Reconciler::declare_figures(Figures& figures) {
  figures.sampled(
      {.name = "stuck_transactions",
       .help = "Transactions stuck in an intermediate state, by queue and state, as "
               "the periodic reconciler found them.",
       .labels = {"queue", "state"},
       .stats_name = "stuck",
       .stats_each = "stuck.{}"},
      [this](FigureSamples& out) {
        std::set<Group> groups;
        for (const auto& [group, n] : tracked_counts_) groups.insert(group);
        for (const auto& [group, n] : untracked_shown_) groups.insert(group);
        uint64_t total = 0;
        for (const Group& group : groups) {
          const uint64_t n = stuck(group.first, group.second);
          total += n;
          out.add({group.first, storage::to_string(group.second)}, static_cast<double>(n));
        }
        out.total(static_cast<double>(total));
      });
  figures.sampled({.name = "reconcile_passes_total",
                   .kind = FigureKind::kCounter,
                   .help = "Passes of the periodic reconciler over the whole store.",
                   .stats_name = "reconcile_passes"},
                  [this](FigureSamples& out) { out.total(static_cast<double>(passes_)); });
  figures.sampled({.name = "reconcile_examined_total",
                   .kind = FigureKind::kCounter,
                   .help = "Transactions the periodic reconciler examined.",
                   .stats_name = "reconcile_examined"},
                  [this](FigureSamples& out) { out.total(static_cast<double>(examined_)); });
  figures.sampled({.name = "reconcile_repairs_total",
                   .kind = FigureKind::kCounter,
                   .help = "Lost index entries and forgotten timers or requests the periodic "
                           "reconciler repaired.",
                   .stats_name = "reconcile_repairs"},
                  [this](FigureSamples& out) { out.total(static_cast<double>(repairs_)); });
  figures.sampled({.name = "reconcile_last_pass_seconds",
                   .help = "How long the last complete reconciler pass took.",
                   .stats_name = "reconcile_last_pass_seconds"},
                  [this](FigureSamples& out) { out.total(last_pass_ms_ / 1000.0); });
  figures.sampled(
      {.name = "reconcile_last_pass_examined",
       .help = "Transactions the last complete reconciler pass examined.",
       .stats_name = "reconcile_last_pass_examined"},
      [this](FigureSamples& out) { out.total(static_cast<double>(last_pass_examined_)); });
}

}  // namespace tarde::engine
