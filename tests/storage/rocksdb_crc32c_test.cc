// RocksDB's CRC-32C, redirected to tarde's at link time
// (storage/rocksdb_crc32c.cc): the redirection is in effect, and it gives
// the values RocksDB's own code gives.
#include "storage/rocksdb_crc32c.h"

#include <doctest/doctest.h>
#include <rocksdb/file_checksum.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include "storage/crc32c.h"

// RocksDB's functions, declared here because Debian does not install their
// header (util/crc32c.h). A call to either from any object of the link
// reaches its replacement.
namespace rocksdb::crc32c {
uint32_t Extend(uint32_t crc, const char* data, size_t size);
uint32_t Crc32cCombine(uint32_t crc1, uint32_t crc2, size_t crc2len);
}  // namespace rocksdb::crc32c

namespace tarde::storage {
namespace {

// RocksDB's own code, as the library ships it.
uint32_t rocksdb_own(const std::string& bytes, uint32_t crc = 0) {
  return __real__ZN7rocksdb6crc32c6ExtendEjPKcm(crc, bytes.data(), bytes.size());
}

uint32_t through_rocksdb(const std::string& bytes, uint32_t crc = 0) {
  return rocksdb::crc32c::Extend(crc, bytes.data(), bytes.size());
}

TEST_CASE("rocksdb crc32c: RocksDB's calls reach the replacement") {
  const auto called = reinterpret_cast<void*>(&rocksdb::crc32c::Extend);
  CHECK(called == reinterpret_cast<void*>(&__wrap__ZN7rocksdb6crc32c6ExtendEjPKcm));
  CHECK(called != reinterpret_cast<void*>(&__real__ZN7rocksdb6crc32c6ExtendEjPKcm));
  const auto combine = reinterpret_cast<void*>(&rocksdb::crc32c::Crc32cCombine);
  CHECK(combine == reinterpret_cast<void*>(&__wrap__ZN7rocksdb6crc32c13Crc32cCombineEjjm));
  CHECK(combine != reinterpret_cast<void*>(&__real__ZN7rocksdb6crc32c13Crc32cCombineEjjm));
}

TEST_CASE("rocksdb crc32c: two CRCs joined give the CRC of the bytes joined, as RocksDB's do") {
  std::mt19937 random(20261205);
  std::string bytes(40000, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  auto check_join = [&bytes](size_t first_size, size_t second_size) {
    const std::string first = bytes.substr(0, first_size);
    const std::string second = bytes.substr(first_size, second_size);
    const uint32_t first_crc = crc32c(first);
    const uint32_t second_crc = crc32c(second);
    const uint32_t whole = crc32c(first + second);
    INFO("joining " << first_size << " and " << second_size << " bytes");
    CHECK(rocksdb::crc32c::Crc32cCombine(first_crc, second_crc, second_size) == whole);
    CHECK(__real__ZN7rocksdb6crc32c13Crc32cCombineEjjm(first_crc, second_crc, second_size) ==
          whole);
    CHECK(crc32c_combine(first_crc, second_crc, second_size) == whole);
    CHECK(crc32c_combine_portable(first_crc, second_crc, second_size) == whole);
  };
  // Every short length, as a WAL record's one-byte type joined to its
  // payload; then lengths the replacement computes itself (255, 256, 400,
  // 1000, 2047) and those it leaves to RocksDB's code (2048, 2049, 4096, a
  // WAL block, 39,000: few bits set for their size).
  for (size_t second_size = 0; second_size <= 80; ++second_size) {
    check_join(1, second_size);
    check_join(13, second_size);
  }
  for (size_t second_size : {255, 256, 400, 1000, 2047, 2048, 2049, 4096, 32768, 39000}) {
    check_join(1, second_size);
    check_join(999, second_size);
  }
}

TEST_CASE("rocksdb crc32c: the replacement gives RocksDB's values, whole and continued") {
  CHECK(through_rocksdb("123456789") == 0xe3069283u);
  CHECK(rocksdb_own("123456789") == 0xe3069283u);
  CHECK(through_rocksdb("") == 0);
  std::mt19937 random(20261205);
  std::string bytes(40000, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  // Every length up to a few words, at every alignment, then sizes of WAL
  // records and table blocks.
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t size = 0; size <= 80; ++size) {
      const std::string part = bytes.substr(offset, size);
      CHECK(through_rocksdb(part) == rocksdb_own(part));
      CHECK(through_rocksdb(part, 0x12345678u) == rocksdb_own(part, 0x12345678u));
    }
  }
  for (size_t size : {255, 400, 4095, 4096, 4097, 32768, 39999}) {
    const std::string part = bytes.substr(1, size);
    CHECK(through_rocksdb(part) == rocksdb_own(part));
    CHECK(through_rocksdb(part) == crc32c_portable(part));
  }
  // A CRC continued piece by piece equals the CRC of the whole.
  uint32_t continued = 0;
  for (size_t at = 0; at < 10000; at += 1000) {
    continued = through_rocksdb(bytes.substr(at, 1000), continued);
  }
  CHECK(continued == rocksdb_own(bytes.substr(0, 10000)));
}

TEST_CASE("rocksdb crc32c: RocksDB's own checksum code gives the standard value") {
  // The file checksum generator is compiled inside RocksDB: its call to
  // Extend is one of those the link redirects.
  rocksdb::FileChecksumGenContext context;
  context.file_name = "check";
  std::unique_ptr<rocksdb::FileChecksumGenerator> generator =
      rocksdb::GetFileChecksumGenCrc32cFactory()->CreateFileChecksumGenerator(context);
  REQUIRE(generator != nullptr);
  generator->Update("1234", 4);
  generator->Update("56789", 5);
  generator->Finalize();
  const std::string big_endian = generator->GetChecksum();
  REQUIRE(big_endian.size() == 4);
  uint32_t value = 0;
  for (const char byte : big_endian) value = (value << 8) | static_cast<unsigned char>(byte);
  CHECK(value == 0xe3069283u);
}

}  // namespace
}  // namespace tarde::storage
