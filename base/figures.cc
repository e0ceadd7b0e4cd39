#include "base/figures.h"

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

std::string label_text(const std::vector<std::string>& names, const LabelValues& values) {
  TARDE_ASSERT(names.size() == values.size());
  if (names.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ',';
    out += names[i] + "=\"" + escape_label_value(values[i]) + "\"";
  }
  return out + "}";
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
  // One set is kept free for "other", so the page never exceeds the bound.
  if (by_labels_.size() + 1 >= label_sets_max_) {
    by_labels_[LabelValues(labels.size(), "other")] += n;
    return;
  }
  by_labels_[labels] += n;
}

void Counter::sample(FigureSamples& out) const {
  out.total(static_cast<double>(total_));
  for (const auto& [labels, n] : by_labels_) out.add(labels, static_cast<double>(n));
}

HistogramFigure::HistogramFigure(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size(), 0) {}

void HistogramFigure::observe(double value) {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (value <= bounds_[i]) counts_[i] += 1;
  }
  count_ += 1;
  sum_ += value;
}

std::string HistogramFigure::render(const std::string& metric) const {
  std::string out;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    out += metric + "_bucket{le=\"" + figure_text(bounds_[i]) + "\"} " +
           std::to_string(counts_[i]) + "\n";
  }
  out += metric + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
  out += metric + "_sum " + figure_text(sum_) + "\n";
  out += metric + "_count " + std::to_string(count_) + "\n";
  return out;
}

void Figures::check_new(const FigureSpec& spec) const {
  for (const Family& family : families_) TARDE_ASSERT(family.spec.name != spec.name);
}

Counter& Figures::counter(FigureSpec spec) {
  TARDE_ASSERT(spec.kind == FigureKind::kCounter);
  check_new(spec);
  const size_t label_sets_max = spec.label_sets_max;
  TARDE_ASSERT(label_sets_max >= 2);
  families_.push_back(
      Family{std::move(spec), std::make_unique<Counter>(label_sets_max), nullptr, nullptr});
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
  TARDE_ASSERT(spec.labels.empty());
  check_new(spec);
  families_.push_back(Family{std::move(spec), nullptr, nullptr,
                             std::make_unique<HistogramFigure>(std::move(upper_bounds))});
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
    const std::string metric = kMetricPrefix + family.spec.name;
    out += "# HELP " + metric + " " + escaped(family.spec.help, false) + "\n";
    out += "# TYPE " + metric + " " + type_name(family.spec.kind) + "\n";
    if (family.histogram) {
      out += family.histogram->render(metric);
      continue;
    }
    const FigureSamples samples = read(family);
    if (family.spec.labels.empty()) {
      out += metric + " " + figure_text(samples.total_value()) + "\n";
      continue;
    }
    for (const auto& [labels, value] : samples.samples()) {
      out += metric + label_text(family.spec.labels, labels) + " " + figure_text(value) + "\n";
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
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string escape_label_value(const std::string& value) { return escaped(value, true); }

}  // namespace tarde
