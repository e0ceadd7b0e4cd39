#include "storage/codec.h"

#include <cereal/archives/portable_binary.hpp>
#include <cereal/cereal.hpp>
#include <exception>
#include <istream>
#include <sstream>
#include <streambuf>

#include "base/assert.h"
#include "storage/compact_record.h"
#include "storage/keys.h"
#include "storage/record_bytes.h"

// Class versions of the persisted structs (storage/value_format.h). They are
// stored on disk (once per type per value, before the type's first fields); a
// layout change gives one its own version and keeps the reader of the old
// layout. See storage/FORMAT.md.
CEREAL_CLASS_VERSION(tarde::storage::RetryPolicy, tarde::storage::kClassVersion);
CEREAL_CLASS_VERSION(tarde::storage::DeliveryFailure, tarde::storage::kClassVersion);
CEREAL_CLASS_VERSION(tarde::storage::TxRecord, tarde::storage::kTxRecordVersion);
CEREAL_CLASS_VERSION(tarde::storage::EventRecord, tarde::storage::kEventRecordVersion);
CEREAL_CLASS_VERSION(tarde::storage::DueValue, tarde::storage::kClassVersion);
CEREAL_CLASS_VERSION(tarde::storage::ReadyValue, tarde::storage::kClassVersion);
CEREAL_CLASS_VERSION(tarde::storage::DeadLetter, tarde::storage::kClassVersion);
CEREAL_CLASS_VERSION(tarde::storage::QueueConfig, tarde::storage::kQueueConfigVersion);

namespace tarde::storage {
namespace {

using OutArchive = cereal::PortableBinaryOutputArchive;
using InArchive = cereal::PortableBinaryInputArchive;

// Strings are read in chunks of this many bytes so that a corrupt length
// prefix costs at most one chunk of memory beyond the real input before the
// read fails, instead of one huge allocation.
constexpr size_t kReadChunkBytes = 64 * 1024;

// A read-only streambuf over bytes the caller owns, so decoding copies nothing.
class ViewBuf : public std::streambuf {
 public:
  void reset(std::string_view bytes) {
    char* begin = const_cast<char*>(bytes.data());  // never written: get area only
    setg(begin, begin, begin + bytes.size());
  }
};

// A write-only streambuf that appends to a string the caller owns, so
// encoding builds the value in place instead of copying it out of a
// stringstream.
class StringSink : public std::streambuf {
 public:
  void reset(std::string* target) { target_ = target; }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    target_->push_back(traits_type::to_char_type(c));
    return c;
  }
  std::streamsize xsputn(const char* data, std::streamsize count) override {
    target_->append(data, static_cast<size_t>(count));
    return count;
  }

 private:
  std::string* target_ = nullptr;
};

// Building a std::ostream or std::istream sets up its locale, which costs
// more than encoding a whole record. Each thread keeps one of each and points
// it at the bytes of the call.
std::ostream& output_stream(std::string* target) {
  thread_local StringSink sink;
  thread_local std::ostream stream(&sink);
  sink.reset(target);
  stream.clear();
  return stream;
}

std::istream& input_stream(std::string_view bytes, ViewBuf** buffer) {
  thread_local ViewBuf view;
  thread_local std::istream stream(&view);
  view.reset(bytes);
  stream.clear();
  *buffer = &view;
  return stream;
}

void check_version(const char* type, std::uint32_t version) {
  if (version != kClassVersion) {
    throw cereal::Exception(std::string(type) + " has unknown class version " +
                            std::to_string(version));
  }
}

// The helpers below are overloaded on the archive so that one serialize
// function per struct describes both directions, as cereal intends.
void text(OutArchive& ar, std::string& value) {
  ar(cereal::make_size_tag(static_cast<cereal::size_type>(value.size())));
  ar(cereal::binary_data(value.data(), value.size()));
}

void text(InArchive& ar, std::string& value) {
  cereal::size_type size = 0;
  ar(cereal::make_size_tag(size));
  value.clear();
  while (value.size() < size) {
    const size_t chunk = std::min<cereal::size_type>(size - value.size(), kReadChunkBytes);
    const size_t old_size = value.size();
    value.resize(old_size + chunk);
    ar(cereal::binary_data(value.data() + old_size, chunk));
  }
}

template <typename Enum>
void enum_byte(OutArchive& ar, Enum& value) {
  ar(static_cast<std::uint8_t>(value));
}

template <typename Enum>
void enum_byte(InArchive& ar, Enum& value) {
  std::uint8_t byte = 0;
  ar(byte);
  value = static_cast<Enum>(byte);  // range checked by validate() after decoding
}

// A bool is one byte, 0 or 1; reading raw bytes into a bool could make an
// invalid bool, so it goes through a uint8.
void flag(OutArchive& ar, bool& value) { ar(static_cast<std::uint8_t>(value ? 1 : 0)); }

void flag(InArchive& ar, bool& value) {
  std::uint8_t byte = 0;
  ar(byte);
  if (byte > 1) throw cereal::Exception("bool byte " + std::to_string(byte));
  value = byte == 1;
}

template <typename T>
void list(OutArchive& ar, std::vector<T>& items) {
  ar(cereal::make_size_tag(static_cast<cereal::size_type>(items.size())));
  for (T& item : items) ar(item);
}

// Items are appended one at a time (no reserve from an untrusted count).
template <typename T>
void list(InArchive& ar, std::vector<T>& items) {
  cereal::size_type count = 0;
  ar(cereal::make_size_tag(count));
  items.clear();
  for (cereal::size_type i = 0; i < count; ++i) {
    T item;
    ar(item);
    items.push_back(std::move(item));
  }
}

// An optional value is a flag byte, then the value when the flag is 1.
template <typename T>
void held(OutArchive& ar, std::optional<T>& value) {
  bool present = value.has_value();
  flag(ar, present);
  if (present) ar(*value);
}

template <typename T>
void held(InArchive& ar, std::optional<T>& value) {
  bool present = false;
  flag(ar, present);
  value.reset();
  if (present) ar(value.emplace());
}

bool valid_state(TxState state) { return static_cast<std::uint8_t>(state) <= 5; }
bool valid_kind(DueKind kind) { return static_cast<std::uint8_t>(kind) <= 3; }

template <typename T>
std::string encode_value(const T& value) {
  TARDE_ASSERT(validate(value).is_ok());
  std::string bytes;
  bytes.reserve(256);
  bytes.push_back(static_cast<char>(kValueFormat));
  std::ostream& out = output_stream(&bytes);
  {
    // Little-endian always, so the bytes do not depend on the host.
    OutArchive ar(out, OutArchive::Options::LittleEndian());
    ar(value);
  }
  output_stream(nullptr);  // the stream keeps no pointer to a dead string
  return bytes;
}

template <typename T>
Result<T> decode_value(std::string_view bytes, const char* what) {
  auto corrupt = [what](const std::string& why) {
    return Status::corruption(std::string(what) + " value: " + why);
  };
  if (bytes.empty()) return corrupt("empty");
  const auto format = static_cast<std::uint8_t>(bytes[0]);
  if (format != kValueFormat) return corrupt("unknown format byte " + std::to_string(format));
  ViewBuf* buffer = nullptr;
  std::istream& in = input_stream(bytes.substr(1), &buffer);
  T value;
  try {
    InArchive ar(in);
    ar(value);
  } catch (const std::exception& e) {
    return corrupt(e.what());
  }
  const std::streamsize trailing = buffer->in_avail();
  buffer->reset({});
  if (trailing > 0) return corrupt(std::to_string(trailing) + " trailing bytes");
  Status status = validate(value);
  if (!status.is_ok()) return corrupt(status.message());
  return value;
}

}  // namespace

// cereal finds these by argument-dependent lookup, so they live in the
// records' namespace. Field order is the on-disk order; see FORMAT.md.

template <class Archive>
void serialize(Archive& ar, RetryPolicy& p, const std::uint32_t version) {
  check_version("RetryPolicy", version);
  ar(p.max_attempts, p.base_ms, p.factor, p.cap_ms, p.jitter);
  flag(ar, p.strict_cap);
  ar(p.transient_base_ms, p.transient_factor, p.transient_cap_ms, p.max_transient);
}

template <class Archive>
void serialize(Archive& ar, DeliveryFailure& f, const std::uint32_t version) {
  check_version("DeliveryFailure", version);
  ar(f.at_ms);
  text(ar, f.reason);
}

template <class Archive>
void serialize(Archive& ar, TxRecord& r, const std::uint32_t version) {
  if (version != kTxRecordVersion) check_version("TxRecord", version);
  text(ar, r.tx_id);
  text(ar, r.queue);
  enum_byte(ar, r.state);
  ar(r.attempt, r.next_attempt, r.policy, r.next_fire_at_ms, r.deadline_at_ms, r.created_at_ms,
     r.updated_at_ms, r.deliveries, r.transients);
  text(ar, r.reason);
  text(ar, r.payload);
  ar(r.events);
  enum_byte(ar, r.due_kind);
  ar(r.due_at_ms, r.ready_at_ms, r.ready_seq);
  flag(ar, r.dead_lettered);
  list(ar, r.failures);
  if (version < kTxRecordVersion) return;  // version 1 ends here: it holds no event
  held(ar, r.first_event);
  held(ar, r.newest_event);
}

template <class Archive>
void serialize(Archive& ar, EventRecord& e, const std::uint32_t version) {
  if (version != kEventRecordVersion) check_version("EventRecord", version);
  ar(e.at_ms);
  enum_byte(ar, e.from);
  enum_byte(ar, e.to);
  ar(e.attempt, e.next_attempt);
  text(ar, e.cause);
  text(ar, e.reason);
  if (version < kEventRecordVersion) return;  // version 1 ends here: due_at_ms stays 0
  ar(e.due_at_ms);
}

template <class Archive>
void serialize(Archive& ar, DueValue& v, const std::uint32_t version) {
  check_version("DueValue", version);
  enum_byte(ar, v.kind);
  ar(v.attempt);
}

template <class Archive>
void serialize(Archive& ar, ReadyValue& v, const std::uint32_t version) {
  check_version("ReadyValue", version);
  text(ar, v.tx_id);
  ar(v.attempt);
}

template <class Archive>
void serialize(Archive& ar, DeadLetter& d, const std::uint32_t version) {
  check_version("DeadLetter", version);
  text(ar, d.queue);
  text(ar, d.tx_id);
  ar(d.attempt, d.deliveries, d.buried_at_ms);
  text(ar, d.payload);
  list(ar, d.failures);
}

template <class Archive>
void serialize(Archive& ar, QueueConfig& c, const std::uint32_t version) {
  if (version != kQueueConfigVersion) check_version("QueueConfig", version);
  ar(c.policy, c.lease_ms, c.max_deliveries, c.rate, c.response_timeout_ms);
  flag(ar, c.breaker);
  ar(c.retention_ms);
  if (version < kQueueConfigVersion) return;  // version 1 ends here
  ar(c.history_max, c.stuck_after_ms);
  flag(ar, c.paused);
}

Status validate(const TxRecord& record) {
  if (!is_valid_tx_id(record.tx_id)) return Status::corruption("bad tx_id");
  if (!is_valid_queue_name(record.queue)) return Status::corruption("bad queue name");
  if (!valid_state(record.state)) return Status::corruption("state out of range");
  if (!valid_kind(record.due_kind)) return Status::corruption("due kind out of range");
  // A held event is one the record has written: the first needs one event,
  // the newest (never the first) two.
  if (record.first_event) {
    if (record.events < 1) return Status::corruption("holds its first event, but has no event");
    TARDE_RETURN_IF_ERROR(validate(*record.first_event));
  }
  if (record.newest_event) {
    if (record.events < 2) return Status::corruption("holds a newest event, but has under two");
    TARDE_RETURN_IF_ERROR(validate(*record.newest_event));
  }
  return Status::ok();
}

Status validate(const EventRecord& event) {
  if (!valid_state(event.from)) return Status::corruption("from state out of range");
  if (!valid_state(event.to)) return Status::corruption("to state out of range");
  if (event.due_at_ms < 0) return Status::corruption("negative due time");
  return Status::ok();
}

Status validate(const DueValue& value) {
  if (!valid_kind(value.kind)) return Status::corruption("due kind out of range");
  return Status::ok();
}

Status validate(const ReadyValue& value) {
  if (!is_valid_tx_id(value.tx_id)) return Status::corruption("bad tx_id");
  return Status::ok();
}

Status validate(const DeadLetter& letter) {
  if (!is_valid_queue_name(letter.queue)) return Status::corruption("bad queue name");
  if (!is_valid_tx_id(letter.tx_id)) return Status::corruption("bad tx_id");
  return Status::ok();
}

Status validate(const QueueConfig& /*config*/) { return Status::ok(); }

// The values of every transition are written by hand: TxRecord and
// EventRecord in the compact layout (storage/compact_record.h), DueValue and
// ReadyValue in the cereal layout by storage/record_bytes.h. For the cereal
// layout cereal remains the reference (tests compare the two) and decodes
// whatever the direct reader does not take.
namespace {

template <typename T>
std::string encode_direct(const T& value, void (*append)(std::string&, const T&)) {
  TARDE_ASSERT(validate(value).is_ok());
  std::string bytes;
  append(bytes, value);
  return bytes;
}

template <typename T>
Result<T> decode_direct(std::string_view bytes, bool (*read)(std::string_view, T*),
                        const char* type) {
  T value;
  if (read(bytes, &value) && validate(value).is_ok()) return value;
  return decode_value<T>(bytes, type);
}

// TxRecord and EventRecord are written in the compact layout; a value of
// the cereal layout (format byte 1, stores before format 4) is still read,
// by the direct reader or else by cereal.
template <typename T>
Result<T> decode_record(std::string_view bytes, Status (*read_compact)(std::string_view, T*),
                        bool (*read_direct)(std::string_view, T*), const char* type) {
  if (bytes.empty() || static_cast<uint8_t>(bytes[0]) != kCompactValueFormat) {
    return decode_direct(bytes, read_direct, type);
  }
  T value;
  TARDE_RETURN_IF_ERROR(read_compact(bytes, &value));
  Status valid = validate(value);
  if (!valid.is_ok()) return Status::corruption(std::string(type) + ": " + valid.message());
  return value;
}

}  // namespace

std::string encode_tx(const TxRecord& record) {
  return encode_direct(record, compact_record::append_tx);
}
Result<TxRecord> decode_tx(std::string_view bytes) {
  return decode_record(bytes, compact_record::read_tx, record_bytes::read_tx, "TxRecord");
}

std::string encode_event(const EventRecord& event) {
  return encode_direct(event, compact_record::append_event);
}
Result<EventRecord> decode_event(std::string_view bytes) {
  return decode_record(bytes, compact_record::read_event, record_bytes::read_event, "EventRecord");
}

std::string encode_due_value(const DueValue& value) {
  return encode_direct(value, record_bytes::append_due);
}
Result<DueValue> decode_due_value(std::string_view bytes) {
  return decode_direct(bytes, record_bytes::read_due, "DueValue");
}

std::string encode_ready_value(const ReadyValue& value) {
  return encode_direct(value, record_bytes::append_ready);
}
Result<ReadyValue> decode_ready_value(std::string_view bytes) {
  return decode_direct(bytes, record_bytes::read_ready, "ReadyValue");
}

std::string encode_tx_with_cereal_for_test(const TxRecord& record) { return encode_value(record); }
std::string encode_event_with_cereal_for_test(const EventRecord& event) {
  return encode_value(event);
}
Result<TxRecord> decode_tx_with_cereal_for_test(std::string_view bytes) {
  return decode_value<TxRecord>(bytes, "TxRecord");
}
Result<EventRecord> decode_event_with_cereal_for_test(std::string_view bytes) {
  return decode_value<EventRecord>(bytes, "EventRecord");
}

std::string encode_due_with_cereal_for_test(const DueValue& value) { return encode_value(value); }
std::string encode_ready_with_cereal_for_test(const ReadyValue& value) {
  return encode_value(value);
}

std::string encode_dead_letter(const DeadLetter& letter) { return encode_value(letter); }
Result<DeadLetter> decode_dead_letter(std::string_view bytes) {
  return decode_value<DeadLetter>(bytes, "DeadLetter");
}

std::string encode_queue_config(const QueueConfig& config) { return encode_value(config); }
Result<QueueConfig> decode_queue_config(std::string_view bytes) {
  return decode_value<QueueConfig>(bytes, "QueueConfig");
}

std::string encode_format_version(uint32_t version) {
  std::string bytes;
  append_be32(&bytes, version);
  return bytes;
}

Result<uint32_t> decode_format_version(std::string_view bytes) {
  if (bytes.size() != 4) {
    return Status::corruption("format version: " + std::to_string(bytes.size()) +
                              " bytes, expected 4");
  }
  return read_be32(bytes);
}

}  // namespace tarde::storage
