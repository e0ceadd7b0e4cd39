// End-to-end tests of clients/cpp/client.h and tarde-cli against the real server
// binary: typed calls, multi-line replies, pipelining, error mapping, and a
// tarde-cli walkthrough checked by exit status and key output words.
#include "clients/cpp/client.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <asio.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/cli_spawn.h"

namespace tarde::client {
namespace {

using namespace std::chrono_literals;
using testing::CliTestServer;
using testing::run_cli;

std::unique_ptr<Client> connect_to(const CliTestServer& server, ClientOptions options = {}) {
  REQUIRE_MESSAGE(server.ok(), server.log());
  auto client = Client::connect("127.0.0.1", server.port(), options);
  REQUIRE_MESSAGE(client.is_ok(), client.status().to_string());
  return std::move(client).value();
}

bool contains(const std::string& text, const std::string& word) {
  return text.find(word) != std::string::npos;
}

TEST_CASE("client: typed calls walk a transaction through its retries") {
  CliTestServer server;
  auto client = connect_to(server);
  CHECK(client->ping().is_ok());

  EnqueueOptions options;
  options.base = "100ms";
  options.max_attempts = 3;
  auto created = client->enqueue("pay", "TX-1", "body", options);
  REQUIRE(created.is_ok());
  CHECK(created->status == ReplyKind::kCreated);
  CHECK(created->tx_id == "TX-1");
  CHECK(created->state == "SENDING");
  CHECK(created->attempt == 0);
  CHECK(created->next_attempt == 1);
  auto again = client->enqueue("pay", "TX-1", "other");
  REQUIRE(again.is_ok());
  CHECK(again->status == ReplyKind::kExists);

  auto reserved = client->reserve("pay");
  REQUIRE(reserved.is_ok());
  REQUIRE(reserved.value().has_value());
  CHECK(reserved.value()->tx_id == "TX-1");
  CHECK(reserved.value()->attempt == 1);
  CHECK(reserved.value()->idempotency_key == "TX-1#1");
  CHECK(reserved.value()->handouts == 1);
  CHECK(reserved.value()->payload == "body");
  auto empty = client->reserve("pay");
  REQUIRE(empty.is_ok());
  CHECK_FALSE(empty.value().has_value());

  auto sent = client->sent("TX-1", 1);
  REQUIRE(sent.is_ok());
  CHECK(sent->status == ReplyKind::kOk);
  CHECK(sent->state == "IN_FLIGHT");
  auto duplicate = client->sent("TX-1", 1);
  REQUIRE(duplicate.is_ok());
  CHECK(duplicate->status == ReplyKind::kStale);

  RespondOptions not_now;
  not_now.reason = "not_now";
  auto scheduled = client->respond("TX-1", 1, Answer::kCancelled, not_now);
  REQUIRE(scheduled.is_ok());
  CHECK(scheduled->state == "SCHEDULED");
  CHECK(scheduled->next_attempt == 2);
  CHECK(scheduled->next_fire_at_ms > 0);

  auto second = client->reserve("pay", 2s);
  REQUIRE(second.is_ok());
  REQUIRE(second.value().has_value());
  CHECK(second.value()->attempt == 2);
  auto done = client->respond("TX-1", 2, Answer::kSuccess);
  REQUIRE(done.is_ok());
  CHECK(done->state == "SUCCEEDED");

  auto tx = client->get("TX-1");
  REQUIRE(tx.is_ok());
  CHECK(tx->queue == "pay");
  CHECK(tx->state == "SUCCEEDED");
  CHECK(tx->attempt == 2);
  CHECK(tx->max_attempts == 3);
  CHECK(tx->payload_bytes == 4);
  CHECK(tx->created_at_ms > 0);
  CHECK(tx->reason.empty());

  auto events = client->history("TX-1");
  REQUIRE(events.is_ok());
  REQUIRE(events->size() >= 5);
  CHECK(events->front().cause == "ENQUEUE");
  CHECK(events->front().from.empty());  // "-" on the wire
  CHECK(events->front().seq == std::optional<uint64_t>(0));
  CHECK(dropped_events(events.value()) == 0);
  CHECK(events->back().to == "SUCCEEDED");
  bool saw_timer = false;
  for (const TxEvent& e : events.value()) {
    if (e.cause != "timer") continue;
    saw_timer = true;
    CHECK(e.due_at_ms > 0);  // a retry's fire carries its instant and lateness
    CHECK(e.late_ms.has_value());
  }
  CHECK(saw_timer);
  auto last = client->history("TX-1", 1);
  REQUIRE(last.is_ok());
  REQUIRE(last->size() == 1);
  CHECK(last->front().to == "SUCCEEDED");

  auto stats = client->stats();
  REQUIRE(stats.is_ok());
  CHECK(stats->number("transactions") == 1u);
  CHECK(stats->number("succeeded") == 1u);
  CHECK(stats->number("uptime_ms").has_value());
}

TEST_CASE("client: release, dead letters, redrive, resolve and config") {
  CliTestServer server;
  auto client = connect_to(server);
  auto config = client->config("dlq", {{"max_deliveries", "1"}, {"base", "1h"}});
  REQUIRE(config.is_ok());
  CHECK(config->queue == "dlq");
  CHECK(config->get("max_deliveries") == "1");
  CHECK(config->get("base") == "1h");
  CHECK(config->settings.size() >= 16);
  auto read_back = client->config("dlq");
  REQUIRE(read_back.is_ok());
  CHECK(read_back->get("max_deliveries") == "1");

  REQUIRE(client->enqueue("dlq", "D-1", "x").is_ok());
  REQUIRE(client->reserve("dlq").is_ok());
  ReleaseOptions why;
  why.reason = "endpoint_down";
  auto buried = client->release("D-1", 1, why);
  REQUIRE(buried.is_ok());
  CHECK(buried->status == ReplyKind::kBuried);
  CHECK(buried->state == "SENDING");

  auto letters = client->deadletters("dlq");
  REQUIRE(letters.is_ok());
  REQUIRE(letters->size() == 1);
  CHECK(letters->front().tx_id == "D-1");
  CHECK(letters->front().key == "D-1#1");
  CHECK(letters->front().last_error == "endpoint_down");
  CHECK(letters->front().buried_at_ms > 0);

  auto redriven = client->redrive("dlq", "D-1");
  REQUIRE(redriven.is_ok());
  CHECK(redriven->status == ReplyKind::kOk);
  auto missing = client->redrive("dlq", "NOPE");
  REQUIRE(missing.is_ok());
  CHECK(missing->status == ReplyKind::kNotFound);
  CHECK(missing->tx_id == "NOPE");

  auto conflict = client->resolve("D-1", Terminal::kFailed);
  REQUIRE(conflict.is_ok());
  CHECK(conflict->status == ReplyKind::kConflict);

  EnqueueOptions later;
  later.delay = "1h";
  auto waiting = client->enqueue("dlq", "D-2", "", later);
  REQUIRE(waiting.is_ok());
  CHECK(waiting->state == "SCHEDULED");
  auto resolved = client->resolve("D-2", Terminal::kSucceeded, "paid_by_phone");
  REQUIRE(resolved.is_ok());
  CHECK(resolved->status == ReplyKind::kOk);
  CHECK(resolved->state == "SUCCEEDED");
  auto stale = client->resolve("D-2", Terminal::kFailed);
  REQUIRE(stale.is_ok());
  CHECK(stale->status == ReplyKind::kStale);
  auto tx = client->get("D-2");
  REQUIRE(tx.is_ok());
  CHECK(tx->reason == "paid_by_phone");
}

TEST_CASE("client: ERR replies, NOT_FOUND and refused arguments map to Status") {
  CliTestServer server;
  auto client = connect_to(server);

  auto bad = client->respond("TX-9", 0, Answer::kSuccess);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().code() == Status::Code::kInvalidArgument);
  CHECK(server_error_code(bad.status()) == "BAD_ARGUMENT");
  CHECK(contains(bad.status().message(), "attempt"));

  EnqueueOptions odd;
  odd.jitter = "lots";
  auto bad_option = client->enqueue("q", "TX-9", "p", odd);
  REQUIRE_FALSE(bad_option.is_ok());
  CHECK(server_error_code(bad_option.status()) == "BAD_ARGUMENT");

  auto refused = client->get("has space");
  REQUIRE_FALSE(refused.is_ok());
  CHECK(server_error_code(refused.status()) == "BAD_ARGUMENT");
  CHECK(client->in_flight() == 0);  // refused before sending

  auto not_found = client->get("TX-9");
  REQUIRE_FALSE(not_found.is_ok());
  CHECK(not_found.status().code() == Status::Code::kNotFound);
  CHECK(server_error_code(not_found.status()).empty());
  auto no_history = client->history("TX-9");
  CHECK(no_history.status().code() == Status::Code::kNotFound);
  auto unknown = client->sent("TX-9", 1);
  REQUIRE(unknown.is_ok());
  CHECK(unknown->status == ReplyKind::kNotFound);

  auto raw = client->call("FROB x");
  REQUIRE(raw.is_ok());
  CHECK(raw->kind == ReplyKind::kErr);
  CHECK(raw->error_code == "BAD_COMMAND");
  CHECK_FALSE(raw->error_message.empty());
  CHECK(client->ping().is_ok());  // still in step

  CHECK(server_error_code(Status::io_error("BAD_ARGUMENT x")).empty());
  CHECK(server_error_code(Status::invalid_argument("UNAUTHORIZED send AUTH")) == "UNAUTHORIZED");
}

TEST_CASE("client: call returns multi-line and payload replies verbatim") {
  CliTestServer server;
  auto client = connect_to(server);
  const std::string binary("a\r\nb\0c\r\n", 8);
  auto created = client->call("ENQUEUE bin B-1", binary);
  REQUIRE(created.is_ok());
  CHECK(created->kind == ReplyKind::kCreated);
  CHECK(created->text == "CREATED B-1 SENDING 0 1 0\r\n");
  CHECK(created->head == "CREATED B-1 SENDING 0 1 0");

  auto request = client->call("RESERVE bin");
  REQUIRE(request.is_ok());
  CHECK(request->kind == ReplyKind::kRequest);
  REQUIRE(request->payload.has_value());
  CHECK(*request->payload == binary);
  CHECK(request->text == "REQUEST B-1 1 B-1#1 1 8\r\n" + binary + "\r\n");
  auto parsed = parse_request(request.value());
  REQUIRE(parsed.is_ok());
  CHECK(parsed->payload == binary);

  auto events = client->call("HISTORY B-1");
  REQUIRE(events.is_ok());
  CHECK(events->kind == ReplyKind::kEvents);
  REQUIRE(events->body.size() == 1);
  CHECK(events->head == "EVENTS 1");
  CHECK(events->text == "EVENTS 1\r\n" + events->body[0] + "\r\n");
  CHECK(events->body[0].rfind("EVENT at=", 0) == 0);

  auto letters = client->call("DEADLETTERS bin");
  REQUIRE(letters.is_ok());
  CHECK(letters->kind == ReplyKind::kLetters);
  CHECK(letters->text == "LETTERS 0\r\n");

  auto stats = client->call("STATS\r\n");  // a trailing CRLF is dropped, not doubled
  REQUIRE(stats.is_ok());
  CHECK(stats->kind == ReplyKind::kStats);
  CHECK(stats->body.size() >= 13);
  CHECK(contains(stats->text, "\r\ntransactions 1\r\n"));
  CHECK(client->ping().is_ok());  // the reader consumed exactly one reply each time

  auto get = client->call("GET B-1");
  REQUIRE(get.is_ok());
  CHECK(get->kind == ReplyKind::kTx);
  auto info = parse_tx_info(get->head);
  REQUIRE(info.is_ok());
  CHECK(info->payload_bytes == 8);
  CHECK(info->fields.front().first == "id");
}

TEST_CASE("client: pipelining 100 commands on one connection") {
  CliTestServer server;
  auto client = connect_to(server);
  constexpr int kCount = 100;
  for (int i = 0; i < kCount; ++i) {
    REQUIRE(client->send_only("ENQUEUE pipe P-" + std::to_string(i), "payload " + std::to_string(i))
                .is_ok());
  }
  CHECK(client->in_flight() == kCount);
  auto busy = client->call("PING");
  CHECK(busy.status().code() == Status::Code::kBusy);
  for (int i = 0; i < kCount; ++i) {
    auto reply = client->read_reply();
    REQUIRE(reply.is_ok());
    auto summary = parse_summary(reply->head);
    REQUIRE(summary.is_ok());
    CHECK(summary->status == ReplyKind::kCreated);
    CHECK(summary->tx_id == "P-" + std::to_string(i));
  }
  CHECK(client->in_flight() == 0);

  // Payload replies in flight at once come back whole and in FIFO order.
  for (int i = 0; i < kCount; ++i) REQUIRE(client->send_only("RESERVE pipe").is_ok());
  for (int i = 0; i < kCount; ++i) {
    auto reply = client->read_reply();
    REQUIRE(reply.is_ok());
    auto request = parse_request(reply.value());
    REQUIRE(request.is_ok());
    CHECK(request->tx_id == "P-" + std::to_string(i));
    CHECK(request->payload == "payload " + std::to_string(i));
  }

  // Mixed single- and multi-line replies, all in flight at once.
  for (int i = 0; i < kCount; ++i) {
    const std::string tx = "P-" + std::to_string(i);
    REQUIRE(client->send_only(i % 2 == 0 ? "GET " + tx : "HISTORY " + tx).is_ok());
  }
  for (int i = 0; i < kCount; ++i) {
    auto reply = client->read_reply();
    REQUIRE(reply.is_ok());
    CHECK(reply->kind == (i % 2 == 0 ? ReplyKind::kTx : ReplyKind::kEvents));
  }
  auto stats = client->stats();
  REQUIRE(stats.is_ok());
  CHECK(stats->number("transactions") == static_cast<uint64_t>(kCount));
  auto no_reply = client->read_reply();
  CHECK_FALSE(no_reply.is_ok());
}

TEST_CASE("client: quit, AUTH and timeouts") {
  testing::TempDir dir;
  const std::string token_file = dir.sub("token");
  std::ofstream(token_file) << "s3cret\n";
  REQUIRE(chmod(token_file.c_str(), 0600) == 0);
  CliTestServer server({"--auth-token-file", token_file});

  auto anonymous = connect_to(server);
  CHECK(anonymous->ping().is_ok());
  auto locked = anonymous->stats();
  CHECK(server_error_code(locked.status()) == "UNAUTHORIZED");
  CHECK(server_error_code(anonymous->auth("wrong")) == "UNAUTHORIZED");
  CHECK(anonymous->auth("s3cret").is_ok());
  CHECK(anonymous->stats().is_ok());
  CHECK(anonymous->quit().is_ok());
  CHECK_FALSE(anonymous->is_open());
  CHECK(anonymous->ping().code() == Status::Code::kIoError);

  ClientOptions with_token;
  with_token.auth_token = "s3cret";
  CHECK(connect_to(server, with_token)->stats().is_ok());
  with_token.auth_token = "nope";
  auto refused = Client::connect("127.0.0.1", server.port(), with_token);
  CHECK(server_error_code(refused.status()) == "UNAUTHORIZED");

  // A listener that accepts but never answers: the reply wait times out.
  asio::io_context io;
  asio::ip::tcp::acceptor silent(io, {asio::ip::make_address("127.0.0.1"), 0});
  ClientOptions quick;
  quick.timeout = 200ms;
  auto client = Client::connect("127.0.0.1", silent.local_endpoint().port(), quick);
  REQUIRE(client.is_ok());
  const auto started = std::chrono::steady_clock::now();
  const Status status = client.value()->ping();
  CHECK(status.code() == Status::Code::kIoError);
  CHECK(contains(status.message(), "timed out"));
  CHECK(std::chrono::steady_clock::now() - started < 5s);
  CHECK_FALSE(client.value()->is_open());

  auto refused_port = Client::connect("127.0.0.1", 1, quick);
  CHECK(refused_port.status().code() == Status::Code::kIoError);
}

TEST_CASE("client: list pages a state with cursors, prefix and reason") {
  CliTestServer server;
  auto client = connect_to(server);
  EnqueueOptions delayed;
  delayed.delay = "1h";
  for (const char* id : {"L-3", "L-1", "L-2"})
    REQUIRE(client->enqueue("lq", id, "", delayed).is_ok());
  EnqueueOptions sent;
  sent.sent = true;
  REQUIRE(client->enqueue("lq", "F-1", "", sent).is_ok());
  RespondOptions why;
  why.reason = "CARD";
  REQUIRE(client->respond("F-1", 1, Answer::kRejected, why).is_ok());

  std::vector<std::string> ids;
  ListOptions options;
  options.limit = 2;
  int pages = 0;
  for (;;) {
    auto page = client->list("lq", "scheduled", options);
    REQUIRE_MESSAGE(page.is_ok(), page.status().to_string());
    pages += 1;
    for (const ListItem& item : page->items) ids.push_back(item.tx_id);
    if (!page->next) break;
    options.after = page->next;
  }
  CHECK(ids == std::vector<std::string>{"L-1", "L-2", "L-3"});
  CHECK(pages == 2);
  ListOptions filtered;
  filtered.prefix = "L-2";
  auto one = client->list("lq", "scheduled", filtered);
  REQUIRE(one.is_ok());
  REQUIRE(one->items.size() == 1);
  CHECK(one->items[0].state == "SCHEDULED");
  CHECK(one->items[0].next_attempt == 1);
  CHECK(one->items[0].next_fire_at_ms > 0);
  CHECK_FALSE(one->next.has_value());
  ListOptions by_reason;
  by_reason.reason = "CARD";
  auto failed = client->list("lq", "failed", by_reason);
  REQUIRE(failed.is_ok());
  REQUIRE(failed->items.size() == 1);
  CHECK(failed->items[0].reason == "CARD");
  CHECK(failed->items[0].attempt == 1);

  // Refused before sending, and refused by the server.
  auto bad_state = client->list("lq", "two words");
  CHECK(server_error_code(bad_state.status()) == "BAD_ARGUMENT");
  CHECK(server_error_code(client->list("lq", "stuck").status()) == "BAD_ARGUMENT");
  ListOptions bad_cursor;
  bad_cursor.after = "r1.2";
  CHECK(server_error_code(client->list("lq", "scheduled", bad_cursor).status()) == "BAD_ARGUMENT");
  CHECK(client->ping().is_ok());

  auto page = parse_list_page(Reply{ReplyKind::kItems, "", "ITEMS 0 next=-", {}, {}, {}, "", ""});
  REQUIRE(page.is_ok());
  CHECK_FALSE(page->next.has_value());
  for (const char* head : {"ITEMS 0", "ITEMS 0 next=", "ITEMS 0 cursor=-"}) {
    CHECK_FALSE(parse_list_page(Reply{ReplyKind::kItems, "", head, {}, {}, {}, "", ""}).is_ok());
  }
  CHECK_FALSE(parse_item("ITEM tx=a state=SENDING").is_ok());
}

TEST_CASE("client: reply line parsers reject malformed lines") {
  auto nf = parse_summary("NOT_FOUND TX-1");
  REQUIRE(nf.is_ok());
  CHECK(nf->status == ReplyKind::kNotFound);
  CHECK(parse_summary("OK TX-1 SENDING 0 x 0").status().code() == Status::Code::kCorruption);
  CHECK_FALSE(parse_summary("PONG").is_ok());
  auto tx = parse_tx_info(
      "TX id=a=b queue=q state=FAILED attempt=1 next_attempt=0 max_attempts=4 next_fire_at=0 "
      "deadline_at=0 created_at=5 updated_at=6 deliveries=0 transients=0 reason=DEADLINE "
      "payload_bytes=0 extra=1");
  REQUIRE(tx.is_ok());
  CHECK(tx->tx_id == "a=b");
  CHECK(tx->reason == "DEADLINE");
  CHECK(tx->fields.back().first == "extra");
  CHECK_FALSE(parse_tx_info("TX id=a queue=q").is_ok());
  CHECK_FALSE(parse_event("EVENT at=1 from=- to=SENDING").is_ok());
  CHECK(parse_letter("LETTER tx=a attempt=1 key=a#1 deliveries=5 buried_at=9 last_error=-")
            ->last_error.empty());
  // An older server's `deliveries` is read as failed_deliveries.
  CHECK(tx->failed_deliveries == 0);
  CHECK(parse_letter("LETTER tx=a attempt=1 key=a#1 deliveries=5 buried_at=9 last_error=-")
            ->failed_deliveries == 5);
  auto letter = parse_letter(
      "LETTER tx=a attempt=1 key=a#1 failed_deliveries=4 buried_at=9 last_error=x "
      "payload_bytes=3");
  REQUIRE(letter.is_ok());
  CHECK(letter->failed_deliveries == 4);
  CHECK(letter->payload_bytes == 3);
}

TEST_CASE("client: queue administration calls") {
  CliTestServer server;
  auto client = connect_to(server);
  auto other = connect_to(server);
  REQUIRE(client->config("pay", {{"max_deliveries", "1"}}).is_ok());
  for (const std::string tx : {"A-1", "A-2", "B-1"}) {
    REQUIRE(client->enqueue("pay", tx, "body-" + tx).is_ok());
    auto got = client->reserve("pay");
    REQUIRE(got.is_ok());
    REQUIRE(got.value().has_value());
    CHECK(got.value()->handouts == 1);
    ReleaseOptions why;
    why.reason = tx == "A-2" ? "refused" : "timeout";
    REQUIRE(client->release(tx, 1, why)->status == ReplyKind::kBuried);
  }
  auto letters = client->deadletters("pay", {}, true);
  REQUIRE(letters.is_ok());
  REQUIRE(letters->size() == 3);
  CHECK(letters.value()[0].payload == std::optional<std::string>("body-A-1"));
  CHECK(letters.value()[0].failed_deliveries == 1);
  CHECK(letters.value()[2].payload_bytes == 8);
  CHECK_FALSE(client->deadletters("pay").value()[0].payload.has_value());

  LetterFilter filter;
  filter.prefix = "A";
  filter.last_error = "timeout";
  CHECK(client->redrive_all("pay", filter).value() == 1);
  LetterFilter limited;
  limited.limit = 1;
  CHECK(client->resolve_all("pay", Terminal::kFailed, limited, "GAVE_UP").value() == 1);
  CHECK(client->get("A-2")->reason == "GAVE_UP");
  CHECK(client->resolve_all("pay", Terminal::kSucceeded).value() == 1);
  CHECK(client->redrive_all("pay").value() == 0);
  LetterFilter bad;
  bad.limit = 0;
  CHECK(server_error_code(client->redrive_all("pay", bad).status()) == "BAD_ARGUMENT");

  auto tx = client->get_payload("A-1");
  REQUIRE(tx.is_ok());
  CHECK(tx->payload == std::optional<std::string>("body-A-1"));
  CHECK(tx->failed_deliveries == 0);
  CHECK(client->get_payload("nope").status().code() == Status::Code::kNotFound);

  auto got = client->reserve("pay");
  REQUIRE(got.is_ok());
  REQUIRE(got.value().has_value());
  CHECK(client->touch("A-1", 1)->status == ReplyKind::kOk);
  CHECK(other->touch("A-1", 1)->status == ReplyKind::kStale);

  REQUIRE(client->enqueue("pay", "P-1", "x").is_ok());
  REQUIRE(client->enqueue("refunds", "R-1", "x").is_ok());
  CHECK(client->pause("pay").is_ok());
  CHECK(client->pause("pay").is_ok());
  CHECK_FALSE(client->reserve("pay").value().has_value());
  CHECK(client->stats()->number("paused.pay") == 1u);
  auto any = client->reserve_any({"pay", "refunds"});
  REQUIRE(any.is_ok());
  REQUIRE(any.value().has_value());
  CHECK(any.value()->tx_id == "R-1");
  CHECK(client->resume("pay").is_ok());
  CHECK(client->reserve_any({"pay", "refunds"}).value()->tx_id == "P-1");
  CHECK(server_error_code(client->reserve_any({"pay", "pay"}).status()) == "BAD_ARGUMENT");
  CHECK(server_error_code(client->reserve_any({"pay", "no,comma"}).status()) == "BAD_ARGUMENT");
  CHECK(server_error_code(client->pause("bad/queue")) == "BAD_ARGUMENT");

  // Raw calls frame payload replies too, also pipelined.
  REQUIRE(client->send_only("GET A-1 payload=1").is_ok());
  REQUIRE(client->send_only("PING").is_ok());
  auto raw = client->read_reply();
  REQUIRE(raw.is_ok());
  CHECK(raw->payload == std::optional<std::string>("body-A-1"));
  CHECK(client->read_reply()->kind == ReplyKind::kPong);
}

TEST_CASE("client: EVENT lines with due, late, seq and the dropped marker, and without them") {
  // A timer fire of a server with EventRecord version 2, after a gap.
  auto fire = parse_event(
      "EVENT at=1003 from=SCHEDULED to=SENDING attempt=1 next_attempt=2 cause=timer reason=- "
      "due=1000 late=3 seq=14 dropped=12");
  REQUIRE(fire.is_ok());
  CHECK(fire->due_at_ms == 1000);
  CHECK(fire->late_ms == std::optional<int64_t>(3));
  CHECK(fire->seq == std::optional<uint64_t>(14));
  CHECK(fire->dropped_before == 12);
  // Not a timer fire, nothing dropped before it.
  auto plain = parse_event(
      "EVENT at=1 from=- to=SENDING attempt=0 next_attempt=1 cause=ENQUEUE reason=- due=- "
      "late=- seq=0");
  REQUIRE(plain.is_ok());
  CHECK(plain->due_at_ms == 0);
  CHECK_FALSE(plain->late_ms.has_value());
  CHECK(plain->seq == std::optional<uint64_t>(0));
  CHECK(plain->dropped_before == 0);
  // An older server's line: the new fields keep their defaults.
  auto old =
      parse_event("EVENT at=1 from=- to=SENDING attempt=0 next_attempt=1 cause=ENQUEUE reason=-");
  REQUIRE(old.is_ok());
  CHECK(old->due_at_ms == 0);
  CHECK_FALSE(old->late_ms.has_value());
  CHECK_FALSE(old->seq.has_value());
  CHECK(old->dropped_before == 0);
  CHECK(dropped_events({fire.value(), plain.value(), old.value()}) == 12);
  // A present field must be a number (or "-").
  for (const char* bad : {"due=x", "late=-1", "seq=1e3", "dropped="}) {
    INFO(bad);
    CHECK(parse_event(std::string("EVENT at=1 from=- to=SENDING attempt=0 next_attempt=1 "
                                  "cause=ENQUEUE reason=- ") +
                      bad)
              .status()
              .code() == Status::Code::kCorruption);
  }
}

TEST_CASE("cli: walkthrough with exit statuses") {
  CliTestServer server;
  REQUIRE_MESSAGE(server.ok(), server.log());
  const uint16_t port = server.port();

  auto run = run_cli(port, {"enqueue", "orders", "W-1", "--payload", "hello", "--base", "100ms",
                            "--max-attempts", "3"});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  CHECK(contains(run.out, "CREATED W-1"));
  CHECK(contains(run.out, "SENDING"));

  run = run_cli(port, {"reserve", "orders"});
  CHECK(run.exit_code == 0);
  CHECK(contains(run.out, "REQUEST W-1 attempt 1"));
  CHECK(contains(run.out, "W-1#1"));
  CHECK(contains(run.out, "hello"));

  run = run_cli(port, {"respond", "W-1", "1", "CANCELLED", "--reason", "not_now"});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  CHECK(contains(run.out, "SCHEDULED"));
  CHECK(contains(run.out, "next_fire_at"));
  CHECK(contains(run.out, "Z  in "));  // ISO time and relative time

  run = run_cli(port, {"reserve", "orders", "--wait", "2s"});
  CHECK(run.exit_code == 0);
  CHECK(contains(run.out, "REQUEST W-1 attempt 2"));

  run = run_cli(port, {"respond", "W-1", "2", "success"});
  CHECK(run.exit_code == 0);
  CHECK(contains(run.out, "SUCCEEDED"));

  run = run_cli(port, {"history", "W-1"});
  CHECK(run.exit_code == 0);
  for (const char* word : {"AT", "FROM", "CAUSE", "LATE", "ENQUEUE", "RESPOND", "timer", "not_now",
                           "SCHEDULED", "SUCCEEDED", " ago"}) {
    CHECK_MESSAGE(contains(run.out, word), word);
  }

  run = run_cli(port, {"respond", "W-1", "1", "SUCCESS"});
  CHECK(run.exit_code == 1);
  CHECK(contains(run.err, "STALE"));
  run = run_cli(port, {"get", "NO-SUCH"});
  CHECK(run.exit_code == 1);
  CHECK(contains(run.err, "NOT_FOUND"));
  run = run_cli(port, {"respond", "W-1", "x", "SUCCESS"});
  CHECK(run.exit_code == 2);
  CHECK(contains(run.err, "attempt"));
  run = run_cli(port, {"frobnicate"});
  CHECK(run.exit_code == 2);
  run = run_cli(port, {"get", "W-1", "--limit", "3"});
  CHECK(run.exit_code == 2);
  run = run_cli(port, {"config", "orders", "bogus=1"});
  CHECK(run.exit_code == 3);
  CHECK(contains(run.err, "BAD_ARGUMENT"));
  run = testing::run_program(std::string(TARDE_BIN_DIR) + "/tarde-cli",
                             {"--port", "1", "--timeout", "2s", "ping"});
  CHECK(run.exit_code == 3);
  CHECK(contains(run.err, "cannot connect"));

  for (const char* id : {"W-3", "W-2"}) {
    REQUIRE(run_cli(port, {"enqueue", "orders", id, "--delay", "1h"}).exit_code == 0);
  }
  run = run_cli(port, {"list", "orders", "SCHEDULED", "--limit", "1"});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  for (const char* word :
       {"TX", "NEXT_FIRE_AT", "W-2", "(1 transaction; the next page: --after tW-2)"}) {
    CHECK_MESSAGE(contains(run.out, word), word);
  }
  run = run_cli(port, {"list", "orders", "scheduled", "--after", "tW-2"});
  CHECK(run.exit_code == 0);
  CHECK(contains(run.out, "W-3"));
  CHECK(contains(run.out, "(1 transaction; the last page)"));
  run = run_cli(port, {"list", "orders", "succeeded", "--prefix", "W-", "--reason", "x"});
  CHECK(run.exit_code == 0);
  CHECK(contains(run.out, "(0 transactions; the last page)"));
  run = run_cli(port, {"--raw", "list", "orders", "scheduled", "--limit", "1"});
  CHECK(run.out == "ITEMS 1 next=tW-2\r\n" + run.out.substr(run.out.find("ITEM tx=")));
  run = run_cli(port, {"list", "orders", "ready", "--after", "tW-2"});
  CHECK(run.exit_code == 3);
  CHECK(contains(run.err, "BAD_ARGUMENT"));
}

TEST_CASE("cli: queue administration commands") {
  CliTestServer server;
  REQUIRE_MESSAGE(server.ok(), server.log());
  const uint16_t port = server.port();
  REQUIRE(run_cli(port, {"config", "dl", "max_deliveries=1"}).exit_code == 0);
  for (const std::string tx : {"A-1", "A-2"}) {
    REQUIRE(run_cli(port, {"enqueue", "dl", tx, "--payload", "body-" + tx}).exit_code == 0);
    // tarde-cli exits after reserve: the closed connection buries it (DISCONNECTED).
    REQUIRE(run_cli(port, {"reserve", "dl"}).exit_code == 0);
  }
  auto run = run_cli(port, {"deadletters", "dl", "--show-payload"});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  CHECK(contains(run.out, "FAILED_DELIVERIES"));
  CHECK(contains(run.out, "body-A-2"));
  run = run_cli(port, {"get", "A-1", "--show-payload"});
  CHECK(run.exit_code == 0);
  CHECK(contains(run.out, "failed_deliveries"));
  CHECK(contains(run.out, "body-A-1"));
  run = run_cli(port, {"redrive-all", "dl", "--prefix", "A-", "--last-error", "DISCONNECTED",
                       "--limit", "1"});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  CHECK(contains(run.out, "REDRIVEN 1"));
  run = run_cli(port, {"resolve-all", "dl", "failed", "--reason", "GAVE_UP"});
  CHECK(run.exit_code == 0);
  CHECK(contains(run.out, "RESOLVED 1"));
  run = run_cli(port, {"pause", "dl"});
  CHECK(run.exit_code == 0);
  CHECK(contains(run.out, "PAUSED dl"));
  run = run_cli(port, {"reserve", "dl,other"});
  CHECK(run.exit_code == 0);
  CHECK(contains(run.out, "EMPTY"));
  run = run_cli(port, {"resume", "dl"});
  CHECK(contains(run.out, "RESUMED dl"));
  run = run_cli(port, {"reserve", "other,dl"});
  CHECK(contains(run.out, "REQUEST A-1"));
  CHECK(contains(run.out, "handouts"));
  run = run_cli(port, {"touch", "A-1", "1"});
  CHECK(run.exit_code == 1);  // a new connection holds no lease
  CHECK(contains(run.err, "STALE"));
  // Usage errors, before connecting.
  CHECK(run_cli(port, {"reserve", "dl,bad/q"}).exit_code == 2);
  CHECK(run_cli(port, {"redrive-all", "dl", "--prefix", "has space"}).exit_code == 2);
  CHECK(run_cli(port, {"resolve-all", "dl", "maybe"}).exit_code == 2);
  CHECK(run_cli(port, {"pause"}).exit_code == 2);
  CHECK(run_cli(port, {"redrive-all", "dl", "--reason", "x"}).exit_code == 2);
  run = run_cli(port, {"redrive-all", "dl", "--limit", "10001"});
  CHECK(run.exit_code == 3);
  CHECK(contains(run.err, "BAD_ARGUMENT"));
}

TEST_CASE("cli: raw output, the shell and --help") {
  CliTestServer server;
  REQUIRE_MESSAGE(server.ok(), server.log());
  auto run = run_cli(server.port(), {"--raw", "ping"});
  CHECK(run.exit_code == 0);
  CHECK(run.out == "PONG\r\n");

  run = run_cli(server.port(), {},
                "enqueue q S-1 --max-attempts 2 hi  there\n"
                "get S-1\n"
                "RESPOND S-1 1 REJECTED reason=bad_data\n"
                "ENQUEUE q S-2 5\nab cd\n"
                "history S-1\n"
                "BOGUS\n"
                "help\n"
                "quit\n");
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  CHECK(contains(run.out, "tarde> "));
  CHECK(contains(run.out, "CREATED S-1"));
  CHECK(contains(run.out, "payload_bytes"));
  CHECK(contains(run.out, "FAILED"));
  CHECK(contains(run.out, "CREATED S-2"));
  CHECK(contains(run.out, "bad_data"));
  CHECK(contains(run.out, "BYE"));
  CHECK(contains(run.err, "BAD_COMMAND"));

  run = run_cli(server.port(), {"--raw", "get", "S-2"});
  CHECK(run.exit_code == 0);
  CHECK(run.out.rfind("TX id=S-2 ", 0) == 0);
  CHECK(contains(run.out, " payload_bytes=5\r\n"));

  run = testing::run_program(std::string(TARDE_BIN_DIR) + "/tarde-cli", {"--help"});
  CHECK(run.exit_code == 0);
  for (const char* word : {"enqueue QUEUE TX", "--payload-file", "--raw", "Exit status", "shell",
                           "--port P           server port (default 7400)", "--timeout DUR",
                           "(default 30s)", "--retry-after DUR"}) {
    CHECK_MESSAGE(contains(run.out, word), word);
  }
}

TEST_CASE("cli: a bad command line exits 2 before connecting and says why") {
  // Port 1: nothing listens there, so a line that got as far as connecting
  // would exit 3, not 2.
  const auto cli = [](const std::vector<std::string>& args) {
    std::vector<std::string> all = {"--port", "1"};
    all.insert(all.end(), args.begin(), args.end());
    return testing::run_program(std::string(TARDE_BIN_DIR) + "/tarde-cli", all);
  };
  const auto refused = [&](const std::vector<std::string>& args, const std::string& message) {
    const auto run = cli(args);
    CHECK_MESSAGE(run.exit_code == 2, message);
    CHECK_MESSAGE(contains(run.err, "tarde-cli: " + message), run.err);
  };
  refused({"--bogus", "ping"}, "unknown flag --bogus (see tarde-cli --help)");
  refused({"ping", "--bogus=1"}, "unknown flag --bogus (see tarde-cli --help)");
  refused({"ping", "--timeout"}, "--timeout needs a value (DUR)");
  refused({"reserve", "q", "--wait"}, "--wait needs a value (DUR)");
  refused({"--port", "http", "ping"}, "--port expects a number from 1 to 65535, got 'http'");
  refused({"--timeout=0", "ping"}, "--timeout expects a duration such as 10s");
  refused({"reserve", "q", "--wait", "soon"},
          "--wait must be a whole number with an optional unit");
  refused({"enqueue", "q", "T", "--factor=x"}, "--factor must be a decimal number");
  refused({"history", "T", "--limit", "0"}, "--limit must be a whole number from 1 to 1000000");
  refused({"respond", "T", "1", "SUCCESS", "--reason", "two words"}, "--reason must be");
  refused({"enqueue", "q", "T", "--sent=1"}, "--sent takes no value");
  refused({"get", "T", "--wait", "1s"}, "get does not take --wait");
  refused({"get"}, "get takes 1 argument(s), got 0");
  refused({"enqueue", "q", "T", "--payload", "a", "--payload-file", "/dev/null"},
          "give one of --payload and --payload-file");
  refused({"--wait", "1s"}, "--wait needs a command");
  refused({"list", "q", "stuck"}, "the state must be ready, leased, in_flight, scheduled,");
  refused({"list", "q"}, "list takes 2 argument(s), got 1");
  refused({"list", "q", "ready", "--after", "a\x01"}, "--after expects 1 to 201 printable");
  refused({"list", "q", "ready", "--prefix", std::string(202, 'p')},
          "--prefix must be 1 to 200 printable");
  refused({"list", "q", "ready", "--wait", "1s"}, "list does not take --wait");
  // The last of a repeated flag wins; after a lone --, words only.
  auto run = cli({"--port", "7", "--port=1", "--timeout", "2s", "ping"});
  CHECK(run.exit_code == 3);
  CHECK(contains(run.err, "cannot connect to 127.0.0.1:1"));
  run = cli({"get", "--", "--odd-id", "--bogus"});
  CHECK(run.exit_code == 2);
  CHECK(contains(run.err, "get takes 1 argument(s), got 2"));
  run = cli({"--timeout", "2s", "get", "--", "--odd-id"});
  CHECK(run.exit_code == 3);  // --odd-id is a well-formed TX: it got as far as connecting
  CHECK(contains(run.err, "cannot connect"));
}

}  // namespace
}  // namespace tarde::client

namespace tarde::client {
namespace {

TEST_CASE("client: backup() returns what BACKUP made; its refusals are Status") {
  testing::TempDir backups;
  CliTestServer server({"--backup-dir", backups.sub("b")});
  auto client = connect_to(server);
  REQUIRE(client->enqueue("q", "TX-1", "x").is_ok());
  auto made = client->backup();
  REQUIRE_MESSAGE(made.is_ok(), made.status().to_string());
  CHECK(made->id == 1);
  CHECK(made->bytes > 0);
  CHECK(made->files > 0);
  CHECK(client->backup()->id == 2);
  CHECK(parse_backup("BACKUP id=3 bytes=10 files=2 took_ms=5")->took_ms == 5);
  CHECK(parse_backup("BACKUP id=3 bytes=10").status().code() == Status::Code::kCorruption);

  CliTestServer plain;
  auto other = connect_to(plain);
  auto refused = other->backup();
  REQUIRE_FALSE(refused.is_ok());
  CHECK(server_error_code(refused.status()) == "NOT_CONFIGURED");
  CHECK(other->ping().is_ok());  // the connection stays usable
}

TEST_CASE("cli: backup prints the backup's figures; without --backup-dir it exits 3") {
  testing::TempDir backups;
  CliTestServer server({"--backup-dir", backups.sub("b")});
  REQUIRE_MESSAGE(server.ok(), server.log());
  auto run = run_cli(server.port(), {"backup"});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  CHECK(contains(run.out, "BACKUP 1"));
  CHECK(contains(run.out, "bytes"));
  CHECK(contains(run.out, "files"));
  CHECK(contains(run.out, "verified"));
  run = run_cli(server.port(), {"--raw", "backup"});
  CHECK(contains(run.out, "BACKUP id=2 bytes="));
  CHECK(run_cli(server.port(), {"backup", "now"}).exit_code == 2);

  CliTestServer plain;
  REQUIRE(plain.ok());
  run = run_cli(plain.port(), {"backup"});
  CHECK(run.exit_code == 3);
  CHECK(contains(run.err, "NOT_CONFIGURED"));
}

}  // namespace
}  // namespace tarde::client
