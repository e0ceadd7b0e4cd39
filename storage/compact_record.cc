#include "storage/compact_record.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>

#include "base/assert.h"
#include "storage/value_format.h"

namespace tarde::storage::compact_record {
namespace {

static_assert(std::endian::native == std::endian::little,
              "doubles are copied as they are in memory, little-endian");

// The most bytes one varint takes: 64 bits in groups of 7.
constexpr size_t kVarintBytesMax = 10;
// Bits a held-events byte may set: bit 0 first event, bit 1 newest event.
constexpr uint8_t kHeldFirst = 1;
constexpr uint8_t kHeldNewest = 2;

uint64_t zigzag(int64_t value) {
  return (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
}

int64_t unzigzag(uint64_t value) {
  return static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1);
}

// Writes through a pointer into space the caller sized with bound_* below.
class Writer {
 public:
  explicit Writer(char* at) : at_(at) {}
  void byte(uint8_t value) { *at_++ = static_cast<char>(value); }
  void unsigned_int(uint64_t value) {
    while (value >= 0x80) {
      *at_++ = static_cast<char>((value & 0x7f) | 0x80);
      value >>= 7;
    }
    *at_++ = static_cast<char>(value);
  }
  void signed_int(int64_t value) { unsigned_int(zigzag(value)); }
  void real(double value) {
    std::memcpy(at_, &value, sizeof value);
    at_ += sizeof value;
  }
  void text(std::string_view value) {
    unsigned_int(value.size());
    std::memcpy(at_, value.data(), value.size());
    at_ += value.size();
  }
  char* at() const { return at_; }

 private:
  char* at_;
};

// Upper bounds of what the writers below write, so that a value is written
// into space reserved once.
size_t bound_text(std::string_view text) { return kVarintBytesMax + text.size(); }

size_t bound_event(const EventRecord& e) {
  return 2 + 4 * kVarintBytesMax + bound_text(e.cause) + bound_text(e.reason);
}

size_t bound_tx(const TxRecord& r) {
  // put_tx's fields other than texts and events, by kind: 19 integers,
  // 3 doubles, 6 single bytes.
  size_t size = 19 * kVarintBytesMax + 3 * sizeof(double) + 6;
  size += bound_text(r.tx_id) + bound_text(r.queue) + bound_text(r.reason) + bound_text(r.payload);
  for (const DeliveryFailure& failure : r.failures) {
    size += kVarintBytesMax + bound_text(failure.reason);
  }
  if (r.first_event) size += bound_event(*r.first_event);
  if (r.newest_event) size += bound_event(*r.newest_event);
  return size;
}

void put_event(Writer& out, const EventRecord& e) {
  out.signed_int(e.at_ms);
  out.byte(static_cast<uint8_t>(e.from));
  out.byte(static_cast<uint8_t>(e.to));
  out.unsigned_int(e.attempt);
  out.unsigned_int(e.next_attempt);
  out.text(e.cause);
  out.text(e.reason);
  out.signed_int(e.due_at_ms);
}

void put_policy(Writer& out, const RetryPolicy& p) {
  out.unsigned_int(p.max_attempts);
  out.signed_int(p.base_ms);
  out.real(p.factor);
  out.signed_int(p.cap_ms);
  out.real(p.jitter);
  out.byte(p.strict_cap ? 1 : 0);
  out.signed_int(p.transient_base_ms);
  out.real(p.transient_factor);
  out.signed_int(p.transient_cap_ms);
  out.unsigned_int(p.max_transient);
}

void put_tx(Writer& out, const TxRecord& r) {
  out.byte(kCompactValueFormat);
  out.text(r.tx_id);
  out.text(r.queue);
  out.byte(static_cast<uint8_t>(r.state));
  out.unsigned_int(r.attempt);
  out.unsigned_int(r.next_attempt);
  put_policy(out, r.policy);
  out.signed_int(r.next_fire_at_ms);
  out.signed_int(r.deadline_at_ms);
  out.signed_int(r.created_at_ms);
  out.signed_int(r.updated_at_ms);
  out.unsigned_int(r.deliveries);
  out.unsigned_int(r.transients);
  out.text(r.reason);
  out.text(r.payload);
  out.unsigned_int(r.events);
  out.byte(static_cast<uint8_t>(r.due_kind));
  out.signed_int(r.due_at_ms);
  out.signed_int(r.ready_at_ms);
  out.unsigned_int(r.ready_seq);
  out.byte(r.dead_lettered ? 1 : 0);
  out.unsigned_int(r.failures.size());
  for (const DeliveryFailure& failure : r.failures) {
    out.signed_int(failure.at_ms);
    out.text(failure.reason);
  }
  out.byte((r.first_event ? kHeldFirst : 0) | (r.newest_event ? kHeldNewest : 0));
  if (r.first_event) put_event(out, *r.first_event);
  if (r.newest_event) put_event(out, *r.newest_event);
}

// Reads from the front of a view. The first problem is kept and every read
// after it does nothing, so a parser reads straight through and checks once.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}

  void byte(uint8_t* value) {
    if (!need(1, "truncated")) return;
    *value = static_cast<uint8_t>(rest_[0]);
    rest_.remove_prefix(1);
  }
  template <typename Enum>
  void enum_byte(Enum* value) {
    uint8_t raw = 0;
    byte(&raw);
    *value = static_cast<Enum>(raw);  // range checked by validate()
  }
  void flag(bool* value) {
    uint8_t raw = 0;
    byte(&raw);
    if (raw > 1) fail("a flag byte is neither 0 nor 1");
    *value = raw == 1;
  }
  void unsigned_int(uint64_t* value) {
    uint64_t result = 0;
    for (size_t i = 0; i < kVarintBytesMax; ++i) {
      uint8_t part = 0;
      byte(&part);
      if (!ok()) return;
      if (i == kVarintBytesMax - 1 && part > 1) return fail("a varint exceeds 64 bits");
      result |= static_cast<uint64_t>(part & 0x7f) << (7 * i);
      if ((part & 0x80) == 0) {
        // A last group of 0 after the first means the varint could be shorter.
        if (part == 0 && i > 0) return fail("a varint is longer than it needs to be");
        *value = result;
        return;
      }
    }
  }
  void unsigned_int(uint32_t* value) {
    uint64_t wide = 0;
    unsigned_int(&wide);
    if (wide > std::numeric_limits<uint32_t>::max()) fail("a 32-bit field holds more");
    *value = static_cast<uint32_t>(wide);
  }
  void signed_int(int64_t* value) {
    uint64_t raw = 0;
    unsigned_int(&raw);
    *value = unzigzag(raw);
  }
  void real(double* value) {
    if (!need(sizeof *value, "truncated")) return;
    std::memcpy(value, rest_.data(), sizeof *value);
    rest_.remove_prefix(sizeof *value);
  }
  void text(std::string* value) {
    uint64_t size = 0;
    unsigned_int(&size);
    if (!need(size, "a length runs past the end")) return;
    value->assign(rest_.data(), size);
    rest_.remove_prefix(size);
  }
  // A count of items that each take at least `item_bytes_min`: a corrupt
  // count fails here, not in a huge allocation.
  void count(uint64_t* value, size_t item_bytes_min) {
    unsigned_int(value);
    if (ok() && *value > rest_.size() / item_bytes_min) {
      fail("a count runs past the end");
    }
  }
  void fail(const char* what) {
    if (ok()) error_ = what;
  }
  // Corruption naming the value and the first problem; ok when there was
  // none and nothing is left over.
  Status finish(const char* type) {
    if (ok() && !rest_.empty()) fail("bytes left over");
    if (ok()) return Status::ok();
    return Status::corruption(std::string(type) + " (compact): " + error_);
  }
  bool ok() const { return error_ == nullptr; }

 private:
  bool need(uint64_t size, const char* what) {
    if (!ok()) return false;
    if (rest_.size() < size) {
      fail(what);
      return false;
    }
    return true;
  }

  std::string_view rest_;
  const char* error_ = nullptr;  // the first problem, a literal
};

void get_format(Reader& in) {
  uint8_t format = 0;
  in.byte(&format);
  if (in.ok() && format != kCompactValueFormat) in.fail("not a compact value");
}

void get_event(Reader& in, EventRecord* e) {
  in.signed_int(&e->at_ms);
  in.enum_byte(&e->from);
  in.enum_byte(&e->to);
  in.unsigned_int(&e->attempt);
  in.unsigned_int(&e->next_attempt);
  in.text(&e->cause);
  in.text(&e->reason);
  in.signed_int(&e->due_at_ms);
}

void get_policy(Reader& in, RetryPolicy* p) {
  in.unsigned_int(&p->max_attempts);
  in.signed_int(&p->base_ms);
  in.real(&p->factor);
  in.signed_int(&p->cap_ms);
  in.real(&p->jitter);
  in.flag(&p->strict_cap);
  in.signed_int(&p->transient_base_ms);
  in.real(&p->transient_factor);
  in.signed_int(&p->transient_cap_ms);
  in.unsigned_int(&p->max_transient);
}

void get_held_events(Reader& in, TxRecord* r) {
  uint8_t held = 0;
  in.byte(&held);
  if ((held & ~(kHeldFirst | kHeldNewest)) != 0) in.fail("unknown bits in the held events");
  r->first_event.reset();
  r->newest_event.reset();
  if (!in.ok()) return;
  if ((held & kHeldFirst) != 0) get_event(in, &r->first_event.emplace());
  if ((held & kHeldNewest) != 0) get_event(in, &r->newest_event.emplace());
}

}  // namespace

void append_tx(std::string& out, const TxRecord& record) {
  const size_t start = out.size();
  out.resize(start + bound_tx(record));
  Writer writer(out.data() + start);
  put_tx(writer, record);
  TARDE_ASSERT(writer.at() <= out.data() + out.size());
  out.resize(static_cast<size_t>(writer.at() - out.data()));
}

void append_event(std::string& out, const EventRecord& event) {
  const size_t start = out.size();
  out.resize(start + 1 + bound_event(event));
  Writer writer(out.data() + start);
  writer.byte(kCompactValueFormat);
  put_event(writer, event);
  TARDE_ASSERT(writer.at() <= out.data() + out.size());
  out.resize(static_cast<size_t>(writer.at() - out.data()));
}

Status read_tx(std::string_view bytes, TxRecord* r) {
  Reader in(bytes);
  get_format(in);
  in.text(&r->tx_id);
  in.text(&r->queue);
  in.enum_byte(&r->state);
  in.unsigned_int(&r->attempt);
  in.unsigned_int(&r->next_attempt);
  get_policy(in, &r->policy);
  in.signed_int(&r->next_fire_at_ms);
  in.signed_int(&r->deadline_at_ms);
  in.signed_int(&r->created_at_ms);
  in.signed_int(&r->updated_at_ms);
  in.unsigned_int(&r->deliveries);
  in.unsigned_int(&r->transients);
  in.text(&r->reason);
  in.text(&r->payload);
  in.unsigned_int(&r->events);
  in.enum_byte(&r->due_kind);
  in.signed_int(&r->due_at_ms);
  in.signed_int(&r->ready_at_ms);
  in.unsigned_int(&r->ready_seq);
  in.flag(&r->dead_lettered);
  uint64_t failures = 0;
  in.count(&failures, 2);  // a time and a length, one byte each at least
  r->failures.clear();
  for (uint64_t i = 0; in.ok() && i < failures; ++i) {
    DeliveryFailure& failure = r->failures.emplace_back();
    in.signed_int(&failure.at_ms);
    in.text(&failure.reason);
  }
  get_held_events(in, r);
  return in.finish("TxRecord");
}

Status read_event(std::string_view bytes, EventRecord* event) {
  Reader in(bytes);
  get_format(in);
  get_event(in, event);
  return in.finish("EventRecord");
}

}  // namespace tarde::storage::compact_record
