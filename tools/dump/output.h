#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tarde::tools {

// Rows is what every tarde-dump command produces: named columns and rows of
// text cells, printed either as an aligned table for people or as a JSON
// array of objects for scripts. Numbers stay numbers in JSON.
class Rows {
 public:
  explicit Rows(std::vector<std::string> columns) : columns_(std::move(columns)) {}
  // Cells are (text, is_number) in column order.
  void add(std::vector<std::pair<std::string, bool>> cells) { rows_.push_back(std::move(cells)); }
  size_t size() const { return rows_.size(); }
  std::string table() const;
  std::string json() const;

 private:
  std::vector<std::string> columns_;
  std::vector<std::vector<std::pair<std::string, bool>>> rows_;
};

std::pair<std::string, bool> text(std::string value);
std::pair<std::string, bool> number(int64_t value);
std::pair<std::string, bool> number(uint64_t value);
// A time in ms as "2026-11-29T19:53:57.959Z"; 0 as "-".
std::string iso_time(int64_t ms);
std::string json_string(const std::string& value);

}  // namespace tarde::tools
