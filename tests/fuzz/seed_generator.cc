// Writes seed corpora, so that the fuzzers start from well-formed inputs.
// Run once by hand and commit the output:
//   build-san/bin/tarde-fuzz-seeds storage tests/fuzz/corpus/storage
//   build-san/bin/tarde-fuzz-seeds command tests/fuzz/corpus/command
// storage: one file per value and key encoding, made with the real encoders
// from typical records. command: realistic sessions of several clients in
// the command target's input format (command_input.h), each exercising one
// path of docs/design.md: a whole lifecycle, retries, lease expiry and dead
// letters, parked RESERVEs, refused commits, restarts, AUTH, bad input.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "storage/codec.h"
#include "storage/keys.h"
#include "tests/fuzz/command_input.h"

namespace {

void write(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::ofstream out(dir + "/" + name, std::ios::binary);
  out << bytes;
}

void write_storage_seeds(const std::string& dir) {
  using namespace tarde::storage;

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
  // Transaction and event values in both layouts: compact, as this build
  // writes them, and cereal's, as stores before format 4 hold them.
  auto write_tx = [&dir](const std::string& name, const TxRecord& record) {
    write(dir, name, encode_tx_with_cereal_for_test(record));
    write(dir, name + "_compact", encode_tx(record));
  };
  auto write_event = [&dir](const std::string& name, const EventRecord& event) {
    write(dir, name, encode_event_with_cereal_for_test(event));
    write(dir, name + "_compact", encode_event(event));
  };
  write_tx("tx_scheduled", tx);
  TxRecord sending;
  sending.tx_id = "order-42";
  sending.queue = "q.1";
  sending.state = TxState::kSending;
  sending.next_attempt = 1;
  sending.ready_at_ms = 5;
  sending.ready_seq = 9;
  write_tx("tx_sending", sending);
  TxRecord holding = tx;  // format 3: the record holds its first and newest events
  holding.first_event =
      EventRecord{1795984996810, TxState::kNone, TxState::kSending, 0, 1, "ENQUEUE", ""};
  holding.newest_event = EventRecord{1795984996818, TxState::kInFlight, TxState::kScheduled, 1, 2,
                                     "RESPOND",     "CANCELLED"};
  write_tx("tx_holding_events", holding);

  EventRecord event{1795984996818, TxState::kSending, TxState::kScheduled, 1, 2, "RESPOND", ""};
  write_event("event", event);
  EventRecord fire{1795985001821, TxState::kScheduled, TxState::kSending, 1, 2, "timer", "",
                   1795985001818};
  write_event("event_fire", fire);
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
}

std::string enqueue(const std::string& queue, const std::string& tx_id, const std::string& options,
                    const std::string& payload) {
  return "ENQUEUE " + queue + " " + tx_id + (options.empty() ? "" : " " + options) + " " +
         std::to_string(payload.size()) + "\r\n" + payload + "\r\n";
}

void write_command_seeds(const std::string& dir) {
  using tarde::fuzz::InputWriter;
  constexpr uint8_t kMs = 0;
  constexpr uint8_t kTenths = 1;
  constexpr uint8_t kTenSeconds = 2;
  constexpr uint8_t kHours = 3;
  constexpr uint8_t kPlain = tarde::fuzz::kSetupRetryLead;
  // A whole lifecycle: created, handed out, sent, answered SUCCESS.
  InputWriter lifecycle(kPlain);
  lifecycle.send(0, enqueue("pagos", "TX-1", "", "{\"amount\":100}"))
      .commit()
      .send(1, "RESERVE pagos\r\n")
      .commit()
      .send(1, "SENT TX-1 1\r\n")
      .commit()
      .send(1, "RESPOND TX-1 1 SUCCESS\r\n")
      .commit()
      .send(0, "GET TX-1\r\nHISTORY TX-1\r\nHISTORY TX-1 limit=2\r\n")
      .commit();
  write(dir, "lifecycle", lifecycle.bytes());
  // CANCELLED, then the backoff runs out and attempt 2 goes out; a late
  // answer to attempt 1 is STALE.
  InputWriter retry(kPlain | 0x28);
  retry.send(0, enqueue("q", "order-42", "max_attempts=3 base=1s factor=2 cap=1m jitter=0.5", "x"))
      .commit()
      .send(1, "RESERVE q\r\nSENT order-42 1\r\nRESPOND order-42 1 CANCELLED reason=NO_FUNDS\r\n")
      .commit()
      .advance(kTenths, 30)
      .send(1, "RESERVE q\r\n")
      .commit()
      .send(2, "RESPOND order-42 1 SUCCESS\r\nRESPOND order-42 2 REJECTED\r\nGET order-42\r\n")
      .commit()
      .send(0, "HISTORY order-42\r\nSTATS\r\n");
  write(dir, "retry", retry.bytes());
  // TRANSIENT answers with retry_after, a response timeout, the breaker.
  InputWriter transient(kPlain);
  transient.send(0, "CONFIG t response_timeout=1s breaker=1 transient_base=1s\r\n")
      .commit()
      .send(0, enqueue("t", "TX-T", "sent=1", "p"))
      .commit()
      .send(0, "RESPOND TX-T 1 TRANSIENT retry_after=2s\r\n")
      .commit()
      .advance(kTenths, 25)
      .send(1, "RESERVE t\r\nSENT TX-T 2\r\n")
      .commit()
      .advance(kTenSeconds, 1)
      .send(1, "GET TX-T\r\nSTATS\r\n")
      .commit();
  write(dir, "transient", transient.bytes());
  // A lease runs out, deliveries reach max_deliveries: a dead letter, redriven.
  InputWriter dead(kPlain);
  dead.send(0, "CONFIG d lease=1s max_deliveries=2\r\n")
      .commit()
      .send(0, enqueue("d", "TX-D", "", "body"))
      .commit()
      .send(1, "RESERVE d\r\n")
      .advance(kTenths, 11)
      .send(1, "RESERVE d\r\n")
      .commit()
      .advance(kTenths, 11)
      .commit()
      .send(2, "DEADLETTERS d\r\nDEADLETTERS d limit=1\r\nREDRIVE d TX-D\r\n")
      .commit()
      .send(2, "RESERVE d\r\nRELEASE TX-D 1 delay=1s reason=BUSY\r\n")
      .commit()
      .advance(kTenths, 12)
      .send(2, "RESERVE d\r\n");
  write(dir, "dead_letter", dead.bytes());
  // A RESERVE that waits, served when another client enqueues; a delayed
  // first attempt; a dispatcher that hangs up holding a lease.
  InputWriter parked(kPlain);
  parked.send(1, "RESERVE w wait=5s\r\nPING\r\n")
      .send(2, "RESERVE w wait=1m\r\n")
      .send(0, enqueue("w", "TX-W1", "", "a"))
      .commit()
      .send(0, enqueue("w", "TX-W2", "delay=1s", "b"))
      .commit()
      .advance(kTenths, 11)
      .commit()
      .close(1)
      .commit()
      .send(3, "RESERVE w\r\nGET TX-W1\r\n")
      .commit();
  write(dir, "parked_reserve", parked.bytes());
  // Refused commits (a full disk) answer ERR INTERNAL; writes resume.
  InputWriter refused(kPlain);
  refused.send(0, enqueue("r", "TX-R1", "", "1"))
      .commit(true)
      .send(0, enqueue("r", "TX-R1", "", "1"))
      .send(1, enqueue("r", "TX-R2", "", "2"))
      .commit()
      .send(2, "RESERVE r\r\nSENT TX-R1 1\r\n")
      .commit(true)
      .send(2, "GET TX-R1\r\n")
      .commit();
  write(dir, "refused_commit", refused.bytes());
  // A restart loses what was not committed and every lease.
  InputWriter restart(kPlain);
  restart.send(0, enqueue("s", "TX-S1", "", "1"))
      .commit()
      .send(0, enqueue("s", "TX-S2", "", "2"))
      .send(1, "RESERVE s\r\n")
      .commit()
      .restart()
      .send(0, "GET TX-S1\r\nGET TX-S2\r\n")
      .send(1, "RESERVE s\r\nRESOLVE TX-S1 FAILED reason=GAVE_UP\r\n")
      .commit();
  write(dir, "restart", restart.bytes());
  // Terminal transactions are purged after the retention.
  InputWriter retention(kPlain);
  retention.send(0, "CONFIG e retention=1h\r\n")
      .commit()
      .send(0, enqueue("e", "TX-E", "", ""))
      .commit()
      .send(0, "RESOLVE TX-E SUCCEEDED\r\n")
      .commit()
      .advance(kHours, 2)
      .commit()
      .send(0, "GET TX-E\r\n" + enqueue("e", "TX-E", "", "again"))
      .commit();
  write(dir, "retention", retention.bytes());
  // AUTH required: commands before it are refused.
  InputWriter auth(kPlain | tarde::fuzz::kSetupAuth);
  auth.send(0, "PING\r\nGET TX-1\r\nAUTH wrong\r\nAUTH s3cret\r\n")
      .send(0, enqueue("a", "TX-A", "", "x"))
      .commit()
      .send(0, "QUIT\r\nPING\r\n");
  write(dir, "auth", auth.bytes());
  // Bad input: unknown verbs, bad arguments, a payload over the limit.
  InputWriter bad(kPlain | tarde::fuzz::kSetupSmallPayload);
  bad.send(0, "\r\nping\r\nRESERVE\r\nRESPOND TX 0 MAYBE\r\nCONFIG q rate=-1\r\n")
      .send(1, "ENQUEUE q TX-1 5 max_attempts=2\r\nhello\r\n")
      .send(2, enqueue("q", "TX-big", "", std::string(100, 'z')))
      .send(3, std::string(300, 'A'))
      .advance(kMs, 5);
  write(dir, "bad_input", bad.bytes());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[1], "storage") != 0 && std::strcmp(argv[1], "command") != 0)) {
    std::fprintf(stderr, "usage: %s <storage|command> <output-dir>\n", argv[0]);
    return 2;
  }
  if (std::strcmp(argv[1], "storage") == 0) {
    write_storage_seeds(argv[2]);
  } else {
    write_command_seeds(argv[2]);
  }
  return 0;
}
