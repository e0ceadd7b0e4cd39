#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace tarde::tools {

// One cell of a Rows table: text, or a number that stays a number in JSON.
using Cell = std::variant<std::string, int64_t, uint64_t>;

// Rows is what every tarde-dump command produces: named columns and rows of
// cells, printed either as an aligned table for people or as a JSON array of
// objects (keys in column order) for scripts.
class Rows {
 public:
  explicit Rows(std::vector<std::string> columns) : columns_(std::move(columns)) {}
  // Cells in column order.
  void add(std::vector<Cell> cells) { rows_.push_back(std::move(cells)); }
  size_t size() const { return rows_.size(); }
  std::string table() const;
  nlohmann::ordered_json json() const;

 private:
  std::vector<std::string> columns_;
  std::vector<std::vector<Cell>> rows_;
};

inline Cell text(std::string value) { return value; }
inline Cell number(int64_t value) { return value; }
inline Cell number(uint64_t value) { return value; }
// A time in ms as "2026-11-29T19:53:57.959Z"; 0 as "-".
std::string iso_time(int64_t ms);
// `value` as tarde-dump prints JSON: json_text (base/json_text.h), two spaces
// of indent, and a final newline.
std::string json_output(const nlohmann::ordered_json& value);

}  // namespace tarde::tools
