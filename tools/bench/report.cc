#include "tools/bench/report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace tarde::bench {
namespace {

// One figure of one system in every round that measured it, by round.
using Rounds = std::map<int, double>;

// One table: a workload at one connection count.
struct Table {
  std::vector<std::string> systems;  // column order: first seen, tarde first
  std::vector<std::string> metrics;  // row order: first seen
  std::map<std::string, std::string> units;
  std::map<std::pair<std::string, std::string>, Rounds> values;  // (metric, system)
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

double median_of(const Rounds& rounds) {
  std::vector<double> values;
  for (const auto& [round, value] : rounds) values.push_back(value);
  return median(values);
}

// tarde's figure over the peer's, round by round (a pair ran back to back, so
// their ratio cancels what the machine did between rounds); the median of
// those ratios, or nullopt when no round measured both.
std::optional<double> median_ratio(const Rounds& tarde, const Rounds& peer) {
  std::vector<double> ratios;
  for (const auto& [round, value] : peer) {
    const auto same_round = tarde.find(round);
    if (same_round != tarde.end() && value != 0) ratios.push_back(same_round->second / value);
  }
  if (ratios.empty()) return std::nullopt;
  return median(ratios);
}

std::string format_value(double value) {
  char out[32];
  const double magnitude = value < 0 ? -value : value;
  const char* format = magnitude >= 100 ? "%.0f" : magnitude >= 10 ? "%.1f" : "%.2f";
  std::snprintf(out, sizeof out, format, value);
  return out;
}

void add_unique(std::vector<std::string>* list, const std::string& item) {
  for (const auto& existing : *list) {
    if (existing == item) return;
  }
  list->push_back(item);
}

void print_table(const std::string& title, const Table& table) {
  std::printf("\n### %s\n\n| metric | unit |", title.c_str());
  for (const auto& system : table.systems) std::printf(" %s |", system.c_str());
  std::printf("\n|---|---|");
  for (size_t i = 0; i < table.systems.size(); ++i) std::printf("---:|");
  std::printf("\n");
  for (const auto& metric : table.metrics) {
    std::printf("| %s | %s |", metric.c_str(), table.units.at(metric).c_str());
    const auto tarde = table.values.find({metric, "tarde"});
    for (const auto& system : table.systems) {
      const auto cell = table.values.find({metric, system});
      if (cell == table.values.end()) {
        std::printf(" - |");
        continue;
      }
      std::string text = format_value(median_of(cell->second));
      if (system.rfind("tarde", 0) != 0 && tarde != table.values.end()) {
        if (auto ratio = median_ratio(tarde->second, cell->second)) {
          text += " (" + format_value(*ratio) + "×)";
        }
      }
      std::printf(" %s |", text.c_str());
    }
    std::printf("\n");
  }
}

}  // namespace

int print_report(const std::string& path) {
  std::ifstream file(path);
  if (!file) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 1;
  }
  std::vector<std::string> order;
  std::map<std::string, Table> tables;
  int rounds = 0;
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream fields(line);
    std::string tag, workload, system, connections, metric, value, unit, round;
    if (!std::getline(fields, tag, '\t') || tag != "RESULT") continue;
    std::getline(fields, workload, '\t');
    std::getline(fields, system, '\t');
    std::getline(fields, connections, '\t');
    std::getline(fields, metric, '\t');
    std::getline(fields, value, '\t');
    std::getline(fields, unit, '\t');
    std::getline(fields, round, '\t');  // scripts/bench --rounds appends it
    const std::string title =
        workload + ", " + connections + " connection" + (connections == "1" ? "" : "s");
    add_unique(&order, title);
    Table& table = tables[title];
    if (system == "tarde" && (table.systems.empty() || table.systems[0] != "tarde")) {
      table.systems.insert(table.systems.begin(), system);
    }
    add_unique(&table.systems, system);
    add_unique(&table.metrics, metric);
    table.units[metric] = unit;
    table.values[{metric, system}][std::atoi(round.c_str())] = std::strtod(value.c_str(), nullptr);
    rounds = std::max(rounds, std::atoi(round.c_str()));
  }
  std::printf(
      "Each peer's cell shows its value and, in brackets, tarde's value divided by it: above 1 "
      "tarde is higher (better for rates), below 1 tarde is lower (better for times and "
      "sizes).\n");
  if (rounds > 1) {
    std::printf(
        "\nEach figure is the median of %d rounds, and each ratio the median of the rounds' "
        "ratios (tarde and the peer measured back to back in the same round).\n",
        rounds);
  }
  for (const auto& title : order) print_table(title, tables[title]);
  return 0;
}

}  // namespace tarde::bench
