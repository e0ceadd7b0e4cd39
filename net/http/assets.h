#pragma once

#include <string_view>

namespace tarde::net::http {

// One file of the dashboard (net/http/assets/), embedded in the binary at
// build time (cmake/embed_assets.cmake writes assets.cc from the folder), so
// that tarde serves its page without files on disk or any network.
struct Asset {
  std::string_view name;  // the file name: "app.js"
  std::string_view content_type;
  std::string_view body;
};

// The asset of that file name, or nullptr.
const Asset* find_asset(std::string_view name);

}  // namespace tarde::net::http
