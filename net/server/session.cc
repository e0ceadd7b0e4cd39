#include "net/server/session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include "base/log_record.h"
#include "net/server/replies.h"
#include "net/server/session_host.h"

namespace tarde::net {

Session::Session(SessionHost& host, asio::ip::tcp::socket socket, uint64_t id)
    : host_(host), socket_(std::move(socket)), wait_timer_(socket_.get_executor()) {
  ctx_.engine = &host_.engine();
  ctx_.conn_id = id;
  ctx_.auth_token = &host_.auth_token();
  ctx_.figures = &host_.figures();
  ctx_.backups_enabled = host_.backups_enabled();
}

void Session::start() {
  asio::error_code ignored;
  socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
  socket_.non_blocking(true, ignored);
  const Status watched = host_.read_readiness().watch(socket_.native_handle(), this);
  if (!watched.is_ok()) {
    spdlog::warn(LogRecord("session.unwatched")
                     .number("conn", ctx_.conn_id)
                     .text("error", watched.to_string())
                     .line());
    close();
    return;
  }
  watched_ = true;
  do_read();
}

void Session::refuse(std::string reply) {
  closing_ = true;
  output_ = std::move(reply);
  do_write();
}

bool Session::over_bounds() const {
  return pending_.size() >= kPendingRepliesMax || pending_bytes_ >= kOutputBytesMax;
}

void Session::do_read() {
  if (closed_ || !watched_) return;
  // Never hold more unparsed input than one maximal command.
  const size_t unparsed = input_.size() - input_start_;
  bool wanted = !closing_;
  if (wanted && over_bounds()) {
    // Replies waiting for a commit pause reading silently (the commit frees
    // them); replies waiting for the client to read are the client's doing.
    if (pending_bytes_ >= kOutputBytesMax) note_paused();
    wanted = false;
  } else if (wanted) {
    note_caught_up();
    wanted = unparsed <= kLineBytesMax + host_.decoder().payload_bytes_max() + 2;
  }
  if (wanted == reading_) return;
  const Status status = host_.read_readiness().want_input(socket_.native_handle(), this, wanted);
  if (!status.is_ok()) {
    close();
    return;
  }
  reading_ = wanted;
}

// Logged once per episode, which lasts until the client has read every
// waiting reply (reading resumes and pauses again silently meanwhile, as the
// client drains the queue): a client that never reads would otherwise fill
// the log instead of the server's memory.
void Session::note_paused() {
  if (paused_) return;
  paused_ = true;
  spdlog::warn(LogRecord("paused_reading")
                   .number("conn", ctx_.conn_id)
                   .number("replies", pending_.size())
                   .number("bytes", pending_bytes_)
                   .number("replies_max", kPendingRepliesMax)
                   .number("bytes_max", kOutputBytesMax)
                   .text("msg", "paused reading: replies wait for the client to read them")
                   .line());
}

void Session::note_caught_up() {
  if (!paused_ || !pending_.empty() || pending_bytes_ != 0) return;
  paused_ = false;
  spdlog::info(LogRecord("pause_over")
                   .number("conn", ctx_.conn_id)
                   .text("msg", "pause over: the client read every waiting reply")
                   .line());
}

void Session::on_readable(bool broken) {
  if (closed_) return;
  if (!reading_) {
    // Not reading (paused, or closing): only a broken socket is news.
    if (broken) close();
    return;
  }
  const std::shared_ptr<Session> self = shared_from_this();
  if (!read_available() || input_start_ == input_.size()) return;
  process();
  do_read();
}

bool Session::read_available() {
  // Read into one buffer shared by every session of the thread and keep only
  // the bytes that came: no size query, no zero-filling of a fresh chunk,
  // and no read buffer held by an idle connection.
  thread_local std::array<char, kReadChunkBytes> scratch;
  asio::error_code ec;
  const size_t bytes = socket_.read_some(asio::buffer(scratch), ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) return true;
  if (ec) {
    close();
    return false;
  }
  input_.append(scratch.data(), bytes);
  return true;
}

int Session::batch_read_fd() { return !closed_ && reading_ ? socket_.native_handle() : -1; }

void Session::on_received(const char* data, int64_t result) {
  if (closed_) return;
  if (result == -EAGAIN || result == -EWOULDBLOCK) return;
  if (result <= 0) {
    close();  // the end of input, or a broken connection
    return;
  }
  const std::shared_ptr<Session> self = shared_from_this();
  input_.append(data, static_cast<size_t>(result));
  if (!reading_) return;  // stopped since the pass began: the bytes wait in input_
  // A full slot: more may be waiting, read as a lone reader does.
  if (static_cast<size_t>(result) == ReadReadiness::kBatchReadBytes && !read_available()) return;
  process();
  do_read();
}

void Session::process() {
  // Replies that need no commit leave pending_ at each flush, so the count
  // bound alone would stop a pipelining client every kPendingRepliesMax
  // commands until a write completes; flushing and going on lets the byte
  // bound decide when a client that does not read is paused.
  for (;;) {
    while (!parked_ && !closing_ && !closed_ && !over_bounds() && process_one()) {
    }
    const size_t waiting = pending_.size();
    host_.after_commands();
    flush();
    const bool moved = pending_.size() < waiting;
    if (!moved || parked_ || closing_ || closed_ || over_bounds()) break;
  }
  if (input_start_ == input_.size()) {
    input_.clear();
    input_start_ = 0;
    if (input_.capacity() > kReadChunkBytes) input_.shrink_to_fit();
  } else if (input_start_ > kReadChunkBytes) {
    input_.erase(0, input_start_);
    input_start_ = 0;
  }
}

bool Session::process_one() {
  const std::string_view unparsed(input_.data() + input_start_, input_.size() - input_start_);
  if (unparsed.empty()) return false;
  DecodeResult decoded = host_.decoder().decode(unparsed);
  if (decoded.kind == DecodeResult::Kind::kNeedMore) return false;
  input_start_ += decoded.consumed;
  last_command_at_ = std::chrono::steady_clock::now();
  if (decoded.kind == DecodeResult::Kind::kError) {
    const bool close_after = closes_connection(decoded.error);
    push_reply(error_reply(decoded.error, decoded.message), 0, close_after);
    return !close_after;
  }
  host_.begin_command(activity_, last_command_at_);
  if (host_.shutting_down()) {
    push_reply(error_reply(ErrorCode::kShuttingDown, "the server is stopping"), 0, true);
    return false;
  }
  Action action = dispatch(ctx_, decoded.command);
  const uint64_t dep = action.hand_out ? host_.hand_out_seq() : host_.observed_seq();
  if (action.kind == Action::Kind::kBackup) {
    // Later pipelined commands wait for the backup's reply, as for RESERVE.
    if (auto refused = host_.start_backup(shared_from_this())) {
      push_reply(std::move(*refused), 0, false);
      return true;
    }
    parked_ = true;
    parked_for_backup_ = true;
    parked_queues_.clear();
    return false;
  }
  if (action.kind == Action::Kind::kWait) {
    parked_ = true;
    parked_queues_ = std::move(action.wait_queues);
    wait_timer_.expires_after(std::chrono::milliseconds(action.wait_ms));
    wait_timer_.async_wait(
        [self = shared_from_this()](const asio::error_code& ec) { self->on_wait_timeout(ec); });
    for (const std::string& queue : parked_queues_) host_.park(shared_from_this(), queue);
    return false;
  }
  push_reply(std::move(action.text), dep, action.close_after);
  return !action.close_after;
}

void Session::push_reply(std::string text, uint64_t dep, bool close_after) {
  if (close_after) closing_ = true;
  pending_bytes_ += text.size();
#ifdef TARDE_PLANTED_BUG_LOST_ACK
  // The planted bug of tarde-planted-lost-ack, a test-only build
  // (tests/CMakeLists.txt; never a release binary): the reply
  // forgets the commit it depends on and goes out at once, before its
  // change is durable (rather than at the end of the pass, which follows
  // the pass's commit). A server that dies before that commit loses a
  // change whose reply a client saw, which tarde-crash must report
  // (guarantee G1).
  pending_.push_back(PendingReply{std::move(text), 0, close_after});
  flush();
  host_.send_queue().send_now();
  return;
#endif
  pending_.push_back(PendingReply{std::move(text), dep, close_after});
  if (dep > host_.committed_seq()) host_.wait_for_commit(shared_from_this(), dep);
}

void Session::on_commit(uint64_t seq, bool ok) {
  if (!ok) {
    for (PendingReply& reply : pending_) {
      if (reply.dep < seq) continue;
      pending_bytes_ -= reply.text.size();
      reply.text =
          error_reply(ErrorCode::kInternal, "the store refused the write; not acknowledged");
      pending_bytes_ += reply.text.size();
      reply.dep = 0;
    }
  }
  flush();
  if (!pending_.empty() && pending_.front().dep > host_.committed_seq()) {
    host_.wait_for_commit(shared_from_this(), pending_.front().dep);
  }
}

void Session::unpark(std::string reply, uint64_t dep) {
  if (closed_) return;
  parked_ = false;
  parked_for_backup_ = false;
  wait_timer_.cancel();
  push_reply(std::move(reply), dep, false);
  process();
  do_read();
}

bool Session::parked_on(const std::string& queue) const {
  return parked_ &&
         std::find(parked_queues_.begin(), parked_queues_.end(), queue) != parked_queues_.end();
}

bool Session::try_take(const std::string& queue) {
  std::optional<std::string> got = try_reserve(ctx_, queue);
  if (!got) return false;
  taken_ = std::move(*got);
  taken_dep_ = host_.hand_out_seq();
  return true;
}

void Session::deliver() { unpark(std::move(taken_), taken_dep_); }

void Session::on_wait_timeout(const asio::error_code& ec) {
  if (ec == asio::error::operation_aborted || !parked_ || closed_) return;
  parked_ = false;
  push_reply(empty_reply(), 0, false);
  process();
  do_read();
}

void Session::flush() {
  const uint64_t committed = host_.committed_seq();
  while (!pending_.empty() && pending_.front().dep <= committed) {
    PendingReply& reply = pending_.front();
    output_ += reply.text;
    const bool last = reply.close_after;
    pending_.pop_front();
    if (last) {
      pending_.clear();
      break;
    }
  }
  do_write();
}

void Session::do_write() {
  if (writing_ || send_queued_ || closed_) return;
  if (output_.empty()) {
    if (closing_ && pending_.empty()) close();
    return;
  }
  // Replies usually fit in the socket's send buffer, so they are sent with
  // the other connections' output of this turn (SendQueue, one system call
  // for all), and only what the socket does not take waits in an
  // asynchronous write: a write that Asio completes at once still costs a
  // handler, and the turn of the scheduler (an epoll_wait) that runs it.
  send_queued_ = true;
  host_.send_queue().add(shared_from_this(), socket_.native_handle());
}

std::span<char> Session::unsent() {
  if (closed_) return {};
  return {output_.data(), output_.size()};
}

void Session::on_sent(int64_t result) {
  send_queued_ = false;
  if (closed_) return;
  size_t sent = 0;
  if (result >= 0) {
    sent = static_cast<size_t>(result);
  } else if (result != -EAGAIN && result != -EWOULDBLOCK) {
    close();
    return;
  }
  pending_bytes_ -= std::min(pending_bytes_, sent);
  if (sent < output_.size()) {
    writing_ = true;
    output_.erase(0, sent);
    write_buffer_ = std::move(output_);
    output_.clear();
    asio::async_write(socket_, asio::buffer(write_buffer_),
                      [self = shared_from_this()](const asio::error_code& ec, size_t bytes) {
                        self->on_write(ec, bytes);
                      });
    return;
  }
  output_.clear();
  after_sent_at_once();
}

void Session::on_write(const asio::error_code& ec, size_t bytes) {
  writing_ = false;
  pending_bytes_ -= std::min(pending_bytes_, bytes);
  note_caught_up();
  if (ec) {
    close();
    return;
  }
  if (!output_.empty()) {
    do_write();
    return;
  }
  if (goes_on_after_output()) resume();
}

bool Session::goes_on_after_output() {
  if (!closing_) return true;
  if (pending_.empty()) close();
  return false;
}

void Session::after_sent_at_once() {
  note_caught_up();
  if (!goes_on_after_output()) return;
  // Input that waited for the output to shrink is taken up after the
  // caller, which may be process() itself.
  if (input_start_ < input_.size() || !reading_) {
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
      if (!self->closing_ && !self->closed_ && !self->writing_) self->resume();
    });
  }
}

void Session::resume() {
  process();
  do_read();
}

void Session::begin_close() {
  if (parked_) {
    // A waiting RESERVE or BACKUP is a request still owed its one reply.
    parked_ = false;
    wait_timer_.cancel();
    push_reply(error_reply(ErrorCode::kShuttingDown,
                           parked_for_backup_ ? "the server is stopping; the backup was abandoned"
                                              : "the server is stopping"),
               0, true);
    parked_for_backup_ = false;
  }
  closing_ = true;
  flush();
}

void Session::close() {
  if (closed_) return;
  closed_ = true;
  parked_ = false;
  wait_timer_.cancel();
  if (watched_) host_.read_readiness().forget(socket_.native_handle());
  reading_ = false;
  asio::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  host_.session_closed(this);
}

}  // namespace tarde::net
