#pragma once

#include <cstdio>
#include <cstdlib>

// TARDE_ASSERT is always on: a broken invariant is a programming error, and
// continuing would risk writing a wrong state to disk. It prints where it
// failed and aborts. TARDE_DASSERT is for checks too expensive for release.
#define TARDE_ASSERT(cond)                                                                       \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      std::fprintf(stderr, "tarde: assertion failed: %s at %s:%d\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                              \
    }                                                                                            \
  } while (0)

#ifdef NDEBUG
#define TARDE_DASSERT(cond) \
  do {                      \
  } while (0)
#else
#define TARDE_DASSERT(cond) TARDE_ASSERT(cond)
#endif
