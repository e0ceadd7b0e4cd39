#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace tarde {

// The one way tarde writes JSON (the --log-format json log lines,
// tarde-dump --json, the HTTP API): `value` as JSON text that is valid
// whatever bytes its strings hold. Valid UTF-8 is written as it is, control
// bytes are escaped, and each byte that is not valid UTF-8 becomes U+FFFD, so
// a tx_id or a file name never breaks a line and never throws. Objects are
// ordered_json so that keys come out in the order they were set.
// indent < 0: all on one line; otherwise one member per line, indented by
// that many spaces per level. No trailing newline.
std::string json_text(const nlohmann::ordered_json& value, int indent = -1);

}  // namespace tarde
