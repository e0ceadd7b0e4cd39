#include "base/thread_name.h"

#include <pthread.h>

namespace tarde {

void name_this_thread(const char* name) {
  char kept[16] = {};
  for (int i = 0; i < 15 && name[i] != '\0'; ++i) kept[i] = name[i];
  pthread_setname_np(pthread_self(), kept);
}

}  // namespace tarde
