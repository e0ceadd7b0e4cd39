#include "tools/bench/adapters.h"

namespace tarde::bench {

std::unique_ptr<QueueClient> make_client(EventLoop* loop, const Target& target, int index) {
  if (target.system == "tarde") return make_tarde_client(loop, target, index);
  if (target.system == "beanstalkd") return make_beanstalkd_client(loop, target, index);
  if (target.system == "redis") return make_redis_client(loop, target, index);
  if (target.system == "postgres") return make_postgres_client(loop, target, index);
  loop->fail("unknown system: " + target.system);
  return nullptr;
}

std::unique_ptr<Background> make_background(EventLoop* loop, const Target& target) {
  if (target.system == "redis") return make_redis_mover(loop, target);
  return nullptr;
}

}  // namespace tarde::bench
