#include "net/server/client_activity.h"

#include <doctest/doctest.h>

#include <chrono>

namespace tarde::net {
namespace {

using std::chrono::milliseconds;

TEST_CASE("client activity counts each connection once within one to two windows") {
  ClientActivity activity(milliseconds(10));
  const ClientActivity::TimePoint start{milliseconds(1000)};
  ClientActivity::Mark a;
  ClientActivity::Mark b;
  CHECK(activity.active(start) == 0);

  activity.note(a, start);
  activity.note(a, start + milliseconds(1));  // the same connection again
  activity.note(b, start + milliseconds(2));
  CHECK(activity.active(start + milliseconds(3)) == 2);

  // The next window still counts both; a command in it moves a, not adds it.
  activity.note(a, start + milliseconds(12));
  CHECK(activity.active(start + milliseconds(13)) == 2);
  // Two windows on, b's command is too old; a's is in the previous window.
  CHECK(activity.active(start + milliseconds(25)) == 1);
  // Long quiet: nobody.
  CHECK(activity.active(start + milliseconds(100)) == 0);
  activity.note(b, start + milliseconds(101));
  CHECK(activity.active(start + milliseconds(101)) == 1);
}

TEST_CASE("client activity forgets a closed connection, in either window") {
  ClientActivity activity(milliseconds(10));
  const ClientActivity::TimePoint start{milliseconds(1000)};
  ClientActivity::Mark a;
  ClientActivity::Mark b;
  ClientActivity::Mark c;
  activity.note(a, start);
  activity.note(b, start + milliseconds(11));
  activity.note(c, start + milliseconds(12));
  CHECK(activity.active(start + milliseconds(13)) == 3);
  activity.forget(a);  // in the previous window
  CHECK(activity.active(start + milliseconds(13)) == 2);
  activity.forget(b);  // in the current one
  CHECK(activity.active(start + milliseconds(13)) == 1);
  activity.forget(b);  // twice is harmless
  CHECK(activity.active(start + milliseconds(13)) == 1);

  // A connection that closes after its command fell out of both windows
  // takes nothing from the newer counts.
  ClientActivity::Mark old;
  activity.note(old, start + milliseconds(14));
  activity.note(c, start + milliseconds(40));
  activity.forget(old);
  CHECK(activity.active(start + milliseconds(41)) == 1);
}

}  // namespace
}  // namespace tarde::net
