#include "base/json_text.h"

#include <nlohmann/json.hpp>

namespace tarde {

std::string json_text(const nlohmann::ordered_json& value, int indent) {
  // replace: invalid UTF-8 becomes U+FFFD instead of a type_error; with it,
  // dump has nothing left to throw but std::bad_alloc.
  return value.dump(indent, ' ', /*ensure_ascii=*/false,
                    nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace tarde
