#include "base/sched_policy.h"

#include <pthread.h>
#include <sched.h>

namespace chorus {

bool runAsBatch() {
  sched_param param{};
  return pthread_setschedparam(pthread_self(), SCHED_BATCH, &param) == 0;
}

void leaveInheritedBatch() {
  int policy = 0;
  sched_param param{};
  if (pthread_getschedparam(pthread_self(), &policy, &param) != 0 || policy != SCHED_BATCH) return;
  param.sched_priority = 0;
  pthread_setschedparam(pthread_self(), SCHED_OTHER, &param);
}

}  // namespace chorus
