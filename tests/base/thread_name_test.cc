#include "base/thread_name.h"

#include <doctest/doctest.h>
#include <pthread.h>

#include <string>
#include <thread>

namespace tarde {
namespace {

std::string name_in_thread(const char* name) {
  std::string seen;
  std::thread thread([&] {
    name_this_thread(name);
    char buffer[32] = {};
    pthread_getname_np(pthread_self(), buffer, sizeof buffer);
    seen = buffer;
  });
  thread.join();
  return seen;
}

TEST_CASE("name_this_thread names the calling thread, cut to Linux's 15 bytes") {
  CHECK(name_in_thread("tarde-commit") == "tarde-commit");
  CHECK(name_in_thread("a-name-longer-than-fifteen") == "a-name-longer-t");
  CHECK(name_in_thread("") == "");
}

}  // namespace
}  // namespace tarde
