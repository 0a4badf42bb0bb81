#include "base/shm.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <set>

#include "base/error.h"
#include "base/process.h"

namespace chorus {
namespace {

// What this process must clean at exit, however it leaves through exit(): the names it created and still owns
// (a peer that never mapped them), and the peers whose segments to sweep if they died. Leaked on purpose: the
// atexit handler runs after static destructors may have run.
struct ExitCleanup {
  std::mutex mu;
  std::set<std::string> owned;
  std::set<pid_t> peers;
};

ExitCleanup& exitCleanup() {
  static ExitCleanup* c = [] {
    auto* p = new ExitCleanup;
    std::atexit([] {
      ExitCleanup& e = exitCleanup();
      std::lock_guard<std::mutex> lock(e.mu);
      for (const std::string& name : e.owned) shm_unlink(name.c_str());
      for (pid_t pid : e.peers) sweepSegmentsOf(pid);
    });
    return p;
  }();
  return *c;
}

void trackOwned(const std::string& name, bool add) {
  ExitCleanup& e = exitCleanup();
  std::lock_guard<std::mutex> lock(e.mu);
  if (add) {
    e.owned.insert(name);
  } else {
    e.owned.erase(name);
  }
}

}  // namespace

int sweepSegmentsOf(pid_t pid) {
  if (pid <= 0 || pid == getpid()) return 0;
  // A peer killed a moment ago has closed its sockets (which may be how this process learnt of the death) but
  // may not be a zombie yet: wait out the rest of its exit (a few ms at most) rather than leave its segments.
  if (!ProcessWatch::awaitGone(pid, 500)) return 0;
  // Names are /chorus-<prefix>-<pid>-<counter>-<salt> (ShmSegment::create); /dev/shm shows them without '/'.
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return 0;
  int removed = 0;
  while (dirent* ent = readdir(dir)) {
    const char* n = ent->d_name;
    if (strncmp(n, "chorus-", 7) != 0) continue;
    const char* dash = strchr(n + 7, '-');
    if (dash == nullptr) continue;
    char* end = nullptr;
    long owner = strtol(dash + 1, &end, 10);
    if (owner != pid || end == nullptr || *end != '-') continue;
    if (shm_unlink((std::string("/") + n).c_str()) == 0) ++removed;
  }
  closedir(dir);
  return removed;
}

void watchPeerSegments(pid_t pid) {
  if (pid <= 0 || pid == getpid()) return;
  ExitCleanup& e = exitCleanup();
  std::lock_guard<std::mutex> lock(e.mu);
  e.peers.insert(pid);
}

ShmSegment::~ShmSegment() {
  reset();
}

ShmSegment::ShmSegment(ShmSegment&& o) noexcept {
  *this = std::move(o);
}

ShmSegment& ShmSegment::operator=(ShmSegment&& o) noexcept {
  if (this != &o) {
    reset();
    data_ = o.data_;
    size_ = o.size_;
    name_ = std::move(o.name_);
    owner_ = o.owner_;
    o.data_ = nullptr;
    o.size_ = 0;
    o.owner_ = false;
  }
  return *this;
}

void ShmSegment::reset() {
  if (data_ != nullptr) munmap(data_, size_);
  if (owner_) unlink();
  data_ = nullptr;
  size_ = 0;
}

void ShmSegment::unlink() {
  if (owner_ && !name_.empty()) {
    shm_unlink(name_.c_str());
    trackOwned(name_, false);
  }
  owner_ = false;
}

ShmSegment ShmSegment::create(const std::string& prefix, size_t size) {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = std::random_device{}();
  ShmSegment seg;
  seg.name_ = "/chorus-" + prefix + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" +
              std::to_string(salt & 0xffffff);
  // Tracked before it exists: an exit() between the two still removes it.
  trackOwned(seg.name_, true);
  int fd = shm_open(seg.name_.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) trackOwned(seg.name_, false);
  CHORUS_CHECK_SYS(fd, "creating shared memory ", seg.name_);
  seg.owner_ = true;
  // posix_fallocate reserves the pages now, so a full /dev/shm is an error here rather than SIGBUS later.
  int rc = posix_fallocate(fd, 0, static_cast<off_t>(size));
  if (rc != 0) {
    close(fd);
    CHORUS_THROW(Status::kSystemError, "cannot allocate ", size, " bytes of shared memory in /dev/shm (", strerror(rc),
                 "); free space there or lower CHORUS_BUFFSIZE");
  }
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  close(fd);
  CHORUS_CHECK_SYS(p == MAP_FAILED ? -1 : 0, "mapping shared memory ", seg.name_);
  seg.data_ = p;
  seg.size_ = size;
  return seg;
}

ShmSegment ShmSegment::open(const std::string& name, size_t size) {
  ShmSegment seg;
  seg.name_ = name;
  int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0600);
  CHORUS_CHECK_SYS(fd, "opening shared memory ", name);
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < size) {
    close(fd);
    CHORUS_THROW(Status::kSystemError, "shared memory ", name, " is smaller than expected (", size, " bytes)");
  }
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  close(fd);
  CHORUS_CHECK_SYS(p == MAP_FAILED ? -1 : 0, "mapping shared memory ", name);
  seg.data_ = p;
  seg.size_ = size;
  return seg;
}

}  // namespace chorus
