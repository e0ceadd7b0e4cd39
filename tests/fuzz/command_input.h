#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

// The input format of the command fuzz target (command_fuzz.cc), shared with
// the seed generator (seed_generator.cc) that writes realistic inputs in it.
//
// Byte 0 sets up the server: bit 0 requires AUTH with kAuthToken, bit 1
// limits payloads to kSmallPayloadBytesMax, bit 2 queues retries
// kRetryLeadMs early (as tarde serve does), bits 3-7 seed the jitter. Then
// come operations, each an op byte whose low three bits are the kind and
// whose high five bits its argument (`arg`):
//   kSend      arg % kConnections picks a connection; a length byte L and
//              L bytes follow: what that client sends next.
//   kAdvance   a byte n follows: the clock moves n × kAdvanceUnitsMs[arg % 4]
//              and every timer then due fires.
//   kCommit    the group commit writes what is staged; arg odd: the store
//              refuses the write (a full disk).
//   kClose     the client of connection arg % kConnections hangs up; a new
//              client takes its place.
//   kRestart   the server dies (what was not committed is lost) and starts
//              again on the same store; every client reconnects.
// An input that ends in the middle of an operation ends there.
namespace tarde::fuzz {

enum class OpKind : uint8_t {
  kSend = 0,
  kAdvance = 1,
  kCommit = 2,
  kClose = 3,
  kRestart = 4,
  // 5, 6 and 7 are sends too, so that most operations send bytes.
};

inline constexpr std::size_t kConnections = 4;
inline constexpr std::string_view kAuthToken = "s3cret";
inline constexpr std::size_t kSmallPayloadBytesMax = 64;
inline constexpr int64_t kRetryLeadMs = 10;
// A millisecond, a tenth of a second, ten seconds, an hour: enough to reach
// a lease's end (30 s), a backoff (2 h) and the retention (7 d) in a few steps.
inline constexpr int64_t kAdvanceUnitsMs[4] = {1, 100, 10'000, 3'600'000};

inline constexpr uint8_t kSetupAuth = 1;
inline constexpr uint8_t kSetupSmallPayload = 2;
inline constexpr uint8_t kSetupRetryLead = 4;

inline OpKind op_kind(uint8_t op) {
  const uint8_t kind = op & 7;
  return kind >= 5 ? OpKind::kSend : static_cast<OpKind>(kind);
}
inline uint8_t op_arg(uint8_t op) { return op >> 3; }
inline uint8_t op_byte(OpKind kind, uint8_t arg) {
  return static_cast<uint8_t>((arg << 3) | static_cast<uint8_t>(kind));
}

// Builds an input: the seed generator's side of the format.
class InputWriter {
 public:
  explicit InputWriter(uint8_t setup) { bytes_.push_back(static_cast<char>(setup)); }
  // Sends `text` on connection `conn`, in chunks of at most 255 bytes.
  InputWriter& send(std::size_t conn, std::string_view text) {
    do {
      const std::size_t take = text.size() < 255 ? text.size() : 255;
      op(OpKind::kSend, static_cast<uint8_t>(conn));
      bytes_.push_back(static_cast<char>(take));
      bytes_.append(text.substr(0, take));
      text.remove_prefix(take);
    } while (!text.empty());
    return *this;
  }
  InputWriter& advance(uint8_t unit, uint8_t count) {
    op(OpKind::kAdvance, unit);
    bytes_.push_back(static_cast<char>(count));
    return *this;
  }
  InputWriter& commit(bool fail = false) { return op(OpKind::kCommit, fail ? 1 : 0); }
  InputWriter& close(std::size_t conn) { return op(OpKind::kClose, static_cast<uint8_t>(conn)); }
  InputWriter& restart() { return op(OpKind::kRestart, 0); }
  const std::string& bytes() const { return bytes_; }

 private:
  InputWriter& op(OpKind kind, uint8_t arg) {
    bytes_.push_back(static_cast<char>(op_byte(kind, arg)));
    return *this;
  }
  std::string bytes_;
};

}  // namespace tarde::fuzz
