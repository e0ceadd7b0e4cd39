// Writes the storage fuzz target's seed corpus: one file per value and key
// encoding, made with the real encoders from typical records, so that the
// fuzzer starts from well-formed bytes. Run once by hand and commit the output:
//   build-san/bin/tarde-fuzz-seeds tests/fuzz/corpus/storage
#include <cstdio>
#include <fstream>
#include <string>

#include "storage/codec.h"
#include "storage/keys.h"

namespace {

void write(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::ofstream out(dir + "/" + name, std::ios::binary);
  out << bytes;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tarde::storage;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output-dir>\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];

  TxRecord tx;
  tx.tx_id = "TX-1";
  tx.queue = "pagos";
  tx.state = TxState::kScheduled;
  tx.attempt = 1;
  tx.next_attempt = 2;
  tx.next_fire_at_ms = 1795985001818;
  tx.created_at_ms = 1795984996810;
  tx.updated_at_ms = 1795984996818;
  tx.reason = "CANCELLED";
  tx.payload = "{\"amount\":100}";
  tx.events = 3;
  tx.due_kind = DueKind::kRetry;
  tx.due_at_ms = tx.next_fire_at_ms;
  tx.failures = {{1795984996815, "DISCONNECTED"}, {1795984996816, "lease"}};
  write(dir, "tx_scheduled", encode_tx(tx));
  TxRecord sending;
  sending.tx_id = "order-42";
  sending.queue = "q.1";
  sending.state = TxState::kSending;
  sending.next_attempt = 1;
  sending.ready_at_ms = 5;
  sending.ready_seq = 9;
  write(dir, "tx_sending", encode_tx(sending));

  EventRecord event{1795984996818, TxState::kSending, TxState::kScheduled, 1, 2, "RESPOND", ""};
  write(dir, "event", encode_event(event));
  write(dir, "due_value", encode_due_value(DueValue{DueKind::kResponseTimeout, 3}));
  write(dir, "ready_value", encode_ready_value(ReadyValue{"TX-1", 2}));
  DeadLetter letter{"pagos", "TX-9", 2, 5, 1795984996818, "body", {{1, "timeout"}}};
  write(dir, "dead_letter", encode_dead_letter(letter));
  QueueConfig config;
  config.rate = 12.5;
  write(dir, "queue_config", encode_queue_config(config));
  write(dir, "format_version", encode_format_version(1));

  write(dir, "key_tx", tx_key("TX-1"));
  write(dir, "key_due", due_key(1795985001818, "TX-1"));
  write(dir, "key_ready", ready_key("pagos", 1795984996810, 7));
  write(dir, "key_event", event_key("TX-1", 2));
  write(dir, "key_dead", dead_key("pagos", "TX-9"));
  write(dir, "key_state", state_key("pagos", 3, "TX-1"));
  write(dir, "key_queue_config", queue_config_key("pagos"));
  return 0;
}
