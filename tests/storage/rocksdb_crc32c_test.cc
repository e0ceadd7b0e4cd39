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

// RocksDB's function, declared here because Debian does not install its
// header (util/crc32c.h). A call to it from any object of the link reaches
// the replacement.
namespace rocksdb::crc32c {
uint32_t Extend(uint32_t crc, const char* data, size_t size);
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
