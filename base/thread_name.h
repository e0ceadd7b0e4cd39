#pragma once

namespace tarde {

// Names the calling thread as `top -H`, perf and /proc/<pid>/task/*/comm show
// it, so that an operator or a profile can tell tarde's threads apart. Linux
// keeps the first 15 bytes.
void name_this_thread(const char* name);

}  // namespace tarde
