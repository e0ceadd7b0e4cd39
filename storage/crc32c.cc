#include "storage/crc32c.h"

#include <array>
#include <cstring>

namespace tarde::storage {
namespace {

constexpr uint32_t kPolynomial = 0x82f63b78;  // reflected Castagnoli

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
    table[i] = crc;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kTable = make_table();

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t crc32c_hardware(std::string_view bytes, uint32_t crc) {
  uint64_t state = ~crc;
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    state = __builtin_ia32_crc32di(state, word);
    p += 8;
    left -= 8;
  }
  uint32_t state32 = static_cast<uint32_t>(state);
  while (left-- > 0) state32 = __builtin_ia32_crc32qi(state32, static_cast<unsigned char>(*p++));
  return ~state32;
}

__attribute__((target("sse4.2"))) uint32_t over_zeros_hardware(uint32_t state, size_t size) {
  uint64_t wide = state;
  for (; size >= 8; size -= 8) wide = __builtin_ia32_crc32di(wide, 0);
  state = static_cast<uint32_t>(wide);
  for (; size > 0; --size) state = __builtin_ia32_crc32qi(state, 0);
  return state;
}

bool has_hardware_crc32c() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

}  // namespace

uint32_t crc32c_portable(std::string_view bytes, uint32_t crc) {
  crc = ~crc;
  for (unsigned char byte : bytes) crc = (crc >> 8) ^ kTable[(crc ^ byte) & 0xff];
  return ~crc;
}

bool crc32c_in_hardware() {
#if defined(__x86_64__)
  return has_hardware_crc32c();
#else
  return false;
#endif
}

// CRC-32C is linear: with crc(M) = ~R(~0, M), where R(r, M) runs the
// register from r over M without the complements, R(r, A B) = R(R(r, A), B)
// and R(r, B) = R(r, zeros) ^ R(0, B). Working the complements through,
// crc(A B) = R(crc(A), |B| zeros) ^ crc(B).
uint32_t crc32c_combine_portable(uint32_t first, uint32_t second, size_t second_size) {
  uint32_t state = first;
  for (; second_size > 0; --second_size) state = (state >> 8) ^ kTable[state & 0xff];
  return state ^ second;
}

uint32_t crc32c_combine(uint32_t first, uint32_t second, size_t second_size) {
#if defined(__x86_64__)
  if (has_hardware_crc32c()) return over_zeros_hardware(first, second_size) ^ second;
#endif
  return crc32c_combine_portable(first, second, second_size);
}

uint32_t crc32c(std::string_view bytes, uint32_t crc) {
#if defined(__x86_64__)
  if (has_hardware_crc32c()) return crc32c_hardware(bytes, crc);
#endif
  return crc32c_portable(bytes, crc);
}

}  // namespace tarde::storage
