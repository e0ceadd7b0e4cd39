#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/bench/event_loop.h"
#include "tools/bench/stream.h"
#include "tools/bench/text_reply.h"

namespace tarde::bench {

// Sends one request line and expects a one-line reply whose first word is
// `expect`; anything else fails the run, naming `system`. Shared by the
// line-protocol adapters (tarde, beanstalkd), whose simple replies all look
// alike.
inline void line_request(Stream& stream, EventLoop& loop, std::string_view system,
                         const std::string& request, std::string expect,
                         std::function<void(const std::vector<std::string_view>&)> on_reply) {
  stream.request(
      request + "\r\n",
      [&loop, system, expect = std::move(expect), on_reply](std::string_view input) -> size_t {
        const auto head = first_line(input);
        if (!head) return 0;
        const auto words = split_words(head->text);
        if (words.empty() || words[0] != expect) {
          loop.fail(std::string(system) + ": expected " + expect +
                    ", got: " + std::string(head->text));
          return head->bytes;
        }
        on_reply(words);
        return head->bytes;
      });
}

}  // namespace tarde::bench
