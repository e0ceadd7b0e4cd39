#include "tests/support/wal_file.h"

#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <vector>

namespace tarde::testing {

std::string file_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

size_t wal_data_end(std::string_view wal) {
  const size_t last = wal.find_last_not_of('\0');
  return last == std::string_view::npos ? 0 : last + 1;
}

std::optional<bool> has_unwritten_blocks(const std::string& path, size_t below) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  constexpr size_t kExtents = 256;
  std::vector<char> buffer(sizeof(fiemap) + kExtents * sizeof(fiemap_extent));
  auto* map = reinterpret_cast<fiemap*>(buffer.data());
  map->fm_start = 0;
  map->fm_length = below;
  map->fm_flags = FIEMAP_FLAG_SYNC;
  map->fm_extent_count = kExtents;
  const int result = ::ioctl(fd, FS_IOC_FIEMAP, map);
  ::close(fd);
  if (result != 0) return std::nullopt;
  for (uint32_t i = 0; i < map->fm_mapped_extents; ++i) {
    if ((map->fm_extents[i].fe_flags & FIEMAP_EXTENT_UNWRITTEN) != 0) return true;
  }
  return false;
}

}  // namespace tarde::testing
