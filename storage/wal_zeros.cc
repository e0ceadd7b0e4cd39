#include "storage/wal_zeros.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>

namespace tarde::storage {

WalZeros::WalZeros(const std::string& path) : fd_(::open(path.c_str(), O_WRONLY | O_CLOEXEC)) {}

WalZeros::~WalZeros() { stop(); }

void WalZeros::before_append(size_t bytes) {
  appended_ += bytes;
  while (active() && zeroed_end_ < appended_) {
    static const std::array<char, kChunkBytes> kZeros{};
    const ssize_t wrote =
        ::pwrite(fd_, kZeros.data(), kZeros.size(), static_cast<off_t>(zeroed_end_));
    if (wrote != static_cast<ssize_t>(kZeros.size())) {
      stop();  // the data's own write reports whatever is wrong
      return;
    }
    zeroed_end_ += kZeros.size();
  }
}

void WalZeros::stop() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace tarde::storage
