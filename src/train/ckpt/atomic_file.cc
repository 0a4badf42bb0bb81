#include "ckpt/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace chorus::train {
namespace {
[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}
// As fail, after closing fd (keeping the errno that explains the failure).
[[noreturn]] void failClosing(int fd, const std::string& what, const std::string& path) {
  int e = errno;
  ::close(fd);
  errno = e;
  fail(what, path);
}
}  // namespace

void writeFileAtomic(const std::string& path, const std::vector<uint8_t>& bytes) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create", tmp);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) failClosing(fd, "cannot write", tmp);
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) failClosing(fd, "cannot flush", tmp);
  ::close(fd);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("cannot rename into place", path);
  auto slash = path.find_last_of('/');
  syncDirectory(slash == std::string::npos ? "." : path.substr(0, slash));
}

std::vector<uint8_t> readWholeFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open", path);
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) failClosing(fd, "cannot read", path);
    if (n == 0) break;
    out.insert(out.end(), buf, buf + n);
  }
  ::close(fd);
  return out;
}

void syncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail("cannot open directory", dir);
  ::fsync(fd);
  ::close(fd);
}

uint32_t crc32Of(const uint8_t* data, size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (n > 0) {
    uInt chunk = n > (1u << 30) ? (1u << 30) : static_cast<uInt>(n);
    crc = crc32(crc, data, chunk);
    data += chunk;
    n -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace chorus::train
