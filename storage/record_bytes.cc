#include "storage/record_bytes.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>

#include "base/assert.h"
#include "storage/value_format.h"

namespace tarde::storage::record_bytes {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the direct coder copies integers as they are in memory");

// The format byte and the endianness flag as the bytes this coder reads and
// expects; the constants themselves are storage/value_format.h's.
constexpr char kFormatByte = static_cast<char>(kValueFormat);
constexpr char kLittleEndianByte = static_cast<char>(kLittleEndianFlag);

// read_event takes EventRecord versions 1 (kClassVersion, no due_at_ms) and 2;
// read_tx takes TxRecord versions 1 and 2 (the held events).
static_assert(kClassVersion == 1 && kEventRecordVersion == 2 && kTxRecordVersion == 2,
              "read_event and read_tx know the layouts of versions 1 and 2 only");

// Each value is written in two passes over one list of fields: a ByteCount
// adds up its size, then a ByteWriter fills a buffer of exactly that size
// through a pointer. Appending field by field to a string cost a capacity
// check and a memcpy call per field.
class ByteCount {
 public:
  template <typename T>
  void put(T) {
    size_ += sizeof(T);
  }
  void put_byte(uint8_t) { size_ += 1; }
  void put_text(std::string_view text) { size_ += sizeof(uint64_t) + text.size(); }
  size_t size() const { return size_; }

 private:
  size_t size_ = 0;
};

class ByteWriter {
 public:
  explicit ByteWriter(char* at) : at_(at) {}
  template <typename T>
  void put(T value) {
    std::memcpy(at_, &value, sizeof(T));
    at_ += sizeof(T);
  }
  void put_byte(uint8_t value) { *at_++ = static_cast<char>(value); }
  void put_text(std::string_view text) {
    put<uint64_t>(text.size());
    std::memcpy(at_, text.data(), text.size());
    at_ += text.size();
  }
  const char* at() const { return at_; }

 private:
  char* at_;
};

// Appends the value that put_fields(out) describes.
template <typename PutFields>
void append_value(std::string& out, const PutFields& put_fields) {
  ByteCount count;
  put_fields(count);
  const size_t start = out.size();
  out.resize(start + count.size());
  ByteWriter writer(out.data() + start);
  put_fields(writer);
  TARDE_ASSERT(writer.at() == out.data() + out.size());
}

// The format byte, the little-endian flag and class version kClassVersion
// (DueValue and ReadyValue have no other).
template <typename Out>
void put_header(Out& out) {
  out.put_byte(kValueFormat);
  out.put_byte(kLittleEndianFlag);
  out.template put<uint32_t>(kClassVersion);
}

// Reads from the front of a view; every read fails once the bytes run out,
// and a failed reader stays failed.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}

  template <typename T>
  void get(T* value) {
    if (!take(sizeof(T))) return;
    std::memcpy(value, taken_, sizeof(T));
  }
  template <typename Enum>
  void get_enum(Enum* value) {
    uint8_t byte = 0;
    get(&byte);
    *value = static_cast<Enum>(byte);  // range checked by validate()
  }
  void get_flag(bool* value) {
    uint8_t byte = 0;
    get(&byte);
    if (byte > 1) ok_ = false;
    *value = byte == 1;
  }
  void get_text(std::string* text) {
    uint64_t size = 0;
    get(&size);
    if (!ok_ || size > rest_.size()) {
      ok_ = false;
      return;
    }
    take(size);
    text->assign(taken_, size);
  }
  void expect(char byte) {
    if (take(1) && *taken_ != byte) ok_ = false;
  }
  // The format byte, the little-endian flag and class version kClassVersion.
  void expect_header() {
    expect(kFormatByte);
    expect(kLittleEndianByte);
    expect_version();
  }
  void expect_version() {
    uint32_t version = 0;
    get(&version);
    if (version != kClassVersion) ok_ = false;
  }
  // Reads a class version that must lie in [oldest, newest].
  uint32_t get_version(uint32_t oldest, uint32_t newest) {
    uint32_t version = 0;
    get(&version);
    if (version < oldest || version > newest) ok_ = false;
    return version;
  }
  bool done() const { return ok_ && rest_.empty(); }
  bool ok() const { return ok_; }

 private:
  bool take(size_t count) {
    if (!ok_ || rest_.size() < count) {
      ok_ = false;
      return false;
    }
    taken_ = rest_.data();
    rest_.remove_prefix(count);
    return true;
  }

  std::string_view rest_;
  const char* taken_ = nullptr;
  bool ok_ = true;
};

// An EventRecord's fields as put_event_fields writes them; version 1 ends
// before due_at_ms.
void get_event_fields(Reader& in, uint32_t version, EventRecord* e) {
  in.get(&e->at_ms);
  in.get_enum(&e->from);
  in.get_enum(&e->to);
  in.get(&e->attempt);
  in.get(&e->next_attempt);
  in.get_text(&e->cause);
  in.get_text(&e->reason);
  e->due_at_ms = 0;
  if (version >= kEventRecordVersion) in.get(&e->due_at_ms);
}

// A held event as put_held_event writes it. Only EventRecord version 2 is
// taken here (cereal reads anything else).
void get_held_event(Reader& in, std::optional<EventRecord>* event, bool* version_read) {
  bool present = false;
  in.get_flag(&present);
  event->reset();
  if (!present || !in.ok()) return;
  if (!*version_read) in.get_version(kEventRecordVersion, kEventRecordVersion);
  *version_read = true;
  get_event_fields(in, kEventRecordVersion, &event->emplace());
}

void get_policy(Reader& in, RetryPolicy* p) {
  in.expect_version();
  in.get(&p->max_attempts);
  in.get(&p->base_ms);
  in.get(&p->factor);
  in.get(&p->cap_ms);
  in.get(&p->jitter);
  in.get_flag(&p->strict_cap);
  in.get(&p->transient_base_ms);
  in.get(&p->transient_factor);
  in.get(&p->transient_cap_ms);
  in.get(&p->max_transient);
}

}  // namespace

void append_due(std::string& out, const DueValue& v) {
  append_value(out, [&v](auto& fields) {
    put_header(fields);
    fields.put_byte(static_cast<uint8_t>(v.kind));
    fields.put(v.attempt);
  });
}

void append_ready(std::string& out, const ReadyValue& v) {
  append_value(out, [&v](auto& fields) {
    put_header(fields);
    fields.put_text(v.tx_id);
    fields.put(v.attempt);
  });
}

bool read_tx(std::string_view bytes, TxRecord* r) {
  Reader in(bytes);
  in.expect(kFormatByte);
  in.expect(kLittleEndianByte);
  // Version 1 (a record written before format 3) ends after the failures.
  const uint32_t version = in.get_version(kClassVersion, kTxRecordVersion);
  in.get_text(&r->tx_id);
  in.get_text(&r->queue);
  in.get_enum(&r->state);
  in.get(&r->attempt);
  in.get(&r->next_attempt);
  get_policy(in, &r->policy);
  in.get(&r->next_fire_at_ms);
  in.get(&r->deadline_at_ms);
  in.get(&r->created_at_ms);
  in.get(&r->updated_at_ms);
  in.get(&r->deliveries);
  in.get(&r->transients);
  in.get_text(&r->reason);
  in.get_text(&r->payload);
  in.get(&r->events);
  in.get_enum(&r->due_kind);
  in.get(&r->due_at_ms);
  in.get(&r->ready_at_ms);
  in.get(&r->ready_seq);
  in.get_flag(&r->dead_lettered);
  uint64_t count = 0;
  in.get(&count);
  r->failures.clear();
  if (in.ok() && count > 0) in.expect_version();
  // Each failure takes at least 16 bytes: a corrupt count fails here, not
  // in a huge allocation.
  for (uint64_t i = 0; in.ok() && i < count; ++i) {
    DeliveryFailure failure;
    in.get(&failure.at_ms);
    in.get_text(&failure.reason);
    r->failures.push_back(std::move(failure));
  }
  r->first_event.reset();
  r->newest_event.reset();
  if (version >= kTxRecordVersion) {
    bool event_version_read = false;
    get_held_event(in, &r->first_event, &event_version_read);
    get_held_event(in, &r->newest_event, &event_version_read);
  }
  return in.done();
}

bool read_event(std::string_view bytes, EventRecord* e) {
  Reader in(bytes);
  in.expect(kFormatByte);
  in.expect(kLittleEndianByte);
  // Both versions: the events of a store written before version 2 are read
  // here too, with due_at_ms 0 (version 1 ends after reason).
  const uint32_t version = in.get_version(kClassVersion, kEventRecordVersion);
  get_event_fields(in, version, e);
  return in.done();
}

bool read_due(std::string_view bytes, DueValue* v) {
  Reader in(bytes);
  in.expect_header();
  in.get_enum(&v->kind);
  in.get(&v->attempt);
  return in.done();
}

bool read_ready(std::string_view bytes, ReadyValue* v) {
  Reader in(bytes);
  in.expect_header();
  in.get_text(&v->tx_id);
  in.get(&v->attempt);
  return in.done();
}

}  // namespace tarde::storage::record_bytes
