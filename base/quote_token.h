#pragma once

#include <string>
#include <string_view>

namespace tarde {

// Shows a client's token inside an error message: in single quotes, cut to
// its first 32 bytes plus "...", and with every byte outside 0x21-0x7E (and
// the backslash itself, so escapes stay unambiguous) written as \xNN.
// The result is always printable ASCII without spaces or CR/LF. Any layer
// uses it wherever a client's bytes are echoed: replies, logs, tool output.
std::string quote_token(std::string_view token);

}  // namespace tarde
