#pragma once

#include <filesystem>
#include <string>

namespace tarde::testing {

// TempDir is a fresh directory under the system temp dir, removed with
// everything in it when the TempDir goes out of scope.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace tarde::testing
