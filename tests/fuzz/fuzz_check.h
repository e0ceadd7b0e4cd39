#pragma once

#include <cstdio>
#include <cstdlib>

// FUZZ_CHECK aborts with the failed condition when a fuzz target's invariant
// does not hold; libFuzzer reports the abort as a crash and keeps the input.
// A macro, so that the message names the target's own file and line.
#define FUZZ_CHECK(cond)                                                                   \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                        \
    }                                                                                      \
  } while (0)
