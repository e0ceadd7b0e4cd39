#pragma once

// kSlowdown is how many times slower this build runs than a plain optimised
// one, for the few tests that must give a real process a real time budget
// (crash campaigns): they multiply their durations and bounds by it, so that
// the same test holds in build/ and under the sanitizers (scripts/
// test-sanitized, where AddressSanitizer makes a server start, a RocksDB
// open and a burst of commands several times slower). Known at compile time.
namespace tarde::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr int kSlowdown = 4;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr int kSlowdown = 4;
#else
inline constexpr int kSlowdown = 1;
#endif
#else
inline constexpr int kSlowdown = 1;
#endif

}  // namespace tarde::testing
