#include "tools/dump/output.h"

#include "base/time_text.h"

#include <algorithm>
#include <cstdio>

namespace tarde::tools {

std::pair<std::string, bool> text(std::string value) { return {std::move(value), false}; }
std::pair<std::string, bool> number(int64_t value) { return {std::to_string(value), true}; }
std::pair<std::string, bool> number(uint64_t value) { return {std::to_string(value), true}; }

std::string iso_time(int64_t ms) { return ms == 0 ? "-" : tarde::iso_utc_ms(ms); }

std::string json_string(const std::string& value) {
  std::string out = "\"";
  for (unsigned char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7F) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string Rows::table() const {
  std::vector<size_t> widths;
  for (const auto& column : columns_) widths.push_back(column.size());
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].first.size());
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < cells.size(); ++i) {
      out += cells[i];
      if (i + 1 < cells.size()) out += std::string(widths[i] - cells[i].size() + 2, ' ');
    }
    return out + "\n";
  };
  std::string out = line(columns_);
  for (const auto& row : rows_) {
    std::vector<std::string> cells;
    for (const auto& cell : row) cells.push_back(cell.first);
    out += line(cells);
  }
  return out;
}

std::string Rows::json() const {
  std::string out = "[";
  for (size_t r = 0; r < rows_.size(); ++r) {
    out += r == 0 ? "\n  {" : ",\n  {";
    for (size_t i = 0; i < rows_[r].size() && i < columns_.size(); ++i) {
      if (i > 0) out += ", ";
      const auto& [value, is_number] = rows_[r][i];
      out += json_string(columns_[i]) + ": " + (is_number ? value : json_string(value));
    }
    out += "}";
  }
  return out + (rows_.empty() ? "]\n" : "\n]\n");
}

}  // namespace tarde::tools
