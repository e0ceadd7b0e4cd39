#include "tests/support/engine_fixture.h"

#include <stdexcept>

#include "storage/keys.h"

namespace tarde::testing {

EngineFixture::EngineFixture(storage::Kv& kv_in, int64_t wall_ms,
                             engine::Engine::Options options_in)
    : kv(kv_in), clock(wall_ms), options(options_in) {
  reopen();
}

void EngineFixture::reopen() {
  engine.reset();
  store = std::make_unique<storage::Store>(kv);
  engine = std::make_unique<engine::Engine>(*store, clock, random, options);
  engine->set_ready_listener([this](const std::string& queue) { woken.push_back(queue); });
  engine::RecoveryReport report;
  Status status = engine->recover(&report);
  if (!status.is_ok()) throw std::runtime_error("recover: " + status.to_string());
}

std::vector<std::string> EngineFixture::dump() {
  std::vector<std::string> lines;
  for (size_t cf = 0; cf < storage::kCfCount; ++cf) {
    const auto family = static_cast<storage::Cf>(cf);
    Status status = kv.scan(family, "", "", [&](std::string_view key, std::string_view value) {
      lines.push_back(std::string(storage::cf_name(family)) + " " + storage::printable_key(key) +
                      " = " + storage::printable_key(value));
      return true;
    });
    if (!status.is_ok()) throw std::runtime_error("dump: " + status.to_string());
  }
  return lines;
}

storage::TxRecord EngineFixture::tx(const std::string& tx_id) {
  auto found = store->get_tx(tx_id);
  if (!found.is_ok() || !found.value()) throw std::runtime_error("no tx " + tx_id);
  return *found.value();
}

engine::EnqueueArgs enqueue_args(const std::string& queue, const std::string& tx_id,
                                 const std::string& payload) {
  engine::EnqueueArgs args;
  args.queue = queue;
  args.tx_id = tx_id;
  args.payload = payload;
  return args;
}

}  // namespace tarde::testing
