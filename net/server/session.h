#pragma once

#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "net/core/waiters.h"
#include "net/server/client_activity.h"
#include "net/server/commands.h"
#include "net/server/read_readiness.h"
#include "net/server/send_queue.h"

namespace tarde::net {

class SessionHost;

// Session is one client connection: it reads bytes, decodes commands, runs
// them in order, and writes their replies in order. A mutating reply waits
// until the commit holding its effect is durable (its `dep` group seq); a
// reply that depends on nothing staged goes out at once, behind the replies
// queued before it. A RESERVE with wait= parks the session without holding a
// thread; while parked, later pipelined commands wait their turn.
//
// Bounds: at most kPendingRepliesMax replies or kOutputBytesMax bytes wait
// for a client; past that the session stops reading, so a client that never
// reads cannot make the server buffer without bound. A pause at the byte
// bound is logged once, and its end (every reply read) once. Lifetime: shared_ptr,
// held by its host from start() until close(), and by its pending async
// operations. io thread only.
class Session final : public std::enable_shared_from_this<Session>,
                      public ReserveWaiter,
                      public CommitWaiter,
                      public ReadReadiness::Reader,
                      public SendQueue::Sender {
 public:
  // A client that pipelines without reading is paused past these.
  static constexpr size_t kPendingRepliesMax = 1024;
  static constexpr size_t kOutputBytesMax = 8 << 20;
  // The most read from the socket at a time (into a buffer per thread, not
  // per session), and the input a session keeps allocated between reads.
  static constexpr size_t kReadChunkBytes = 64 << 10;

  Session(SessionHost& host, asio::ip::tcp::socket socket, uint64_t id);
  void start();
  // Sends the one reply of a refused connection, then closes.
  void refuse(std::string reply);
  // The commit of group `seq` finished: replies up to it may go (or fail).
  void on_commit(uint64_t seq, bool ok) override;
  // A parked RESERVE or BACKUP got its answer (REQUEST, BACKUP, or ERR).
  void unpark(std::string reply, uint64_t dep);
  bool parked_on(const std::string& queue) const;
  // ReserveWaiter: the Core hands a parked RESERVE its request.
  bool waits_on(const std::string& queue) const override { return parked_on(queue); }
  bool try_take(const std::string& queue) override;
  void deliver() override;
  // True when the connection completed no command since `since` and neither
  // waits in RESERVE nor has replies on their way: the idle sweep closes it.
  bool idle_since(std::chrono::steady_clock::time_point since) const {
    return last_command_at_ < since && !parked_ && pending_.empty() && !writing_ && !send_queued_;
  }
  // ReadReadiness::Reader: input came (or the socket broke).
  void on_readable(bool broken) override;
  int batch_read_fd() override;
  void on_received(const char* data, int64_t result) override;
  // SendQueue::Sender: the output queued with the host goes.
  std::span<char> unsent() override;
  void on_sent(int64_t result) override;
  CommandContext& context() { return ctx_; }
  ClientActivity::Mark& activity() { return activity_; }
  void close();
  // Stops taking commands; closes once every queued reply is written.
  void begin_close();

 private:
  struct PendingReply {
    std::string text;
    uint64_t dep = 0;  // group seq the reply waits for; 0 = none
    bool close_after = false;
  };

  void do_read();
  // One read of what the socket holds into input_; false when the
  // connection broke (and is closed).
  bool read_available();
  void process();
  bool process_one();
  void push_reply(std::string text, uint64_t dep, bool close_after);
  void flush();
  void do_write();
  void on_write(const asio::error_code& ec, size_t bytes);
  // Every byte of output is written: a closing session closes once no
  // reply waits, and the answer is false; otherwise true.
  bool goes_on_after_output();
  // do_write() sent every byte without waiting: as above, and input that
  // waited for the output to shrink is taken up.
  void after_sent_at_once();
  // Processes buffered input and asks for more.
  void resume();
  void on_wait_timeout(const asio::error_code& ec);
  bool over_bounds() const;
  void note_paused();
  void note_caught_up();

  SessionHost& host_;
  asio::ip::tcp::socket socket_;
  asio::steady_timer wait_timer_;
  CommandContext ctx_;
  std::string input_;
  size_t input_start_ = 0;
  std::deque<PendingReply> pending_;
  std::string output_;
  std::string write_buffer_;  // the bytes of the one write in flight
  size_t pending_bytes_ = 0;
  bool watched_ = false;      // registered with the host's ReadReadiness
  bool reading_ = false;      // wants input from the ReadReadiness
  bool paused_ = false;       // reading stopped at the output bounds; logged once
  bool writing_ = false;      // an asynchronous write of write_buffer_ is in flight
  bool send_queued_ = false;  // output_ waits in the host's SendQueue
  bool parked_ = false;       // waiting in RESERVE wait=, or for BACKUP
  bool parked_for_backup_ = false;
  std::vector<std::string> parked_queues_;  // a RESERVE may wait on several
  std::string taken_;                       // the reply try_take() got, until deliver()
  uint64_t taken_dep_ = 0;
  bool closing_ = false;  // no more input is processed; close once output is out
  bool closed_ = false;
  std::chrono::steady_clock::time_point last_command_at_ = std::chrono::steady_clock::now();
  ClientActivity::Mark activity_;  // the host's count of busy connections
};

}  // namespace tarde::net
