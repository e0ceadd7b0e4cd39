#include "engine/engine.h"

#include <algorithm>

#include "base/assert.h"
#include "storage/keys.h"

namespace tarde::engine {

using storage::DueKind;
using storage::TxRecord;
using storage::TxState;

namespace {

TxReply not_found(std::string_view tx_id) {
  TxReply reply;
  reply.outcome = Outcome::kNotFound;
  reply.summary.tx_id = std::string(tx_id);
  return reply;
}

storage::DeadLetter letter_of(const TxRecord& rec, int64_t now_ms) {
  storage::DeadLetter letter;
  letter.queue = rec.queue;
  letter.tx_id = rec.tx_id;
  letter.attempt = rec.next_attempt;
  letter.deliveries = rec.deliveries;
  letter.buried_at_ms = now_ms;
  letter.payload = rec.payload;
  letter.failures = rec.failures;
  return letter;
}

// Which index entries a transition moves: derived from the two records, so
// that the batch and the memory update agree by construction.
struct IndexChanges {
  bool due = false;    // the timer changed (kind or instant)
  bool ready = false;  // the ready entry changed (instant or sequence)
  bool was_dead = false;
};

IndexChanges changes_between(const TxRecord* before, const TxRecord& after) {
  IndexChanges c;
  c.due = !before || before->due_kind != after.due_kind || before->due_at_ms != after.due_at_ms;
  c.ready =
      !before || before->ready_seq != after.ready_seq || before->ready_at_ms != after.ready_at_ms;
  c.was_dead = before && before->dead_lettered;
  return c;
}

uint32_t due_attempt(const TxRecord& rec) {
  return rec.due_kind == DueKind::kRetry ? rec.next_attempt : rec.attempt;
}

// The record holds its first event and its newest; the newest it held until
// now moves to `events`, unless this very event trims it. The first event
// and the newest history_max − 1 stay: one delete at most (storage/FORMAT.md,
// "History trimming"). `after` is the record before its events count grows.
void hold_event(TxRecord& after, storage::EventRecord event, uint32_t history_max,
                storage::Batch& batch) {
  const uint64_t seq = after.events;
  const std::optional<uint64_t> trimmed = event_trimmed_by(seq, history_max);
  if (seq == 0) {
    after.first_event = std::move(event);
    return;
  }
  // A record written by an older build holds no newest event: its events
  // are all in `events`, where the trimmed one is deleted.
  const bool held_trimmed = after.newest_event && trimmed == seq - 1;
  if (after.newest_event && !held_trimmed)
    batch.put_event(after.tx_id, seq - 1, *after.newest_event);
  if (trimmed && !held_trimmed) batch.delete_event(after.tx_id, *trimmed);
  after.newest_event = std::move(event);
}

// A count for people: a change-only count may dip below zero while counting.
uint64_t non_negative(int64_t n) { return n < 0 ? 0 : static_cast<uint64_t>(n); }

}  // namespace

Engine::Engine(storage::Store& store, Clock& clock, Random& random, Options options)
    : store_(store),
      clock_(clock),
      random_(random),
      options_(options),
      due_(store, options.due),
      memory_timers_(clock.now_wall_ms()) {}

Engine::QueueState& Engine::queue_state(std::string_view queue) {
  auto it = queues_.find(queue);
  if (it != queues_.end()) return it->second;
  const std::string name(queue);
  QueueState& state = queues_.try_emplace(name, name, options_.ready).first->second;
  state.bucket.configure(state.config.rate, clock_.now_wall_ms());
  return state;
}

void Engine::count_stale(std::string_view kind) {
  stale_ += 1;
  stale_by_kind_[std::string(kind)] += 1;
}

void Engine::report_breaker(const std::string& queue, QueueState& state) {
  const Breaker::State now_state = state.breaker.state(clock_.now_wall_ms());
  if (now_state == state.reported_breaker) return;
  state.reported_breaker = now_state;
  if (breaker_listener_) breaker_listener_(queue, now_state);
}

RowContext Engine::row_context(const storage::QueueConfig& config) {
  return RowContext{clock_.now_wall_ms(), &config, &random_, next_ready_seq_++};
}

// A transaction's summary as clients see it (shown_next_fire_at_ms).
Summary Engine::summary(const TxRecord& rec) const { return summary(rec, clock_.now_wall_ms()); }

Summary Engine::summary(const TxRecord& rec, int64_t now_ms) const {
  return Summary{rec.tx_id, rec.state, rec.attempt, rec.next_attempt,
                 shown_next_fire_at_ms(rec, now_ms)};
}

Result<TxReply> Engine::apply_decision(const TxRecord& before, Decision decision, const char* cause,
                                       const RowContext& ctx) {
  switch (decision.verdict) {
    case Verdict::kStale:
      count_stale(cause);
      return TxReply{Outcome::kStale, summary(before, ctx.now_ms)};
    case Verdict::kConflict:
      return TxReply{Outcome::kConflict, summary(before, ctx.now_ms)};
    case Verdict::kApplied:
    case Verdict::kBuried:
      break;
  }
  TARDE_RETURN_IF_ERROR(persist(ctx.now_ms, &before, decision.after, cause, decision.reason,
                                decision.answer, decision.due_at_ms));
  const Outcome outcome = decision.verdict == Verdict::kBuried ? Outcome::kBuried : Outcome::kOk;
  return TxReply{outcome, summary(decision.after, ctx.now_ms)};
}

// Writes `after` with every index entry it owns that `before` did not (and
// deletes those it no longer owns) plus its audit event, as one batch.
Status Engine::persist(int64_t now_ms, const TxRecord* before, TxRecord& after, const char* cause,
                       std::string_view reason, std::optional<Answer> answer, int64_t due_at_ms) {
  after.updated_at_ms = now_ms;
  storage::Batch batch = store_.batch();
  storage::EventRecord event{now_ms,
                             before ? before->state : TxState::kNone,
                             after.state,
                             after.attempt,
                             after.next_attempt,
                             cause,
                             std::string(reason),
                             due_at_ms};
  QueueState& queue = queue_state(after.queue);
  hold_event(after, std::move(event), queue.config.history_max, batch);
  after.events += 1;
  batch.put_tx(after);
  // A ready seq at or above the reservation is about to be written (or was
  // drawn): reserve the next block in the same batch.
  const bool reserve_seqs = next_ready_seq_ > ready_seq_reserved_;
  const uint64_t reserved = next_ready_seq_ + kReadySeqBlock;
  if (reserve_seqs) batch.put_ready_seq_reserved(reserved);

  const IndexChanges changed = changes_between(before, after);
  if (changed.due && before && before->due_kind != DueKind::kNone) {
    batch.delete_due(before->due_at_ms, after.tx_id);
  }
  if (changed.due && after.due_kind != DueKind::kNone) {
    batch.put_due({after.due_at_ms, after.tx_id, after.due_kind, due_attempt(after)});
  }
  if (changed.ready && before && before->ready_seq != 0) {
    batch.delete_ready(before->queue, before->ready_at_ms, before->ready_seq);
  }
  // A request put below its queue's ready floor (a retry overdue since
  // before a restart) lowers the floor in the same batch.
  std::optional<ReadyQueue::Key> lowered_floor;
  if (changed.ready && after.ready_seq != 0) {
    batch.put_ready(
        {after.queue, after.ready_at_ms, after.ready_seq, after.tx_id, after.next_attempt});
    const ReadyQueue::Key key{after.ready_at_ms, after.ready_seq};
    if (queue.floor_on_disk && key < *queue.floor_on_disk) {
      lowered_floor = key;
      batch.put_ready_floor(after.queue, {key.first, key.second});
    }
  }
  if (changed.was_dead && !after.dead_lettered) batch.delete_dead(after.queue, after.tx_id);
  if (!changed.was_dead && after.dead_lettered) batch.put_dead(letter_of(after, now_ms));
  // The state index: its key, if the transaction has one (a SENDING
  // request is indexed by its ready entry), moves only when the filed state
  // does.
  const std::optional<storage::IndexedState> filed = storage::filed_state(after);
  const std::optional<storage::IndexedState> was =
      before ? storage::filed_state(*before) : std::nullopt;
  if (was != filed || (before && before->queue != after.queue)) {
    if (was) batch.delete_state(before->queue, *was, after.tx_id);
    if (filed) batch.put_state(after.queue, *filed, after.tx_id);
  }

  // The retry's due entry leaves the disk with this batch, not before: a
  // crash that loses the batch leaves the retry to fire again.
  if (firing_retry_) batch.mark_replayed();
  TARDE_RETURN_IF_ERROR(store_.write(std::move(batch)));
  if (reserve_seqs) ready_seq_reserved_ = reserved;
  if (lowered_floor) queue.floor_on_disk = lowered_floor;
  apply_memory(before, after);
  if (transition_listener_) {
    transition_listener_(TransitionNote{before, &after, cause, reason, answer});
  }
  return Status::ok();
}

// Brings memory in line with a record that was just written.
void Engine::apply_memory(const TxRecord* before, const TxRecord& after) {
  if (before) by_state_[static_cast<size_t>(before->state)] -= 1;
  by_state_[static_cast<size_t>(after.state)] += 1;

  const IndexChanges changed = changes_between(before, after);
  if (changed.due) {
    if (before && before->due_kind != DueKind::kNone) {
      due_.on_delete(before->due_at_ms, after.tx_id);
    }
    if (after.due_kind != DueKind::kNone) {
      due_.on_put({after.due_at_ms, after.tx_id, after.due_kind, due_attempt(after)});
    }
  }

  QueueState& queue = queue_state(after.queue);
  if (before) queue.in_flight -= before->state == TxState::kInFlight ? 1 : 0;
  if (before) queue.scheduled -= before->state == TxState::kScheduled ? 1 : 0;
  queue.in_flight += after.state == TxState::kInFlight ? 1 : 0;
  queue.scheduled += after.state == TxState::kScheduled ? 1 : 0;
  if (changed.ready && before && before->ready_seq != 0) {
    queue.ready.on_erase({before->ready_at_ms, before->ready_seq});
    queue.owned_ready -= 1;
    drop_lease(after.tx_id);
  }
  if (changed.ready && after.ready_seq != 0) {
    queue.ready.on_put({after.ready_at_ms, after.ready_seq}, {after.tx_id, after.next_attempt});
    queue.owned_ready += 1;
    notify_ready(after.queue, after.ready_at_ms);
  }
  if (changed.was_dead && !after.dead_lettered) queue.dead -= 1;
  if (!changed.was_dead && after.dead_lettered) queue.dead += 1;
}

void Engine::drop_lease(std::string_view tx_id) {
  auto it = leases_.find(tx_id);
  if (it == leases_.end()) return;
  Lease& lease = it->second;
  memory_timers_.cancel(lease.timer);
  QueueState& queue = queue_state(lease.queue);
  queue.leased -= 1;
  queue.leased_keys.erase(lease.ready_key);
  queue.leased_ids.erase(tx_id);
  unlink_lease(lease);
  leases_.erase(it);
}

void Engine::link_lease(Lease& lease) {
  ConnLeases& list = leases_by_conn_[lease.conn];
  lease.conn_next = list.first;
  if (list.first) list.first->conn_prev = &lease;
  list.first = &lease;
}

void Engine::unlink_lease(Lease& lease) {
  auto found = leases_by_conn_.find(lease.conn);
  if (found == leases_by_conn_.end()) return;
  ConnLeases& list = found->second;
  // Not in the list: detached when its connection closed (connection_closed).
  if (lease.conn_prev == nullptr && list.first != &lease) return;
  (lease.conn_prev ? lease.conn_prev->conn_next : list.first) = lease.conn_next;
  if (lease.conn_next) lease.conn_next->conn_prev = lease.conn_prev;
  lease.conn_prev = nullptr;
  lease.conn_next = nullptr;
}

void Engine::notify_ready(const std::string& queue, int64_t ready_at_ms) {
  if (ready_at_ms <= clock_.now_wall_ms()) {
    if (ready_listener_) ready_listener_(queue);
    return;
  }
  // One wake per queue and instant: a burst of retries fired early for the
  // same instant arms one timer, not one each.
  arm_wake(queue_state(queue), queue, ready_at_ms);
}

Result<TxReply> Engine::enqueue(const EnqueueArgs& args) {
  auto existing = store_.get_tx(args.tx_id);
  if (!existing.is_ok()) return existing.status();
  if (existing.value()) return TxReply{Outcome::kExists, summary(*existing.value())};
  const storage::QueueConfig& config = queue_state(args.queue).config;
  const std::string problem = validate_enqueue(args, config);
  if (!problem.empty()) return Status::invalid_argument(problem);
  const RowContext ctx = row_context(config);
  TxRecord rec = create_record(args, ctx);
  TARDE_RETURN_IF_ERROR(persist(ctx.now_ms, nullptr, rec, "ENQUEUE", {}));
  return TxReply{Outcome::kCreated, summary(rec, ctx.now_ms)};
}

Result<std::optional<HandOut>> Engine::reserve(std::string_view queue_name, uint64_t conn) {
  QueueState& queue = queue_state(queue_name);
  if (queue.config.paused) return std::optional<HandOut>();  // RESUME wakes the waiters
  const int64_t now_ms = clock_.now_wall_ms();
  while (true) {
    if (queue.ready.pops() - queue.pops_at_floor >= kReadyFloorEvery) {
      TARDE_RETURN_IF_ERROR(raise_ready_floor(std::string(queue_name), queue));
    }
    auto front = queue.ready.front(store_);
    if (!front.is_ok()) return front.status();
    if (!front.value()) return std::optional<HandOut>();
    const auto& [key, item] = *front.value();
    if (key.first > now_ms) {  // released with a delay: wake waiters then
      arm_wake(queue, std::string(queue_name), key.first);
      return std::optional<HandOut>();
    }
    if (leases_.count(item.tx_id) != 0) {
      queue.ready.pop_front();  // its leased request, read again by a later page
      continue;
    }
    if (queue.ready.pops() >= queue.prefetched_until_pops &&
        queue.ready.in_memory() >= kPrefetchBacklog) {
      store_.prefetch_tx(queue.ready.first_ids(kPrefetchCount));
      queue.prefetched_until_pops = queue.ready.pops() + kPrefetchCount;
    }
    auto found = store_.get_tx(item.tx_id);
    if (!found.is_ok()) return found.status();
    const std::optional<TxRecord>& rec = found.value();
    if (!rec || rec->state != TxState::kSending || rec->ready_seq != key.second ||
        rec->next_attempt != item.attempt) {
      queue.ready.pop_front();  // not owned by its transaction: stale, harmless
      count_stale("ready");
      continue;
    }
    int64_t wake_ms = 0;
    const bool allowed = !queue.config.breaker || queue.breaker.allows(now_ms);
    if (queue.config.breaker) report_breaker(std::string(queue_name), queue);
    if (!allowed) {
      wake_ms = queue.breaker.opens_until_ms();
    } else if (!queue.bucket.try_take(now_ms)) {
      wake_ms = queue.bucket.next_token_ms(now_ms);
    }
    if (wake_ms != 0) {
      arm_wake(queue, std::string(queue_name), wake_ms);
      return std::optional<HandOut>();
    }
    if (queue.config.breaker) {
      if (queue.breaker.state(now_ms) == Breaker::State::kHalfOpen) queue.probe_tx_id = rec->tx_id;
      queue.breaker.on_hand_out();
    }
    Lease lease;
    lease.conn = conn;
    lease.queue = std::string(queue_name);
    lease.attempt = rec->next_attempt;
    lease.id = next_lease_id_++;
    lease.leased_at_ms = now_ms;
    lease.expires_at_ms = now_ms + queue.config.lease_ms;
    lease.ready_key = key;
    lease.timer = memory_timers_.insert(
        lease.expires_at_ms, MemoryTimer{MemoryTimer::Kind::kLeaseExpiry, rec->tx_id, lease.id});
    auto [entry, added] = leases_.try_emplace(rec->tx_id, std::move(lease));
    TARDE_ASSERT(added);  // a leased request was skipped above
    Lease& held = entry->second;
    held.tx_id = entry->first;
    link_lease(held);
    queue.leased += 1;
    queue.handed_out += 1;
    handed_out_ += 1;
    queue.leased_keys.insert(key);
    queue.leased_ids.insert(held.tx_id);
    queue.ready.pop_front();
    return std::optional<HandOut>(HandOut{rec->tx_id, rec->next_attempt, rec->deliveries + 1,
                                          rec->payload, std::string(queue_name)});
  }
}

// Writes the queue's ready floor: below every request not yet handed out
// and every leased one. Only ever raised here; persist() lowers it.
Status Engine::raise_ready_floor(const std::string& queue_name, QueueState& queue) {
  queue.pops_at_floor = queue.ready.pops();
  ReadyQueue::Key floor = queue.ready.floor();
  if (!queue.leased_keys.empty()) floor = std::min(floor, *queue.leased_keys.begin());
  if (queue.floor_on_disk && floor <= *queue.floor_on_disk) return Status::ok();
  storage::Batch batch;
  batch.put_ready_floor(queue_name, {floor.first, floor.second});
  TARDE_RETURN_IF_ERROR(store_.write(batch));
  queue.floor_on_disk = floor;
  return Status::ok();
}

// Arms one wake of the queue's waiters at wake_ms, unless one no later is
// already armed.
void Engine::arm_wake(QueueState& queue, const std::string& queue_name, int64_t wake_ms) {
  const int64_t now_ms = clock_.now_wall_ms();
  if (queue.wake_at_ms > now_ms && queue.wake_at_ms <= wake_ms) return;
  queue.wake_at_ms = wake_ms;
  memory_timers_.insert(wake_ms, MemoryTimer{MemoryTimer::Kind::kReadyWake, queue_name, 0});
}

Result<TxReply> Engine::sent(std::string_view tx_id, uint32_t attempt) {
  auto found = store_.get_tx(tx_id);
  if (!found.is_ok()) return found.status();
  if (!found.value()) return not_found(tx_id);
  const TxRecord& rec = *found.value();
  const storage::QueueConfig& config = queue_state(rec.queue).config;
  const RowContext ctx = row_context(config);
  return apply_decision(rec, on_sent(rec, attempt, ctx), "SENT", ctx);
}

Result<TxReply> Engine::release(uint64_t conn, std::string_view tx_id, uint32_t attempt,
                                int64_t delay_ms, std::string_view reason) {
  auto lease = leases_.find(tx_id);
  if (lease == leases_.end() || lease->second.conn != conn || lease->second.attempt != attempt) {
    auto found = store_.get_tx(tx_id);
    if (!found.is_ok()) return found.status();
    if (!found.value()) return not_found(tx_id);
    count_stale("RELEASE");
    return TxReply{Outcome::kStale, summary(*found.value())};
  }
  Result<TxReply> reply = not_found(tx_id);
  TARDE_RETURN_IF_ERROR(end_delivery(std::string(tx_id), attempt, delay_ms,
                                     reason.empty() ? kReasonReleased : reason, &reply));
  return reply;
}

Result<TxReply> Engine::respond(std::string_view tx_id, uint32_t attempt, Answer answer,
                                std::string_view reason, std::optional<int64_t> retry_after_ms) {
  auto found = store_.get_tx(tx_id);
  if (!found.is_ok()) return found.status();
  if (!found.value()) return not_found(tx_id);
  const TxRecord& rec = *found.value();
  QueueState& queue = queue_state(rec.queue);
  const RowContext ctx = row_context(queue.config);
  Decision decision = on_respond(rec, attempt, answer, reason, retry_after_ms, ctx);
  decision.answer = answer;
  auto reply = apply_decision(rec, std::move(decision), "RESPOND", ctx);
  if (reply.is_ok() && reply.value().outcome == Outcome::kOk && queue.config.breaker) {
    if (queue.probe_tx_id == rec.tx_id) queue.probe_tx_id.clear();
    queue.breaker.record(clock_.now_wall_ms(), answer == Answer::kTransient);
    report_breaker(rec.queue, queue);
  }
  return reply;
}

Result<TxReply> Engine::resolve(std::string_view tx_id, TxState terminal, std::string_view reason) {
  TARDE_ASSERT(storage::is_terminal(terminal));
  auto found = store_.get_tx(tx_id);
  if (!found.is_ok()) return found.status();
  if (!found.value()) return not_found(tx_id);
  const TxRecord& rec = *found.value();
  const storage::QueueConfig& config = queue_state(rec.queue).config;
  const RowContext ctx = row_context(config);
  return apply_decision(rec, on_resolve(rec, terminal, reason, ctx), "RESOLVE", ctx);
}

Result<TxReply> Engine::redrive(std::string_view queue, std::string_view tx_id) {
  return redrive_one(queue, tx_id, "REDRIVE");
}

Result<TxReply> Engine::redrive_one(std::string_view queue, std::string_view tx_id,
                                    const char* cause) {
  auto found = store_.get_tx(tx_id);
  if (!found.is_ok()) return found.status();
  const std::optional<TxRecord>& rec = found.value();
  if (!rec || rec->queue != queue || !rec->dead_lettered) return not_found(tx_id);
  const storage::QueueConfig& config = queue_state(rec->queue).config;
  const RowContext ctx = row_context(config);
  return apply_decision(*rec, on_redrive(*rec, ctx), cause, ctx);
}

Result<std::optional<TxRecord>> Engine::get(std::string_view tx_id) {
  auto found = store_.get_tx(tx_id);
  if (found.is_ok() && found.value()) {
    TxRecord& rec = *found.value();
    rec.next_fire_at_ms = shown_next_fire_at_ms(rec, clock_.now_wall_ms());
  }
  return found;
}

Status Engine::history(std::string_view tx_id, size_t limit, std::vector<HistoryEntry>* events) {
  events->clear();
  auto found = store_.get_tx(tx_id);
  if (!found.is_ok()) return found.status();
  if (!found.value()) return Status::ok();
  std::vector<std::pair<uint64_t, storage::EventRecord>> stored;
  TARDE_RETURN_IF_ERROR(
      store_.scan_history(*found.value(), [&](uint64_t seq, const storage::EventRecord& e) {
        stored.emplace_back(seq, e);
        return true;
      }));
  const uint32_t history_max = queue_state(found.value()->queue).config.history_max;
  *events = select_history(std::move(stored), history_max, limit);
  return Status::ok();
}

Status Engine::dead_letters(std::string_view queue, size_t limit,
                            std::vector<storage::DeadLetter>* letters) {
  letters->clear();
  return store_.scan_dead(queue, [&](const storage::DeadLetter& letter) {
    letters->push_back(letter);
    return limit == 0 || letters->size() < limit;
  });
}

const storage::QueueConfig& Engine::config(std::string_view queue) {
  return queue_state(queue).config;
}

Status Engine::set_config(std::string_view queue_name, const storage::QueueConfig& config) {
  storage::Batch batch;
  batch.put_queue_config(queue_name, config);
  TARDE_RETURN_IF_ERROR(store_.write(batch));
  QueueState& queue = queue_state(queue_name);
  const bool rate_changed = queue.config.rate != config.rate;
  queue.config = config;
  if (rate_changed) queue.bucket.configure(config.rate, clock_.now_wall_ms());
  if (ready_listener_) ready_listener_(std::string(queue_name));
  return Status::ok();
}

EngineStats Engine::stats() const {
  EngineStats stats;
  int64_t transactions = 0;
  for (size_t i = 0; i < by_state_.size(); ++i) stats.by_state[i] = non_negative(by_state_[i]);
  for (size_t i = 1; i < by_state_.size(); ++i) transactions += by_state_[i];
  stats.transactions = non_negative(transactions);
  for (const auto& [name, queue] : queues_) {
    stats.ready += non_negative(queue.owned_ready - static_cast<int64_t>(queue.leased));
    stats.dead_letters += non_negative(queue.dead);
  }
  stats.counting = counting_;
  stats.leased = leases_.size();
  stats.due_in_memory = due_.in_memory();
  stats.fired = fired_;
  stats.stale = stale_;
  stats.handed_out = handed_out_;
  stats.stale_by_kind = stale_by_kind_;
  return stats;
}

std::vector<std::string> Engine::queue_names() const {
  std::vector<std::string> names;
  for (const auto& [name, queue] : queues_) names.push_back(name);
  return names;
}

Engine::QueueFigures Engine::queue_figures(std::string_view queue_name) {
  QueueState& queue = queue_state(queue_name);
  QueueFigures figures;
  figures.ready = non_negative(queue.owned_ready - static_cast<int64_t>(queue.leased));
  figures.dead = non_negative(queue.dead);
  figures.leased = queue.leased;
  figures.in_flight = non_negative(queue.in_flight);
  figures.scheduled = non_negative(queue.scheduled);
  figures.handed_out = queue.handed_out;
  const std::optional<ReadyQueue::Key> oldest = queue.ready.front_in_memory();
  figures.oldest_ready_at_ms = oldest ? oldest->first : 0;
  figures.breaker = queue.breaker.state(clock_.now_wall_ms());
  figures.paused = queue.config.paused;
  figures.counting = counting_;
  report_breaker(std::string(queue_name), queue);
  return figures;
}

std::vector<Engine::LeaseView> Engine::leases(std::string_view queue) const {
  std::vector<LeaseView> out;
  for (const auto& [tx_id, lease] : leases_) {
    if (!queue.empty() && lease.queue != queue) continue;
    out.push_back(LeaseView{tx_id, lease.queue, lease.attempt, lease.conn, lease.leased_at_ms,
                            lease.expires_at_ms});
  }
  return out;
}

}  // namespace tarde::engine
