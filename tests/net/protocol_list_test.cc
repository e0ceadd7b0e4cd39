// LIST over real sockets against the real `tarde serve`: the reply's shape,
// paging with cursors through every state, prefix= and reason=, what a
// restart keeps, and every error the command can answer.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/support/raw_client.h"
#include "tests/support/server_process.h"

namespace tarde::testing {
namespace {

// Real processes: select with -ts=protocol, skip with -tse=protocol.
TEST_SUITE_BEGIN("protocol");

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Every tx= of a listing, following its cursors; `pages` counts the pages.
std::vector<std::string> all(RawClient& c, const std::string& args, int* pages = nullptr) {
  std::vector<std::string> ids;
  std::string after;
  for (int page = 1; page < 1000; ++page) {
    const std::vector<std::string> lines = c.block("LIST " + args + after);
    REQUIRE_MESSAGE(starts_with(lines.at(0), "ITEMS "), lines.at(0));
    const std::vector<std::string> head = split_words(lines[0]);
    REQUIRE(head.size() == 3);
    CHECK(std::to_string(lines.size() - 1) == head[1]);
    for (size_t i = 1; i < lines.size(); ++i) ids.push_back(parse_fields(lines[i]).at("tx"));
    if (pages != nullptr) *pages = page;
    if (head[2] == "next=-") return ids;
    REQUIRE(starts_with(head[2], "next="));
    after = " after=" + head[2].substr(5);
  }
  FAIL("a listing that never ends");
  return ids;
}

using Ids = std::vector<std::string>;

TEST_CASE("LIST replies ITEMS n next=<cursor> then n ITEM lines, and pages every state") {
  ServerProcess server;
  RawClient c(server.port());
  REQUIRE(starts_with(c.command("CONFIG q lease=1h"), "CONFIG q "));
  for (const char* id : {"s-3", "s-1", "s-2", "s-5", "s-4"}) {
    REQUIRE(starts_with(c.enqueue(std::string("q ") + id + " delay=1h"), "CREATED "));
  }
  REQUIRE(starts_with(c.enqueue("q f-1 sent=1"), "CREATED "));
  REQUIRE(starts_with(c.enqueue("q f-2 sent=1"), "CREATED "));
  REQUIRE(c.command("RESPOND f-2 1 REJECTED reason=CARD") == "OK f-2 FAILED 1 0 0");
  REQUIRE(starts_with(c.enqueue("q f-3 sent=1"), "CREATED "));
  REQUIRE(c.command("RESPOND f-3 1 SUCCESS") == "OK f-3 SUCCEEDED 1 0 0");
  for (const char* id : {"r-2", "r-1", "l-1", "d-1"}) {
    REQUIRE(starts_with(c.enqueue(std::string("q ") + id), "CREATED "));
  }
  REQUIRE(c.request("RESERVE q").tx_id == "r-2");
  REQUIRE(c.command("RELEASE r-2 1") == "OK r-2 SENDING 0 1 0");  // behind the others now
  REQUIRE(c.request("RESERVE q").tx_id == "r-1");
  REQUIRE(c.command("RELEASE r-1 1") == "OK r-1 SENDING 0 1 0");
  REQUIRE(c.request("RESERVE q").tx_id == "l-1");  // stays leased
  REQUIRE(starts_with(c.command("CONFIG q max_deliveries=1"), "CONFIG q "));
  REQUIRE(c.request("RESERVE q").tx_id == "d-1");
  REQUIRE(c.command("RELEASE d-1 1 reason=GONE") == "BURIED d-1 SENDING 0 1 0");

  const std::vector<std::string> first = c.block("LIST q scheduled limit=2");
  REQUIRE(first.size() == 3);
  CHECK(first[0] == "ITEMS 2 next=ts-2");
  const std::vector<std::string> words = split_words(first[1]);
  REQUIRE(words.size() == 9);
  const char* names[] = {"ITEM",          "tx=",           "state=",      "attempt=",
                         "next_attempt=", "next_fire_at=", "updated_at=", "failed_deliveries=",
                         "reason="};
  for (size_t i = 0; i < words.size(); ++i)
    CHECK_MESSAGE(starts_with(words[i], names[i]), words[i]);
  CHECK(parse_fields(first[1]).at("tx") == "s-1");
  CHECK(parse_fields(first[1]).at("state") == "SCHEDULED");
  CHECK(std::stoll(parse_fields(first[1]).at("next_fire_at")) > wall_ms() + 3'500'000);
  CHECK(parse_fields(first[1]).at("reason") == "-");

  int pages = 0;
  CHECK(all(c, "q scheduled limit=2", &pages) == Ids{"s-1", "s-2", "s-3", "s-4", "s-5"});
  CHECK(pages == 3);
  CHECK(all(c, "q scheduled") == Ids{"s-1", "s-2", "s-3", "s-4", "s-5"});
  CHECK(all(c, "q in_flight limit=1") == Ids{"f-1"});
  CHECK(all(c, "q failed") == Ids{"f-2"});
  CHECK(all(c, "q succeeded") == Ids{"f-3"});
  CHECK(all(c, "q dead") == Ids{"d-1"});
  CHECK(all(c, "q leased") == Ids{"l-1"});
  CHECK(all(c, "q ready limit=1") == Ids{"r-2", "r-1"});    // hand-out order
  CHECK(all(c, "q ready prefix=r-") == Ids{"r-2", "r-1"});  // hand-out order too
  CHECK(all(c, "q ready prefix=r-1") == Ids{"r-1"});
  CHECK(all(c, "q scheduled prefix=s-4") == Ids{"s-4"});
  CHECK(all(c, "q scheduled prefix=zz").empty());
  CHECK(all(c, "q failed reason=CARD") == Ids{"f-2"});
  CHECK(all(c, "q dead reason=GONE") == Ids{"d-1"});
  CHECK(all(c, "q dead reason=OTHER").empty());
  CHECK(c.block("LIST empty scheduled") == std::vector<std::string>{"ITEMS 0 next=-"});
  const std::vector<std::string> dead = c.block("LIST q dead");
  REQUIRE(dead.size() == 2);
  CHECK(parse_fields(dead[1]).at("failed_deliveries") == "1");
  CHECK(parse_fields(dead[1]).at("reason") == "GONE");

  // The index is on disk: a restart lists the same (the lease is gone).
  // The server is killed before the leasing client hangs up: a hang-up it
  // saw would count a failed delivery of l-1 and, at max_deliveries=1, bury it.
  server.restart();
  c.close();
  RawClient again(server.port());
  CHECK(all(again, "q scheduled limit=3") == Ids{"s-1", "s-2", "s-3", "s-4", "s-5"});
  CHECK(all(again, "q dead") == Ids{"d-1"});
  CHECK(all(again, "q leased").empty());
}

TEST_CASE("LIST answers every malformed request with an error and keeps the connection") {
  ServerProcess server;
  RawClient c(server.port());
  REQUIRE(starts_with(c.enqueue("q a delay=1h"), "CREATED "));
  const std::string page = c.block("LIST q scheduled limit=1").at(0);
  REQUIRE(page == "ITEMS 1 next=-");
  const std::string too_long(300, 'x');
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"LIST", "ERR BAD_COMMAND "},
      {"LIST q", "ERR BAD_COMMAND "},
      {"LIST q ready extra", "ERR BAD_COMMAND "},
      {"LIST q/ ready", "ERR BAD_ARGUMENT "},
      {"LIST q READY", "ERR BAD_ARGUMENT state must be ready, leased, in_flight, scheduled, "},
      {"LIST q stuck", "ERR BAD_ARGUMENT state must be "},
      {"LIST q ready limit=0", "ERR BAD_ARGUMENT limit"},
      {"LIST q ready limit=1001", "ERR BAD_ARGUMENT limit"},
      {"LIST q ready limit=-1", "ERR BAD_ARGUMENT limit"},
      {"LIST q ready limit=ten", "ERR BAD_ARGUMENT limit"},
      {"LIST q ready after=", "ERR BAD_ARGUMENT "},
      {"LIST q ready after=-", "ERR BAD_ARGUMENT not a cursor of this listing: '-'"},
      {"LIST q ready after=ta", "ERR BAD_ARGUMENT not a cursor of this listing: 'ta'"},
      {"LIST q scheduled after=r1.2", "ERR BAD_ARGUMENT not a cursor of this listing: 'r1.2'"},
      {"LIST q scheduled after=t", "ERR BAD_ARGUMENT not a cursor of this listing"},
      {"LIST q ready after=r1.x", "ERR BAD_ARGUMENT not a cursor of this listing"},
      {"LIST q ready after=" + too_long, "ERR BAD_ARGUMENT after is not a cursor of this listing"},
      {"LIST q ready after=t\x01", "ERR BAD_ARGUMENT not a cursor of this listing: 't\\x01'"},
      {"LIST q scheduled prefix=" + too_long, "ERR BAD_ARGUMENT prefix"},
      {"LIST q scheduled prefix=a\x01", "ERR BAD_ARGUMENT prefix"},
      {"LIST q failed reason=" + too_long, "ERR BAD_ARGUMENT reason"},
      {"LIST q ready colour=red", "ERR BAD_ARGUMENT "},
      {"LIST q ready limit=1 limit=2", "ERR BAD_ARGUMENT "},
      {"LIST q limit=1 ready", "ERR BAD_COMMAND "},
  };
  for (const auto& [line, expected] : cases) {
    const std::string reply = c.command(line);
    const std::string shown = line.substr(0, 60) + " -> " + reply;
    CHECK_MESSAGE(starts_with(reply, expected), shown);
  }
  CHECK(c.block("LIST q scheduled").size() == 2);  // still in step
}

TEST_SUITE_END();

}  // namespace
}  // namespace tarde::testing
