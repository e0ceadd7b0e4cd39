// Protocol tests of PROTOCOL.md's error table: every code with its
// connection rule (stays open and in step, or closed after the reply), over
// real sockets against the real `tarde serve` binary.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/raw_client.h"
#include "tests/support/server_process.h"

namespace tarde::testing {
namespace {

// Real processes and wall-clock waits: select with -ts=protocol, skip with -tse=protocol.
TEST_SUITE_BEGIN("protocol");

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// The reply is `ERR <code> <message>` with a non-empty message.
void check_error(const std::string& reply, std::string_view code) {
  INFO("reply: " << reply);
  const std::string prefix = "ERR " + std::string(code) + " ";
  CHECK(starts_with(reply, prefix));
  CHECK(reply.size() > prefix.size());
}

TEST_CASE("BAD_COMMAND for an unknown verb or a wrong number of arguments; the connection stays") {
  ServerProcess server;
  RawClient c(server.port());

  for (const char* line : {"FOO",
                           "ping",
                           "Get tx",
                           "GET",
                           "GET a b",
                           "PING extra",
                           "QUIT now",
                           "STATS x",
                           "SENT tx",
                           "SENT tx 1 2",
                           "RELEASE tx",
                           "RESPOND tx 1",
                           "RESPOND tx 1 SUCCESS extra",
                           "RESOLVE tx",
                           "HISTORY",
                           "DEADLETTERS",
                           "REDRIVE q",
                           "REDRIVE q tx extra",
                           "RESERVE",
                           "RESERVE q extra",
                           "AUTH",
                           "AUTH a b",
                           "RESERVE q wait=1s extra",
                           "  "}) {
    INFO("line: '" << line << "'");
    check_error(c.command(line), "BAD_COMMAND");
    CHECK(c.command("PING") == "PONG");
  }
  // ENQUEUE with too few positionals, its payload still framed by the last token.
  check_error(c.enqueue("q"), "BAD_COMMAND");
  CHECK(c.command("PING") == "PONG");
  check_error(c.command("ENQUEUE"), "BAD_COMMAND");
  CHECK(c.command("PING") == "PONG");
  CHECK(c.command("FOO").find("FOO") != std::string::npos);  // the message names it
}

TEST_CASE("BAD_ARGUMENT for each token form, the connection stays open and in step") {
  ServerProcess server;
  RawClient c(server.port());
  CHECK(c.enqueue("q tx-1 sent=1") == "CREATED tx-1 IN_FLIGHT 1 0 0");

  const std::string long_tx(201, 'x');
  const std::string max_tx(200, 'x');
  const std::string long_queue(65, 'q');
  const std::string max_queue(64, 'q');
  for (const std::string& line : {
           "GET " + long_tx,           // tx_id over 200 bytes
           std::string("GET tx\x7f"),  // tx_id byte outside 0x21-0x7E
           std::string("GET tx\x01"),
           "RESERVE " + long_queue,           // queue over 64 bytes
           std::string("RESERVE bad/queue"),  // queue byte outside its alphabet
           std::string("RESERVE q:1"),
           std::string("SENT tx-1 0"),           // attempt 0
           std::string("SENT tx-1 1001"),        // attempt over 1000
           std::string("SENT tx-1 +1"),          // no sign
           std::string("SENT tx-1 1.0"),         // no fraction
           std::string("SENT tx-1 1e3"),         // no exponent
           std::string("RESERVE q wait=5x"),     // bad DUR unit
           std::string("RESERVE q wait=1.5s"),   // DUR is an integer
           std::string("RESERVE q wait=-1"),     // DUR is non-negative
           std::string("RESERVE q wait=3651d"),  // DUR at most 3650d
           std::string("RESERVE q wait="),       // empty value
           std::string("RESERVE q bogus=1"),     // unknown option
           std::string("RESERVE q wait=1s wait=2s"),
           std::string("GET tx-1 limit=1"),  // an option the command does not take
           std::string("RELEASE tx-1 1 reason=") + std::string(201, 'r'),
           std::string("RESPOND tx-1 1 SUCCESS retry_after=2x"),
           std::string("HISTORY tx-1 limit=100001"),
       }) {
    INFO("line: '" << line.substr(0, 80) << "'");
    check_error(c.command(line), "BAD_ARGUMENT");
    CHECK(c.command("PING") == "PONG");
  }
  // The limits themselves are accepted.
  CHECK(c.command("GET " + max_tx) == "NOT_FOUND " + max_tx);
  CHECK(c.command("RESERVE " + max_queue) == "EMPTY");
  CHECK(c.command("SENT tx-1 1000") == "STALE tx-1 IN_FLIGHT 1 0 0");
  CHECK(c.command("RESERVE q wait=0ms") == "EMPTY");
  CHECK(c.command("RESERVE q wait=3650d wait2=1").rfind("ERR BAD_ARGUMENT ", 0) == 0);
  // The message names the token.
  CHECK(c.command("RESERVE q bogus=1").find("bogus") != std::string::npos);
  CHECK(c.command("SENT tx-1 0").find("attempt") != std::string::npos);
  CHECK(c.command("GET " + long_tx).find("tx_id") != std::string::npos);
  CHECK(c.command("RESERVE bad/queue").find("queue") != std::string::npos);
  // Nothing changed.
  CHECK(c.command("GET tx-1").find("state=IN_FLIGHT") != std::string::npos);
}

TEST_CASE("an ENQUEUE whose arguments are bad has its payload read and discarded") {
  ServerProcess server;
  RawClient c(server.port());

  // The payload holds what would be commands; one write, one ERR, then PONG.
  const std::string payload = "PING\r\nQUIT\r\n";
  const std::string framed = std::to_string(payload.size()) + "\r\n" + payload + "\r\n";
  c.send("ENQUEUE q " + std::string(201, 'x') + " " + framed + "PING\r\n");
  check_error(c.read_line(), "BAD_ARGUMENT");
  CHECK(c.read_line() == "PONG");
  c.send("ENQUEUE bad/queue tx-1 " + framed + "ENQUEUE q tx-2 bogus=1 " + framed +
         "ENQUEUE q tx-3 delay=1s sent=1 " + framed + "ENQUEUE q tx-4 max_attempts=0 " + framed +
         "PING\r\n");
  check_error(c.read_line(), "BAD_ARGUMENT");
  check_error(c.read_line(), "BAD_ARGUMENT");
  check_error(c.read_line(), "BAD_ARGUMENT");
  check_error(c.read_line(), "BAD_ARGUMENT");
  CHECK(c.read_line() == "PONG");
  CHECK(c.command("GET tx-1") == "NOT_FOUND tx-1");
  CHECK(c.block("STATS").front().rfind("STATS ", 0) == 0);
  CHECK(c.command("PING") == "PONG");
  CHECK(c.buffered().empty());
}

TEST_CASE("requests split at any byte, a bare LF terminator and runs of spaces are accepted") {
  ServerProcess server;
  RawClient c(server.port());
  CHECK(c.command("PING") == "PONG");
  c.send("PING\n");
  CHECK(c.read_line() == "PONG");
  const std::string bytes = "ENQUEUE  q  tx-1   3\r\nA\r\n\r\nGET tx-1\r\n";
  for (char byte : bytes) c.send(std::string_view(&byte, 1));
  CHECK(c.read_line() == "CREATED tx-1 SENDING 0 1 0");
  CHECK(c.read_line().find("payload_bytes=3") != std::string::npos);
  // After a payload only CRLF is accepted, never a bare LF.
  c.send("ENQUEUE q tx-2 1\r\nA\n");
  check_error(c.read_line(), "BAD_PAYLOAD");
  CHECK(c.is_closed_by_peer());
}

TEST_CASE("LINE_TOO_LONG for a line over 8192 bytes, then the connection is closed") {
  ServerProcess server;
  {
    // 8192 bytes with the terminator is the longest legal line.
    RawClient c(server.port());
    c.send("PING" + std::string(8192 - 4 - 2, ' ') + "\r\n");
    CHECK(c.read_line() == "PONG");
    c.send("PING" + std::string(8192 - 4 - 1, ' ') + "\n");
    CHECK(c.read_line() == "PONG");
  }
  {
    // 8193 bytes with the terminator.
    RawClient c(server.port());
    c.send("PING" + std::string(8193 - 4 - 2, ' ') + "\r\n");
    check_error(c.read_line(), "LINE_TOO_LONG");
    CHECK(c.is_closed_by_peer());
  }
  {
    // Decided without waiting for a terminator that never comes.
    RawClient c(server.port());
    c.send("GET " + std::string(9000, 'x'));
    check_error(c.read_line(), "LINE_TOO_LONG");
    CHECK(c.is_closed_by_peer());
  }
  {
    // Replies before the closing error still come, in order, once committed.
    RawClient c(server.port());
    c.send("ENQUEUE q tx-1 1\r\nx\r\nPING\r\n" + std::string(9000, 'x'));
    CHECK(c.read_line() == "CREATED tx-1 SENDING 0 1 0");
    CHECK(c.read_line() == "PONG");
    check_error(c.read_line(), "LINE_TOO_LONG");
    CHECK(c.is_closed_by_peer());
  }
  RawClient c(server.port());
  CHECK(c.command("PING") == "PONG");
  CHECK(c.command("GET tx-1").find(" state=SENDING ") != std::string::npos);
}

TEST_CASE("PAYLOAD_TOO_LARGE for a length over --max-payload, then the connection is closed") {
  ServerProcess server({"--max-payload", "16"});
  {
    RawClient c(server.port());
    CHECK(c.enqueue("q tx-16", std::string(16, 'p')) == "CREATED tx-16 SENDING 0 1 0");
    // Refused as soon as the line is complete, before any payload byte.
    c.send("ENQUEUE q tx-17 17\r\n");
    check_error(c.read_line(), "PAYLOAD_TOO_LARGE");
    CHECK(c.is_closed_by_peer());
  }
  {
    RawClient c(server.port());
    c.send("ENQUEUE q tx-big 99999999999999999999\r\n");
    const std::string reply = c.read_line();
    CHECK((starts_with(reply, "ERR PAYLOAD_TOO_LARGE ") || starts_with(reply, "ERR BAD_PAYLOAD ")));
    CHECK(c.is_closed_by_peer());
  }
  RawClient c(server.port());
  CHECK(c.command("GET tx-17") == "NOT_FOUND tx-17");
}

TEST_CASE("BAD_PAYLOAD when the payload is not followed by CRLF or its length is not a number") {
  ServerProcess server;
  SUBCASE("payload not followed by CRLF") {
    RawClient c(server.port());
    c.send("ENQUEUE q tx-1 3\r\nabcXY");
    check_error(c.read_line(), "BAD_PAYLOAD");
    CHECK(c.is_closed_by_peer());
  }
  SUBCASE("length not a number") {
    RawClient c(server.port());
    c.send("ENQUEUE q tx-1 abc\r\n");
    check_error(c.read_line(), "BAD_PAYLOAD");
    CHECK(c.is_closed_by_peer());
  }
  SUBCASE("length with a sign") {
    RawClient c(server.port());
    c.send("ENQUEUE q tx-1 +3\r\nabc\r\n");
    check_error(c.read_line(), "BAD_PAYLOAD");
    CHECK(c.is_closed_by_peer());
  }
  SUBCASE("length shorter than the payload sent") {
    RawClient c(server.port());
    c.send("ENQUEUE q tx-1 2\r\nabc\r\n");
    check_error(c.read_line(), "BAD_PAYLOAD");
    CHECK(c.is_closed_by_peer());
  }
  SUBCASE("length longer than the payload sent") {
    RawClient c(server.port());
    c.send("ENQUEUE q tx-1 5\r\nabc\r\n");
    // The server waits for 5 bytes and the CRLF; the next command breaks it.
    CHECK_FALSE(c.is_closed_by_peer(std::chrono::milliseconds(100)));
    c.send("PING\r\n");
    check_error(c.read_line(), "BAD_PAYLOAD");
    CHECK(c.is_closed_by_peer());
  }
  RawClient c(server.port());
  CHECK(c.command("GET tx-1") == "NOT_FOUND tx-1");
}

TEST_CASE("OVERLOADED for a connection over --max-connections, then it is closed") {
  ServerProcess server({"--max-connections", "2"});
  RawClient first(server.port());
  RawClient second(server.port());
  CHECK(first.command("PING") == "PONG");
  CHECK(second.command("PING") == "PONG");
  {
    RawClient third(server.port());
    const std::string reply = third.read_line();
    check_error(reply, "OVERLOADED");
    CHECK(reply.find("--max-connections 2") != std::string::npos);
    CHECK(third.is_closed_by_peer());
  }
  // The first two are untouched; once one leaves, a new connection is served.
  CHECK(first.command("PING") == "PONG");
  CHECK(second.command("QUIT") == "BYE");
  CHECK(second.is_closed_by_peer());
  second.close();
  // The server may take a moment to notice the close: retry for a while.
  bool served = false;
  for (int i = 0; i < 200 && !served; ++i) {
    RawClient next(server.port());
    next.send("PING\r\n");
    served = next.read_line() == "PONG";
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(served);
}

TEST_CASE("SIGTERM stops the server cleanly: a waiting RESERVE gets ERR SHUTTING_DOWN, exit 0") {
  ServerProcess server;
  RawClient idle(server.port());
  RawClient waiting(server.port());
  CHECK(idle.enqueue("q tx-1") == "CREATED tx-1 SENDING 0 1 0");
  CHECK(idle.command("PING") == "PONG");
  CHECK(waiting.request("RESERVE q").key == "tx-1#1");
  waiting.send("RESERVE q wait=30s\r\n");  // parked when the signal comes
  CHECK_FALSE(waiting.is_closed_by_peer(std::chrono::milliseconds(50)));

  const auto before = std::chrono::steady_clock::now();
  server.kill(SIGTERM);
  // The parked RESERVE is owed its reply: ERR SHUTTING_DOWN, then the close.
  check_error(waiting.read_line(), "SHUTTING_DOWN");
  CHECK(waiting.is_closed_by_peer(std::chrono::seconds(5)));
  REQUIRE(server.log().find("stopping") != std::string::npos);  // the stop has begun
  // A command sent once the stop has begun finds the connection closed (the
  // server closes idle connections at once); ERR SHUTTING_DOWN is for
  // commands it reads while a commit is still in flight.
  if (idle.try_send("PING\r\n")) {
    std::string reply;
    try {
      reply = idle.read_line();
    } catch (const std::runtime_error&) {
      reply = "<closed>";
    }
    INFO("reply during shutdown: " << reply);
    CHECK((reply == "<closed>" || starts_with(reply, "ERR SHUTTING_DOWN ")));
  }
  CHECK(idle.is_closed_by_peer(std::chrono::seconds(5)));

  const int status = server.wait_exit(std::chrono::seconds(5));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(std::chrono::steady_clock::now() - before < std::chrono::seconds(5));
  CHECK(server.log().find("tarde stopped") != std::string::npos);

  // What was acknowledged before the stop is there after it.
  server.restart();
  RawClient c(server.port());
  CHECK(c.command("GET tx-1").find("state=SENDING") != std::string::npos);
}

TEST_SUITE_END();

}  // namespace
TEST_CASE("--idle-timeout closes slow or silent connections, never a waiting RESERVE") {
  ServerProcess server({"--idle-timeout", "300ms"});
  RawClient silent(server.port());
  RawClient slow(server.port());
  slow.send("PIN");  // a line that never completes: slow-loris
  RawClient waiting(server.port());
  waiting.send("RESERVE q wait=2500ms\r\n");
  RawClient busy(server.port());
  for (int i = 0; i < 15; ++i) {  // 1.5 s of a command every 100 ms
    CHECK(busy.command("PING") == "PONG");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(silent.is_closed_by_peer(std::chrono::seconds(3)));
  CHECK(slow.is_closed_by_peer(std::chrono::seconds(3)));
  CHECK(waiting.read_line() == "EMPTY");  // after its full wait, not closed for idleness
  CHECK(busy.is_closed_by_peer(std::chrono::seconds(3)));  // idle since its last PING
}

}  // namespace tarde::testing
