#include "base/figures.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "base/assert.h"

namespace tarde {
namespace {

constexpr const char* kMetricPrefix = "tarde_";

const char* type_name(FigureKind kind) {
  switch (kind) {
    case FigureKind::kCounter:
      return "counter";
    case FigureKind::kGauge:
      return "gauge";
    case FigureKind::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// The exposition format's escapes: backslash and line feed everywhere, the
// double quote too inside a label value (HELP text keeps it as it is).
std::string escaped(const std::string& text, bool in_label) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && in_label) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

// The label pairs without braces: `queue="q",reason="x"`.
std::string label_pairs(const std::vector<std::string>& names, const LabelValues& values) {
  TARDE_ASSERT(names.size() == values.size());
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ',';
    out += names[i] + "=\"" + escape_label_value(values[i]) + "\"";
  }
  return out;
}

std::string label_text(const std::vector<std::string>& names, const LabelValues& values) {
  if (names.empty()) return "";
  return "{" + label_pairs(names, values) + "}";
}

// The label set a new observation counts under: `labels` while fewer than
// `max` sets are in use (one is kept free for the overflow set), else
// `labels` with every value not kept replaced by "other".
template <typename Value>
LabelValues bounded_labels(const std::map<LabelValues, Value>& in_use, const LabelValues& labels,
                           size_t max, const std::vector<bool>& kept) {
  if (in_use.count(labels) != 0 || in_use.size() + 1 < max) return labels;
  LabelValues other = labels;
  for (size_t i = 0; i < other.size(); ++i) {
    if (i >= kept.size() || !kept[i]) other[i] = "other";
  }
  return other;
}

std::string joined(const LabelValues& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += '.';
    out += values[i];
  }
  return out;
}

// The STATS name of one label set: the pattern with its hole filled.
std::string stats_name_of(const std::string& pattern, const LabelValues& labels) {
  std::string values = joined(labels);
  size_t hole = pattern.find("{}");
  size_t hole_size = 2;
  if (hole == std::string::npos) {
    hole = pattern.find("{lower}");
    hole_size = 7;
    for (char& c : values) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  TARDE_ASSERT(hole != std::string::npos);
  return pattern.substr(0, hole) + values + pattern.substr(hole + hole_size);
}

}  // namespace

void Counter::add(const LabelValues& labels, uint64_t n) {
  total_ += n;
  if (labels.empty()) return;
  auto it = by_labels_.find(labels);
  if (it != by_labels_.end()) {
    it->second += n;
    return;
  }
  by_labels_[bounded_labels(by_labels_, labels, label_sets_max_, kept_)] += n;
}

void Counter::sample(FigureSamples& out) const {
  out.total(static_cast<double>(total_));
  for (const auto& [labels, n] : by_labels_) out.add(labels, static_cast<double>(n));
}

HistogramFigure::HistogramFigure(std::vector<double> upper_bounds, size_t label_sets_max)
    : bounds_(std::move(upper_bounds)), label_sets_max_(label_sets_max) {
  TARDE_ASSERT(std::is_sorted(bounds_.begin(), bounds_.end()));
  unlabeled_.counts.assign(bounds_.size(), 0);
}

void HistogramFigure::add(Series& series, double value) const {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (value <= bounds_[i]) series.counts[i] += 1;
  }
  series.count += 1;
  series.sum += value;
}

void HistogramFigure::observe(double value) { add(unlabeled_, value); }

void HistogramFigure::observe(const LabelValues& labels, double value) {
  TARDE_ASSERT(!labels.empty());
  auto it = by_labels_.find(labels);
  if (it == by_labels_.end()) {
    const LabelValues key = bounded_labels(by_labels_, labels, label_sets_max_, {});
    it = by_labels_.try_emplace(key, Series{std::vector<uint64_t>(bounds_.size(), 0)}).first;
  }
  add(it->second, value);
}

std::string HistogramFigure::render(const std::string& metric,
                                    const std::vector<std::string>& label_names) const {
  std::string out;
  const auto render_series = [&](const std::string& pairs, const Series& series) {
    const std::string before_le = pairs.empty() ? "{" : "{" + pairs + ",";
    const std::string labels = pairs.empty() ? "" : "{" + pairs + "}";
    for (size_t i = 0; i < bounds_.size(); ++i) {
      out += metric + "_bucket" + before_le + "le=\"" + figure_text(bounds_[i]) + "\"} " +
             std::to_string(series.counts[i]) + "\n";
    }
    out += metric + "_bucket" + before_le + "le=\"+Inf\"} " + std::to_string(series.count) + "\n";
    out += metric + "_sum" + labels + " " + figure_text(series.sum) + "\n";
    out += metric + "_count" + labels + " " + std::to_string(series.count) + "\n";
  };
  if (label_names.empty()) {
    render_series("", unlabeled_);
    return out;
  }
  for (const auto& [labels, series] : by_labels_) {
    render_series(label_pairs(label_names, labels), series);
  }
  return out;
}

void Figures::check_new(const FigureSpec& spec) const {
  for (const Family& family : families_) {
    TARDE_ASSERT(metric_name(family.spec) != metric_name(spec));
  }
  TARDE_ASSERT(spec.metrics_divisor > 0);
  // A counter's name ends in _total (the Prometheus convention).
  if (spec.kind == FigureKind::kCounter) {
    TARDE_ASSERT(spec.name.size() > 6);
    TARDE_ASSERT(spec.name.compare(spec.name.size() - 6, 6, "_total") == 0);
  }
}

Counter& Figures::counter(FigureSpec spec) {
  TARDE_ASSERT(spec.kind == FigureKind::kCounter);
  check_new(spec);
  const size_t label_sets_max = spec.label_sets_max;
  TARDE_ASSERT(label_sets_max >= 2);
  std::vector<bool> kept;
  for (const std::string& label : spec.labels) {
    kept.push_back(std::find(spec.kept_labels.begin(), spec.kept_labels.end(), label) !=
                   spec.kept_labels.end());
  }
  families_.push_back(Family{std::move(spec),
                             std::make_unique<Counter>(label_sets_max, std::move(kept)), nullptr,
                             nullptr});
  return *families_.back().counter;
}

void Figures::sampled(FigureSpec spec, Sampler sample) {
  TARDE_ASSERT(spec.kind != FigureKind::kHistogram);
  TARDE_ASSERT(sample != nullptr);
  check_new(spec);
  families_.push_back(Family{std::move(spec), nullptr, std::move(sample), nullptr});
}

HistogramFigure& Figures::histogram(FigureSpec spec, std::vector<double> upper_bounds) {
  TARDE_ASSERT(spec.kind == FigureKind::kHistogram);
  TARDE_ASSERT(spec.label_sets_max >= 2);
  check_new(spec);
  const size_t label_sets_max = spec.label_sets_max;
  families_.push_back(
      Family{std::move(spec), nullptr, nullptr,
             std::make_unique<HistogramFigure>(std::move(upper_bounds), label_sets_max)});
  return *families_.back().histogram;
}

FigureSamples Figures::read(const Family& family) const {
  FigureSamples samples;
  if (family.counter) family.counter->sample(samples);
  if (family.sample) family.sample(samples);
  return samples;
}

std::string Figures::prometheus_text() const {
  std::string out;
  for (const Family& family : families_) {
    const std::string metric = metric_name(family.spec);
    out += "# HELP " + metric + " " + escaped(family.spec.help, false) + "\n";
    out += "# TYPE " + metric + " " + type_name(family.spec.kind) + "\n";
    if (family.histogram) {
      out += family.histogram->render(metric, family.spec.labels);
      continue;
    }
    const FigureSamples samples = read(family);
    const double divisor = family.spec.metrics_divisor;
    if (family.spec.labels.empty()) {
      out += metric + " " + figure_text(samples.total_value() / divisor) + "\n";
      continue;
    }
    for (const auto& [labels, value] : samples.samples()) {
      out += metric + label_text(family.spec.labels, labels) + " " + figure_text(value / divisor) +
             "\n";
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> Figures::stats_lines() const {
  std::vector<std::pair<std::string, std::string>> lines;
  for (const Family& family : families_) {
    if (family.histogram) continue;
    if (family.spec.stats_name.empty() && family.spec.stats_each.empty()) continue;
    const FigureSamples samples = read(family);
    if (!family.spec.stats_name.empty()) {
      lines.emplace_back(family.spec.stats_name, figure_text(samples.total_value()));
    }
    if (family.spec.stats_each.empty()) continue;
    for (const auto& [labels, value] : samples.samples()) {
      lines.emplace_back(stats_name_of(family.spec.stats_each, labels), figure_text(value));
    }
  }
  return lines;
}

std::string figure_text(double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9.0e15) {
    return std::to_string(static_cast<int64_t>(value));
  }
  // Plain decimals ("0.0001", not "1e-04") from a millionth to 1e15, the range of
  // bucket bounds and seconds; the shortest form that reads back exactly.
  char buffer[64];
  const bool plain = std::isfinite(value) && std::fabs(value) >= 1e-6 && std::fabs(value) < 1e15;
  const auto result =
      plain ? std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed)
            : std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string escape_label_value(const std::string& value) { return escaped(value, true); }

std::string metric_name(const FigureSpec& spec) {
  return spec.unprefixed ? spec.name : kMetricPrefix + spec.name;
}

}  // namespace tarde
