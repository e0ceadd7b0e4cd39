// The figures the engine keeps about itself (stored transactions by state,
// ready, leased and dead requests by queue, timers, stale messages, breakers),
// declared once for STATS and the metrics page. Each is read from the
// engine's own state when a page is rendered, so counting costs nothing.
#include <algorithm>

#include "base/figures.h"
#include "engine/engine.h"

namespace tarde::engine {
namespace {

using storage::TxState;

constexpr TxState kStoredStates[] = {TxState::kSending, TxState::kInFlight, TxState::kScheduled,
                                     TxState::kSucceeded, TxState::kFailed};

// 0 closed, 1 open, 2 half-open: a number, like every STATS value.
double breaker_number(Breaker::State state) {
  switch (state) {
    case Breaker::State::kClosed:
      return 0;
    case Breaker::State::kOpen:
      return 1;
    case Breaker::State::kHalfOpen:
      return 2;
  }
  return 0;
}

// Declares a per-queue gauge whose value is read from queue_figures().
void per_queue(Figures& figures, Engine& engine, FigureSpec spec,
               std::function<double(const Engine::QueueFigures&)> value,
               std::function<double(const EngineStats&)> total = nullptr) {
  spec.labels = {"queue"};
  figures.sampled(std::move(spec), [&engine, value, total](FigureSamples& out) {
    if (total) out.total(total(engine.stats()));
    for (const std::string& queue : engine.queue_names()) {
      out.add({queue}, value(engine.queue_figures(queue)));
    }
  });
}

}  // namespace

void Engine::declare_figures(Figures& figures) {
  figures.sampled({.name = "transactions",
                   .kind = FigureKind::kGauge,
                   .help = "Stored transactions by state.",
                   .labels = {"state"},
                   .stats_name = "transactions",
                   .stats_each = "{lower}"},
                  [this](FigureSamples& out) {
                    const EngineStats s = stats();
                    out.total(static_cast<double>(s.transactions));
                    for (const TxState state : kStoredStates) {
                      out.add({storage::to_string(state)},
                              static_cast<double>(s.by_state[static_cast<size_t>(state)]));
                    }
                  });
  per_queue(
      figures, *this,
      {.name = "ready",
       .help = "Requests ready to be handed out, by queue.",
       .stats_name = "ready"},
      [](const QueueFigures& q) { return static_cast<double>(q.ready); },
      [](const EngineStats& s) { return static_cast<double>(s.ready); });
  per_queue(
      figures, *this,
      {.name = "leased",
       .help = "Requests leased to a dispatcher, by queue.",
       .stats_name = "leased"},
      [](const QueueFigures& q) { return static_cast<double>(q.leased); },
      [](const EngineStats& s) { return static_cast<double>(s.leased); });
  per_queue(
      figures, *this,
      {.name = "dead_letters",
       .help = "Dead letters waiting, by queue.",
       .stats_name = "dead_letters"},
      [](const QueueFigures& q) { return static_cast<double>(q.dead); },
      [](const EngineStats& s) { return static_cast<double>(s.dead_letters); });
  per_queue(
      figures, *this,
      {.name = "handed_out_total",
       .kind = FigureKind::kCounter,
       .help = "Requests handed out by RESERVE since start, by queue."},
      [](const QueueFigures& q) { return static_cast<double>(q.handed_out); },
      [](const EngineStats& s) { return static_cast<double>(s.handed_out); });
  figures.sampled(
      {.name = "due_in_memory",
       .help = "Timers (retries, response timeouts, retention) held in memory.",
       .stats_name = "due_in_memory"},
      [this](FigureSamples& out) { out.total(static_cast<double>(stats().due_in_memory)); });
  figures.sampled({.name = "timers_fired_total",
                   .kind = FigureKind::kCounter,
                   .help = "Timers that fired: retries moved to SENDING, timeouts, retention.",
                   .stats_name = "timers_fired"},
                  [this](FigureSamples& out) { out.total(static_cast<double>(fired_)); });
  figures.sampled({.name = "counting",
                   .help = "1 while the stored transactions are still being counted after a start.",
                   .stats_name = "counting"},
                  [this](FigureSamples& out) { out.total(counting_ ? 1 : 0); });
  figures.sampled({.name = "stale_dropped_total",
                   .kind = FigureKind::kCounter,
                   .help = "Stale, duplicate and late messages that changed nothing, by kind.",
                   .labels = {"kind"},
                   .stats_name = "stale_dropped",
                   .stats_each = "stale.{}"},
                  [this](FigureSamples& out) {
                    out.total(static_cast<double>(stale_));
                    for (const auto& [kind, n] : stale_by_kind_) {
                      out.add({kind}, static_cast<double>(n));
                    }
                  });
  per_queue(figures, *this,
            {.name = "breaker_state",
             .help = "Circuit breaker of each queue: 0 closed, 1 open, 2 half-open.",
             .stats_each = "breaker.{}"},
            [](const QueueFigures& q) { return breaker_number(q.breaker); });
  per_queue(figures, *this,
            {.name = "breaker_open", .help = "1 while a queue's circuit breaker is not closed."},
            [](const QueueFigures& q) { return q.breaker == Breaker::State::kClosed ? 0.0 : 1.0; });
  per_queue(figures, *this,
            {.name = "queue_paused",
             .help = "1 while a queue is paused (PAUSE): it hands nothing out.",
             .stats_each = "paused.{}"},
            [](const QueueFigures& q) { return q.paused ? 1.0 : 0.0; });
  per_queue(figures, *this,
            {.name = "oldest_ready_age_seconds",
             .help = "How long the oldest ready request of each queue has waited."},
            [this](const QueueFigures& q) {
              if (q.oldest_ready_at_ms == 0) return 0.0;
              return std::max<int64_t>(0, clock_.now_wall_ms() - q.oldest_ready_at_ms) / 1000.0;
            });
}

}  // namespace tarde::engine
