#pragma once

#include <memory>

#include "tools/bench/queue_client.h"

// One factory per adapter (adapter_<system>.cc); make_client() picks one by
// Target::system.
namespace tarde::bench {

std::unique_ptr<QueueClient> make_tarde_client(EventLoop* loop, const Target& target, int index);
std::unique_ptr<QueueClient> make_beanstalkd_client(EventLoop* loop, const Target& target,
                                                    int index);
std::unique_ptr<QueueClient> make_redis_client(EventLoop* loop, const Target& target, int index);
std::unique_ptr<Background> make_redis_mover(EventLoop* loop, const Target& target);
std::unique_ptr<QueueClient> make_postgres_client(EventLoop* loop, const Target& target, int index);

}  // namespace tarde::bench
