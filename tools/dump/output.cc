#include "tools/dump/output.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/time_text.h"

namespace tarde::tools {
namespace {

// A text cell as the table shows it: on one line whatever bytes the text
// holds (a reason is the client's or the application's words). Control
// bytes, the space (it would split a column) and the backslash are written
// \xNN; UTF-8 stays as it is; a text
// longer than kTableCellBytesMax is cut and ends in "...". JSON output
// keeps the text whole.
std::string table_cell(const std::string& text) {
  constexpr size_t kTableCellBytesMax = 256;  // a table stays readable; --json has it all
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < text.size() && i < kTableCellBytesMax; ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte <= 0x20 || byte == 0x7F || byte == '\\') {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
    } else {
      out += text[i];
    }
  }
  if (text.size() > kTableCellBytesMax) out += "...";
  return out;
}

std::string cell_text(const Cell& cell) {
  struct Text {
    std::string operator()(const std::string& text) const { return table_cell(text); }
    std::string operator()(int64_t number) const { return std::to_string(number); }
    std::string operator()(uint64_t number) const { return std::to_string(number); }
  };
  return std::visit(Text{}, cell);
}

}  // namespace

std::string iso_time(int64_t ms) { return ms == 0 ? "-" : tarde::iso_utc_ms(ms); }

std::string json_output(const nlohmann::ordered_json& value) { return json_text(value, 2) + "\n"; }

std::string Rows::table() const {
  std::vector<size_t> widths;
  for (const auto& column : columns_) widths.push_back(column.size());
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], cell_text(row[i]).size());
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
    for (const auto& cell : row) cells.push_back(cell_text(cell));
    out += line(cells);
  }
  return out;
}

nlohmann::ordered_json Rows::json() const {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& row : rows_) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (size_t i = 0; i < row.size() && i < columns_.size(); ++i) {
      std::visit([&](const auto& value) { object[columns_[i]] = value; }, row[i]);
    }
    rows.push_back(std::move(object));
  }
  return rows;
}

}  // namespace tarde::tools
