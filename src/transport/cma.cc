#include "transport/cma.h"

#include <errno.h>
#include <sys/uio.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <vector>

#include "base/error.h"
#include "base/logging.h"
#include "base/params.h"

namespace chorus::transport {

namespace {

// Yama's setting, for messages ("" when the kernel has no Yama).
std::string ptraceScope() {
  std::ifstream f("/proc/sys/kernel/yama/ptrace_scope");
  std::string s;
  if (!(f >> s)) return "";
  return s;
}

// One process_vm_readv; the bytes copied, or -1 with errno.
ssize_t readOnce(pid_t pid, const void* remote, void* local, size_t bytes) {
  iovec l{local, bytes};
  iovec r{const_cast<void*>(remote), bytes};
  for (;;) {
    ssize_t k = process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (k >= 0 || errno != EINTR) return k;
  }
}

// The best of `tries` timings of fn(), in seconds.
template <typename Fn>
double bestSeconds(int tries, Fn fn) {
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < tries; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

double measureSlowdown() {
  constexpr size_t kBytes = size_t{256} << 10;
  constexpr int kTries = 8;
  std::vector<char> src(kBytes, 1), dst(kBytes, 2);  // touched: no page faults in what is timed
  const pid_t self = getpid();
  bool ok = true;
  const double cma = bestSeconds(kTries, [&] { ok = cmaTryRead(self, src.data(), dst.data(), kBytes) && ok; });
  if (!ok) return std::numeric_limits<double>::infinity();
  const double copy = bestSeconds(kTries, [&] {
    std::memcpy(dst.data(), src.data(), kBytes);
    asm volatile("" : : "r"(dst.data()) : "memory");  // the copy is used
  });
  return cma / std::max(copy, 1e-9);
}

}  // namespace

double cmaSlowdown() {
  static const double slowdown = [] {
    const double s = measureSlowdown();
    CHORUS_LOG_INFO(kShm, "a CMA read of 256 KiB takes ", s, "x memcpy's time here: one copy by CMA ",
                    s <= kCmaFastSlowdown ? "replaces" : "does not replace", " two through the slots by default");
    return s;
  }();
  return slowdown;
}

bool cmaReadsFast() {
  return cmaSlowdown() <= kCmaFastSlowdown;
}

bool cmaDisabled() {
  return param::CmaDisable() != 0;
}

bool cmaPermitted(pid_t pid, std::string* why) {
  // Page 1 is below every kernel's mmap_min_addr (4096 at the least): no process maps it, so an allowed read
  // faults there and a refused one stops at the permission check.
  const void* nowhere = reinterpret_cast<const void*>(uintptr_t{4096});
  char byte = 0;
  if (readOnce(pid, nowhere, &byte, 1) < 0 && errno == EFAULT) return true;
  const int err = errno;
  const std::string scope = ptraceScope();
  *why = detail::concat("process_vm_readv on pid ", pid, ": ", strerror(err),
                        scope.empty() ? "" : " (kernel.yama.ptrace_scope = " + scope + ")");
  return false;
}

bool cmaTryRead(pid_t pid, const void* remote, void* local, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    ssize_t k = readOnce(pid, static_cast<const char*>(remote) + done, static_cast<char*>(local) + done, bytes - done);
    if (k <= 0) return false;
    done += static_cast<size_t>(k);
  }
  return true;
}

namespace {
std::atomic<uint64_t> reads{0};
}  // namespace

uint64_t cmaReads() {
  return reads.load(std::memory_order_relaxed);
}

void cmaRead(pid_t pid, const void* remote, void* local, size_t bytes, const std::string& what) {
  reads.fetch_add(1, std::memory_order_relaxed);
  size_t done = 0;
  while (done < bytes) {
    ssize_t k = readOnce(pid, static_cast<const char*>(remote) + done, static_cast<char*>(local) + done, bytes - done);
    if (k > 0) {
      done += static_cast<size_t>(k);
      continue;
    }
    const int err = k == 0 ? EFAULT : errno;
    if (err == ESRCH) CHORUS_THROW(Status::kRemoteError, what, ": the sending process (pid ", pid, ") exited");
    if (err == EFAULT) {
      // The sender named memory it does not have: its buffer went away while the operation still ran.
      CHORUS_THROW(Status::kRemoteError, what, ": the sender's buffer at ", remote, " (", bytes - done,
                   " bytes) cannot be read in pid ", pid, ": it was freed or unmapped during the operation");
    }
    CHORUS_THROW(Status::kSystemError, what, ": process_vm_readv from pid ", pid, " failed: ", strerror(err),
                 " (CHORUS_CMA_DISABLE=1 copies through shared memory instead)");
  }
}

}  // namespace chorus::transport
