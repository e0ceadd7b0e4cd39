#pragma once

// kSlowdown is how many times slower this build runs than a plain optimised
// one, for the few tests that must give a real process a real time budget
// (crash campaigns): they multiply their durations and bounds by it, so that
// the same test holds in build/ and under the sanitizers (scripts/
// test-sanitized, where AddressSanitizer makes a server start, a RocksDB
// open and a burst of commands several times slower). Known at compile time.
namespace tarde::testing {

#if defined(__SANITIZE_ADDRESS__)
#define TARDE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TARDE_TEST_ASAN 1
#endif
#endif

#ifdef TARDE_TEST_ASAN
inline constexpr int kSlowdown = 4;
// AddressSanitizer holds freed memory in a quarantine (256 MiB by default)
// before reusing it, so a process's resident size says little about what it
// keeps; memory bounds are checked in plain builds only.
inline constexpr bool kResidentSizeMeaningful = false;
#else
inline constexpr int kSlowdown = 1;
inline constexpr bool kResidentSizeMeaningful = true;
#endif

}  // namespace tarde::testing
