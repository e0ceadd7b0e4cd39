#include "base/figures.h"

#include <doctest/doctest.h>

#include <string>

namespace tarde {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("figures: a counter renders HELP, TYPE and one sample per label set") {
  Figures figures;
  Counter& answers = figures.counter({.name = "answers_total",
                                      .kind = FigureKind::kCounter,
                                      .help = "Answers.",
                                      .labels = {"queue", "outcome"},
                                      .stats_name = "answers"});
  answers.add({"pagos", "SUCCESS"});
  answers.add({"pagos", "SUCCESS"}, 2);
  answers.add({"mail", "CANCELLED"});
  const std::string text = figures.prometheus_text();
  CHECK(contains(text, "# HELP tarde_answers_total Answers.\n"));
  CHECK(contains(text, "# TYPE tarde_answers_total counter\n"));
  CHECK(contains(text, "tarde_answers_total{queue=\"pagos\",outcome=\"SUCCESS\"} 3\n"));
  CHECK(contains(text, "tarde_answers_total{queue=\"mail\",outcome=\"CANCELLED\"} 1\n"));
  CHECK(answers.total() == 4);
  CHECK(answers.value({"pagos", "SUCCESS"}) == 3);
  CHECK(answers.value({"nobody", "SUCCESS"}) == 0);
  const auto lines = figures.stats_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == std::pair<std::string, std::string>{"answers", "4"});
}

TEST_CASE("figures: label values from clients are escaped as the exposition format requires") {
  Figures figures;
  Counter& failures = figures.counter({.name = "failures_total",
                                       .kind = FigureKind::kCounter,
                                       .help = "Failures by reason.",
                                       .labels = {"reason"}});
  failures.add({"a\"b\\c\nd"});
  CHECK(
      contains(figures.prometheus_text(), "tarde_failures_total{reason=\"a\\\"b\\\\c\\nd\"} 1\n"));
  CHECK(escape_label_value("plain") == "plain");
}

TEST_CASE("figures: STATS names each label set through its pattern, in declaration order") {
  Figures figures;
  figures.sampled({.name = "transactions",
                   .help = "By state.",
                   .labels = {"state"},
                   .stats_name = "transactions",
                   .stats_each = "{lower}"},
                  [](FigureSamples& out) {
                    out.total(3);
                    out.add({"IN_FLIGHT"}, 2);
                    out.add({"FAILED"}, 1);
                  });
  figures.sampled({.name = "stale_dropped_total",
                   .kind = FigureKind::kCounter,
                   .help = "Stale.",
                   .labels = {"kind"},
                   .stats_each = "stale.{}"},
                  [](FigureSamples& out) { out.add({"SENT"}, 5); });
  figures.sampled({.name = "metrics_only", .help = "Not in STATS."},
                  [](FigureSamples& out) { out.total(1.5); });
  const auto lines = figures.stats_lines();
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == std::pair<std::string, std::string>{"transactions", "3"});
  CHECK(lines[1] == std::pair<std::string, std::string>{"in_flight", "2"});
  CHECK(lines[2] == std::pair<std::string, std::string>{"failed", "1"});
  CHECK(lines[3] == std::pair<std::string, std::string>{"stale.SENT", "5"});
  const std::string text = figures.prometheus_text();
  CHECK(contains(text, "tarde_transactions{state=\"IN_FLIGHT\"} 2\n"));
  CHECK(contains(text, "# TYPE tarde_metrics_only gauge\ntarde_metrics_only 1.5\n"));
}

TEST_CASE("figures: a histogram counts into cumulative buckets and stays out of STATS") {
  Figures figures;
  HistogramFigure& latency = figures.histogram(
      {.name = "latency_ms", .kind = FigureKind::kHistogram, .help = "Latency."}, {1, 10});
  latency.observe(0.5);
  latency.observe(5);
  latency.observe(50);
  const std::string text = figures.prometheus_text();
  CHECK(contains(text, "# TYPE tarde_latency_ms histogram\n"));
  CHECK(contains(text, "tarde_latency_ms_bucket{le=\"1\"} 1\n"));
  CHECK(contains(text, "tarde_latency_ms_bucket{le=\"10\"} 2\n"));
  CHECK(contains(text, "tarde_latency_ms_bucket{le=\"+Inf\"} 3\n"));
  CHECK(contains(text, "tarde_latency_ms_sum 55.5\n"));
  CHECK(contains(text, "tarde_latency_ms_count 3\n"));
  CHECK(figures.stats_lines().empty());
}

TEST_CASE("figures: numbers print whole without a fraction, others exactly") {
  CHECK(figure_text(0) == "0");
  CHECK(figure_text(12345678901) == "12345678901");
  CHECK(figure_text(0.25) == "0.25");
  CHECK(figure_text(0.1) == "0.1");
  CHECK(figure_text(0.0001) == "0.0001");  // not 1e-04
  CHECK(figure_text(0.00025) == "0.00025");
  CHECK(figure_text(1.5e-9) == "1.5e-09");
}

}  // namespace
}  // namespace tarde

namespace tarde {
namespace {

TEST_CASE("figures: a counter keeps a bounded number of label sets; the rest count as other") {
  Figures figures;
  Counter& failures = figures.counter({.name = "failures_total",
                                       .kind = FigureKind::kCounter,
                                       .help = "Failures by reason.",
                                       .labels = {"reason"},
                                       .stats_name = "failures",
                                       .label_sets_max = 4});
  for (int i = 0; i < 10'000; ++i) failures.add({"R" + std::to_string(i)});
  failures.add({"R0"});  // a kept label set still counts as itself
  const std::string text = figures.prometheus_text();
  CHECK(contains(text, "tarde_failures_total{reason=\"R0\"} 2\n"));
  CHECK(contains(text, "tarde_failures_total{reason=\"R2\"} 1\n"));
  CHECK_FALSE(contains(text, "reason=\"R3\""));
  CHECK(contains(text, "tarde_failures_total{reason=\"other\"} 9997\n"));
  CHECK(failures.total() == 10'001);
  CHECK(text.size() < 400);
}

}  // namespace
}  // namespace tarde

namespace tarde {
namespace {

TEST_CASE("figures: past the bound, only the labels not kept become other") {
  Figures figures;
  Counter& failures = figures.counter({.name = "failures_total",
                                       .kind = FigureKind::kCounter,
                                       .help = "Failures by queue and reason.",
                                       .labels = {"queue", "reason"},
                                       .label_sets_max = 3,
                                       .kept_labels = {"queue"}});
  failures.add({"a", "R1"});
  failures.add({"a", "R2"});
  failures.add({"a", "R3"});
  failures.add({"b", "R4"});
  failures.add({"b", "R5"});
  const std::string text = figures.prometheus_text();
  CHECK(contains(text, "tarde_failures_total{queue=\"a\",reason=\"R1\"} 1\n"));
  CHECK(contains(text, "tarde_failures_total{queue=\"a\",reason=\"R2\"} 1\n"));
  CHECK(contains(text, "tarde_failures_total{queue=\"a\",reason=\"other\"} 1\n"));
  CHECK(contains(text, "tarde_failures_total{queue=\"b\",reason=\"other\"} 2\n"));
}

TEST_CASE("figures: a labeled histogram renders one series per label set, le last") {
  Figures figures;
  HistogramFigure& lateness = figures.histogram({.name = "lateness_seconds",
                                                 .kind = FigureKind::kHistogram,
                                                 .help = "Lateness.",
                                                 .labels = {"queue"},
                                                 .label_sets_max = 2},
                                                {0.001, 0.01});
  lateness.observe({"a\"q"}, 0.0005);
  lateness.observe({"a\"q"}, 0.5);
  lateness.observe({"b"}, 0.005);  // the one free set is the overflow's
  const std::string text = figures.prometheus_text();
  CHECK(contains(text, "tarde_lateness_seconds_bucket{queue=\"a\\\"q\",le=\"0.001\"} 1\n"));
  CHECK(contains(text, "tarde_lateness_seconds_bucket{queue=\"a\\\"q\",le=\"+Inf\"} 2\n"));
  CHECK(contains(text, "tarde_lateness_seconds_sum{queue=\"a\\\"q\"} 0.5005\n"));
  CHECK(contains(text, "tarde_lateness_seconds_count{queue=\"a\\\"q\"} 2\n"));
  CHECK(contains(text, "tarde_lateness_seconds_bucket{queue=\"other\",le=\"0.01\"} 1\n"));
}

TEST_CASE("figures: metrics_divisor shows base units; unprefixed names stay as given") {
  Figures figures;
  figures.sampled({.name = "uptime_seconds",
                   .help = "Uptime.",
                   .stats_name = "uptime_ms",
                   .metrics_divisor = 1000},
                  [](FigureSamples& out) { out.total(10754); });
  figures.sampled({.name = "process_open_fds", .help = "Fds.", .unprefixed = true},
                  [](FigureSamples& out) { out.total(7); });
  const std::string text = figures.prometheus_text();
  CHECK(contains(text, "\ntarde_uptime_seconds 10.754\n"));
  CHECK(contains(text, "# TYPE process_open_fds gauge\nprocess_open_fds 7\n"));
  const auto lines = figures.stats_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == std::pair<std::string, std::string>{"uptime_ms", "10754"});
}

}  // namespace
}  // namespace tarde
