#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

// A minimal RESP2 codec (Redis's wire format), written by hand rather than
// taken from libhiredis so that Redis goes through the same Stream, the same
// event loop and the same timing as the other systems: one client code path.
// Pure functions; no state.
namespace tarde::bench {

struct RespValue {
  char type = 0;  // '+' simple, '-' error, ':' integer, '$' bulk, '*' array
  bool nil = false;
  int64_t integer = 0;
  std::string text;  // simple, error or bulk
  std::vector<RespValue> elements;
};

// A command as an array of bulk strings.
std::string resp_command(std::initializer_list<std::string_view> words);

// Parses one value at the front of `input` into *out; returns the bytes it
// used, 0 when the value is not complete yet, or SIZE_MAX when the bytes are
// not RESP.
size_t resp_parse(std::string_view input, RespValue* out);

}  // namespace tarde::bench
