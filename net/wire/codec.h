#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The framing half of the wire protocol (net/PROTOCOL.md, "Framing" and
// "Errors"): bytes in, one complete command, need-more or an error out. Pure:
// no sockets, no engine, no clock. Token forms are checked later, by
// net/wire/tokens.h, once the command is framed.
namespace tarde::net {

// A request line is at most this many bytes including its terminator
// (PROTOCOL.md "Framing"). Bounding the line bounds what a session buffers
// before it can decide anything, whatever a client sends.
inline constexpr std::size_t kLineBytesMax = 8192;

// The default of `--max-payload` (PROTOCOL.md "Framing"): 1 MiB is far above
// a typical request body yet keeps one connection from pinning much memory.
inline constexpr std::size_t kDefaultPayloadBytesMax = std::size_t{1} << 20;

// The one verb whose line announces a payload. Verbs are matched exactly, so
// "enqueue" is just an unknown verb and carries no payload.
inline constexpr std::string_view kPayloadVerb = "ENQUEUE";

// The error codes of `ERR <CODE> <message>` replies (PROTOCOL.md "Errors").
// One enum for framing, argument and server errors, so that every layer that
// rejects a request speaks the same vocabulary.
enum class ErrorCode {
  kBadCommand,
  kBadArgument,
  kUnauthorized,
  kInternal,
  kLineTooLong,
  kPayloadTooLarge,
  kBadPayload,
  kOverloaded,
  kShuttingDown,
  kNotConfigured,  // the command needs a server setting that is not set (BACKUP: --backup-dir)
  kBusy,           // the one operation of its kind is already running (BACKUP)
  kBackupFailed,   // BACKUP was tried and failed; no new backup was recorded
};
// The last code above: what reads every code (a reply checker, a test) loops
// up to it. A new code is added before this line and named here.
inline constexpr ErrorCode kLastErrorCode = ErrorCode::kBackupFailed;

// The code as it appears on the wire: "BAD_COMMAND", "LINE_TOO_LONG", ...
const char* error_code_name(ErrorCode code);

// Whether the server closes the connection after replying with this code:
// true for LINE_TOO_LONG, PAYLOAD_TOO_LARGE, BAD_PAYLOAD, OVERLOADED and
// SHUTTING_DOWN, whose byte stream can no longer be trusted to be in step (or
// which the server refuses outright).
bool closes_connection(ErrorCode code);

// Command is one framed request: its verb and raw argument tokens, not yet
// validated. It owns its bytes, so it outlives the read buffer it came from.
struct Command {
  std::string verb;
  // Every token after the verb, in order. For a payload command (ENQUEUE) the
  // trailing length token is removed: its value is payload->size().
  std::vector<std::string> args;
  // Present exactly for a payload command; may be empty, binary, contain
  // "\r\n" and NUL.
  std::optional<std::string> payload;

  bool operator==(const Command&) const = default;
};

// What Decoder::decode found at the start of a buffer.
struct DecodeResult {
  enum class Kind {
    kCommand,   // `command` is complete; drop `consumed` bytes and decode again
    kNeedMore,  // the buffer holds a valid prefix; read more bytes and retry
    kError,     // reply `ERR error message`; see `consumed` for what to drop
  };
  Kind kind = Kind::kNeedMore;
  // kCommand: the command's bytes (line, payload and both terminators).
  // kError that keeps the connection open (closes_connection(error) is false):
  // the offending line, so the next decode starts in step.
  // kError that closes the connection and kNeedMore: 0; after a closing error
  // the stream is out of step and nothing more may be decoded from it.
  std::size_t consumed = 0;
  Command command;                         // meaningful for kCommand only
  ErrorCode error = ErrorCode::kInternal;  // meaningful for kError only
  std::string message;                     // kError: words a person can act on
};

// Decoder frames requests per PROTOCOL.md: a line ended by "\r\n" (a bare "\n"
// is accepted), tokens split on runs of spaces, and for ENQUEUE a payload of
// the length its last token gives, followed by exactly "\r\n".
//
// It is stateless: each call looks only at the start of the buffer it is
// given, so a session keeps its own buffer, appends what it reads, calls
// decode until kNeedMore, and drops `consumed` bytes after each result. Every
// decision is taken as early as the bytes allow: an over-long line as soon as
// kLineBytesMax bytes hold no '\n', a too-large or malformed length as soon as
// the line is complete, a wrong payload terminator as soon as its first byte
// arrives. Re-decoding a growing buffer costs one memchr over the line.
//
// Immutable after construction; safe to call from any thread.
class Decoder {
 public:
  explicit Decoder(std::size_t payload_bytes_max);

  // Decodes the request at the start of `buffer`:
  // - kCommand with `consumed` > 0 when a whole request is there, whatever its
  //   arguments look like (they are checked later, and the payload is already
  //   consumed so the connection stays in step);
  // - kNeedMore when `buffer` is a valid but incomplete prefix;
  // - kError BAD_COMMAND for an empty line or an ENQUEUE without a length
  //   token (the line is consumed; the connection stays open);
  // - kError LINE_TOO_LONG, PAYLOAD_TOO_LARGE or BAD_PAYLOAD otherwise, which
  //   close the connection.
  [[nodiscard]] DecodeResult decode(std::string_view buffer) const;

  [[nodiscard]] std::size_t payload_bytes_max() const { return payload_bytes_max_; }

 private:
  std::size_t payload_bytes_max_;
};

}  // namespace tarde::net
