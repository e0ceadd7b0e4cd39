#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

namespace tarde {

// StringHash lets an unordered container keyed by std::string look a
// std::string_view up without building a std::string for it: with
// std::equal_to<> as the key equality, find(), count() and erase() take a
// view.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view key) const { return std::hash<std::string_view>{}(key); }
};

}  // namespace tarde
