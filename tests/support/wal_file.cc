#include "tests/support/wal_file.h"

#include <fstream>
#include <iterator>

namespace tarde::testing {

std::string file_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

size_t wal_data_end(std::string_view wal) {
  const size_t last = wal.find_last_not_of('\0');
  return last == std::string_view::npos ? 0 : last + 1;
}

}  // namespace tarde::testing
