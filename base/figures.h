#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tarde {

// How Prometheus reads a figure: a counter only grows, a gauge goes both
// ways, a histogram counts observations into buckets.
enum class FigureKind { kCounter, kGauge, kHistogram };

// FigureSpec declares one figure, once, beside the code that counts it: how
// the metrics page names and explains it, and how STATS shows it. Both pages
// render from these declarations, so a figure cannot appear on one page
// under a name the other does not know about.
struct FigureSpec {
  std::string name;  // metric name without the "tarde_" prefix: "commits_total"
  FigureKind kind = FigureKind::kGauge;
  std::string help;                      // the HELP line, one sentence
  std::vector<std::string> labels = {};  // label names, in the order values are given
  std::string stats_name = {};           // STATS line of the total; empty: none
  // STATS line of each label set, "{}" standing for the label values joined
  // by '.' ("stale.{}" gives "stale.SENT"), "{lower}" for them in lower case
  // ("{lower}" gives "in_flight"). Empty: none.
  std::string stats_each = {};
  // Label values can come from clients (a RESPOND's reason): a counter keeps
  // at most this many label sets, and counts the rest under the label set
  // whose every value is "other", so no client can grow the page without
  // bound.
  size_t label_sets_max = kLabelSetsMax;
  // Labels whose values stay as they are when a label set counts as
  // "other": the queue, whose values are the queues that exist, so a flood
  // of reasons still shows in which queue it happens. The page then holds at
  // most label_sets_max sets plus one per kept value.
  std::vector<std::string> kept_labels = {};
  // The metrics page shows the value divided by this: 1000 shows a figure
  // STATS gives in milliseconds in seconds, the base unit Prometheus
  // expects. STATS shows the value as sampled.
  double metrics_divisor = 1;
  // True: `name` is the whole metric name, without "tarde_", for the
  // families every Prometheus client library exports under the same name
  // (process_cpu_seconds_total, ...).
  bool unprefixed = false;
  static constexpr size_t kLabelSetsMax = 1000;
};

using LabelValues = std::vector<std::string>;

// FigureSamples collects what a sampled figure reports at the moment the
// pages are rendered: a total (STATS) and one value per label set. A figure
// without labels reports only the total.
class FigureSamples {
 public:
  void total(double value) { total_ = value; }
  void add(LabelValues labels, double value) { samples_.emplace_back(std::move(labels), value); }

  double total_value() const { return total_; }
  const std::vector<std::pair<LabelValues, double>>& samples() const { return samples_; }

 private:
  double total_ = 0;
  std::vector<std::pair<LabelValues, double>> samples_;
};

// Counter is a figure the owning code counts itself. Its total is the sum
// over its label sets. Single-threaded: the thread that owns the registry.
class Counter {
 public:
  explicit Counter(size_t label_sets_max = FigureSpec::kLabelSetsMax, std::vector<bool> kept = {})
      : label_sets_max_(label_sets_max), kept_(std::move(kept)) {}
  // A figure without labels is its total alone: one addition, the hot path
  // of counters such as commands and commits.
  void add(uint64_t n = 1) { total_ += n; }
  // Counts under `labels`, or, once label_sets_max label sets are in use,
  // under `labels` with every value not kept (FigureSpec::kept_labels)
  // replaced by "other".
  void add(const LabelValues& labels, uint64_t n = 1);
  uint64_t total() const { return total_; }
  uint64_t value(const LabelValues& labels) const {
    const auto it = by_labels_.find(labels);
    return it == by_labels_.end() ? 0 : it->second;
  }
  void sample(FigureSamples& out) const;

 private:
  size_t label_sets_max_;
  std::vector<bool> kept_;  // by label position; empty: none kept
  std::map<LabelValues, uint64_t> by_labels_;
  uint64_t total_ = 0;
};

// HistogramFigure counts observations into fixed buckets, so the hot path
// of an unlabeled histogram never allocates; a labeled one allocates once
// per new label set. Label sets are bounded as a Counter's are.
// Single-threaded, like Counter.
class HistogramFigure {
 public:
  explicit HistogramFigure(std::vector<double> upper_bounds,
                           size_t label_sets_max = FigureSpec::kLabelSetsMax);
  // Requires: the histogram has no labels.
  void observe(double value);
  // Requires: as many values as the histogram has labels.
  void observe(const LabelValues& labels, double value);
  // Prometheus lines `<metric>_bucket{<labels>,le=...}`, `_sum`, `_count`,
  // one group per label set. `label_names` empty: the unlabeled series.
  std::string render(const std::string& metric, const std::vector<std::string>& label_names) const;

 private:
  struct Series {
    std::vector<uint64_t> counts;  // cumulative, one per bound
    uint64_t count = 0;
    double sum = 0;
  };
  void add(Series& series, double value) const;

  std::vector<double> bounds_;
  size_t label_sets_max_;
  Series unlabeled_;
  std::map<LabelValues, Series> by_labels_;
};

// Figures is the registry of everything tarde measures about itself. Code
// that counts declares its figures here once; STATS (stats_lines) and the
// metrics page (prometheus_text) both render from the registry, in
// declaration order. Owned by the server and read on its io thread only;
// references it hands out live as long as the registry.
class Figures {
 public:
  using Sampler = std::function<void(FigureSamples&)>;

  // A figure counted by the caller through the returned Counter.
  Counter& counter(FigureSpec spec);
  // A figure read from its owner's own state whenever a page is rendered.
  // Requires: `sample` stays callable while the registry is rendered.
  void sampled(FigureSpec spec, Sampler sample);
  // A histogram observed by the caller, labeled or not. It is not shown in
  // STATS.
  HistogramFigure& histogram(FigureSpec spec, std::vector<double> upper_bounds);

  // The Prometheus text exposition (version 0.0.4) of every figure: HELP
  // and TYPE once per family, label values escaped as the format requires.
  std::string prometheus_text() const;
  // The `name value` lines of STATS, in declaration order.
  std::vector<std::pair<std::string, std::string>> stats_lines() const;

 private:
  struct Family {
    FigureSpec spec;
    std::unique_ptr<Counter> counter;
    Sampler sample;
    std::unique_ptr<HistogramFigure> histogram;
  };
  // A figure is declared once: a second declaration of a name aborts.
  void check_new(const FigureSpec& spec) const;
  FigureSamples read(const Family& family) const;

  std::vector<Family> families_;
};

// A number as the pages print it: whole numbers without a fraction, others
// in the shortest form that reads back exactly.
std::string figure_text(double value);

// A label value escaped for the exposition format: backslash, double quote
// and line feed become \\, \" and \n.
std::string escape_label_value(const std::string& value);

// The name a family has on the metrics page: "tarde_" + spec.name, or
// spec.name alone when spec.unprefixed.
std::string metric_name(const FigureSpec& spec);

}  // namespace tarde
