#include "storage/record_bytes.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>

#include "storage/value_format.h"

namespace tarde::storage::record_bytes {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the direct coder copies integers as they are in memory");

// The format byte and the endianness flag as the bytes this coder writes and
// expects; the constants themselves are storage/value_format.h's.
constexpr char kFormatByte = static_cast<char>(kValueFormat);
constexpr char kLittleEndianByte = static_cast<char>(kLittleEndianFlag);

// read_event takes EventRecord versions 1 (kClassVersion, no due_at_ms) and 2;
// read_tx takes TxRecord versions 1 and 2 (the held events).
static_assert(kClassVersion == 1 && kEventRecordVersion == 2 && kTxRecordVersion == 2,
              "read_event and read_tx know the layouts of versions 1 and 2 only");

template <typename T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

void put_text(std::string& out, std::string_view text) {
  put<uint64_t>(out, text.size());
  out.append(text);
}

void put_byte(std::string& out, uint8_t value) { out.push_back(static_cast<char>(value)); }

// The format byte, the little-endian flag and the value's class version.
void put_header(std::string& out, uint32_t version) {
  out.push_back(kFormatByte);
  out.push_back(kLittleEndianByte);
  put<uint32_t>(out, version);
}

void put_policy(std::string& out, const RetryPolicy& p) {
  put<uint32_t>(out, kClassVersion);
  put(out, p.max_attempts);
  put(out, p.base_ms);
  put(out, p.factor);
  put(out, p.cap_ms);
  put(out, p.jitter);
  put_byte(out, p.strict_cap ? 1 : 0);
  put(out, p.transient_base_ms);
  put(out, p.transient_factor);
  put(out, p.transient_cap_ms);
  put(out, p.max_transient);
}

// An EventRecord's fields at kEventRecordVersion, without header or version.
void put_event_fields(std::string& out, const EventRecord& e) {
  put(out, e.at_ms);
  put_byte(out, static_cast<uint8_t>(e.from));
  put_byte(out, static_cast<uint8_t>(e.to));
  put(out, e.attempt);
  put(out, e.next_attempt);
  put_text(out, e.cause);
  put_text(out, e.reason);
  put(out, e.due_at_ms);
}

// A held event: its flag byte, then (cereal's version before the first
// EventRecord of the value) its fields.
void put_held_event(std::string& out, const std::optional<EventRecord>& event,
                    bool* version_written) {
  put_byte(out, event ? 1 : 0);
  if (!event) return;
  if (!*version_written) put<uint32_t>(out, kEventRecordVersion);
  *version_written = true;
  put_event_fields(out, *event);
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

void append_tx(std::string& out, const TxRecord& r) {
  auto held_size = [](const std::optional<EventRecord>& e) {
    return e ? 60 + e->cause.size() + e->reason.size() : 0;
  };
  out.reserve(out.size() + 200 + r.tx_id.size() + r.queue.size() + r.reason.size() +
              r.payload.size() + 32 * r.failures.size() + held_size(r.first_event) +
              held_size(r.newest_event));
  put_header(out, kTxRecordVersion);
  put_text(out, r.tx_id);
  put_text(out, r.queue);
  put_byte(out, static_cast<uint8_t>(r.state));
  put(out, r.attempt);
  put(out, r.next_attempt);
  put_policy(out, r.policy);
  put(out, r.next_fire_at_ms);
  put(out, r.deadline_at_ms);
  put(out, r.created_at_ms);
  put(out, r.updated_at_ms);
  put(out, r.deliveries);
  put(out, r.transients);
  put_text(out, r.reason);
  put_text(out, r.payload);
  put(out, r.events);
  put_byte(out, static_cast<uint8_t>(r.due_kind));
  put(out, r.due_at_ms);
  put(out, r.ready_at_ms);
  put(out, r.ready_seq);
  put_byte(out, r.dead_lettered ? 1 : 0);
  put<uint64_t>(out, r.failures.size());
  // cereal writes a struct's class version before its first occurrence only.
  if (!r.failures.empty()) put<uint32_t>(out, kClassVersion);
  for (const DeliveryFailure& failure : r.failures) {
    put(out, failure.at_ms);
    put_text(out, failure.reason);
  }
  bool event_version_written = false;
  put_held_event(out, r.first_event, &event_version_written);
  put_held_event(out, r.newest_event, &event_version_written);
}

void append_event(std::string& out, const EventRecord& e) {
  out.reserve(out.size() + 56 + e.cause.size() + e.reason.size());
  put_header(out, kEventRecordVersion);
  put_event_fields(out, e);
}

void append_due(std::string& out, const DueValue& v) {
  out.reserve(out.size() + 11);
  put_header(out, kClassVersion);
  put_byte(out, static_cast<uint8_t>(v.kind));
  put(out, v.attempt);
}

void append_ready(std::string& out, const ReadyValue& v) {
  out.reserve(out.size() + 18 + v.tx_id.size());
  put_header(out, kClassVersion);
  put_text(out, v.tx_id);
  put(out, v.attempt);
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
