// Test harness for the transport conformance suite: runs a function on N ranks that are threads of this
// process or forked processes, each with its own Transport instance (as each rank has its own
// communicator). Ranks exchange PeerInfo and connection descriptors over socketpairs made before the ranks
// start (the stand-in for the bootstrap). Checks inside ranks throw; the harness reports what each rank did.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/host_id.h"
#include "base/wait.h"
#include "transport/inproc/transport.h"
#include "transport/net/transport.h"
#include "transport/shm/transport.h"
#include "transport/transport.h"

namespace chorus::transport::testing {

// Throws (so that it works in forked ranks, where gtest assertions would be lost).
#define TCHECK(cond, ...)                                                                                              \
  do {                                                                                                                 \
    if (!(cond))                                                                                                       \
      throw std::runtime_error(                                                                                        \
          ::chorus::detail::concat(__FILE__, ":", __LINE__, ": check failed: " #cond " " __VA_OPT__(, ) __VA_ARGS__)); \
  } while (0)

enum class Kind { kInproc, kShm, kSocket };
enum class Mode { kThreads, kProcesses };
struct Setup {
  Kind kind;
  Mode mode;
};

inline const char* kindName(Kind k) {
  return k == Kind::kInproc ? "inproc" : k == Kind::kShm ? "shm" : "socket";
}

inline std::string setupName(const Setup& s) {
  return std::string(kindName(s.kind)) + (s.mode == Mode::kThreads ? "_threads" : "_procs");
}

inline std::unique_ptr<Transport> makeTransport(Kind k) {
  switch (k) {
    case Kind::kInproc: return std::make_unique<inproc::InprocTransport>();
    case Kind::kShm: return std::make_unique<shm::ShmTransport>();
    case Kind::kSocket: return std::make_unique<net::NetTransport>();
  }
  return nullptr;
}

inline WaitContext waitFor(int64_t ms, const std::atomic<uint32_t>* abort = nullptr) {
  WaitContext ctx;
  ctx.deadline = Deadline::afterMs(ms);
  ctx.abort = abort;
  ctx.what = "test wait";
  return ctx;
}

// ---- data: a byte pattern any rank can recompute from (seed, offset) ----

inline uint8_t patternByte(uint64_t seed, uint64_t i) {
  uint64_t x = (i + seed * 0x100000001b3ull) * 0x9E3779B97F4A7C15ull;
  return static_cast<uint8_t>((x >> 32) ^ (x >> 56));
}
inline void fillPattern(void* dst, size_t n, uint64_t seed, uint64_t offset = 0) {
  auto* p = static_cast<uint8_t*>(dst);
  for (size_t i = 0; i < n; ++i) p[i] = patternByte(seed, offset + i);
}
inline void checkPattern(const void* src, size_t n, uint64_t seed, uint64_t offset = 0) {
  const auto* p = static_cast<const uint8_t*>(src);
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != patternByte(seed, offset + i)) {
      TCHECK(false, "byte ", offset + i, " is ", int(p[i]), ", expected ", int(patternByte(seed, offset + i)));
    }
  }
}

// ---- messages split across slots ----

// A message of n bytes travels as ceil(n / slotBytes) slots (one empty slot when n == 0).
inline void sendMessage(SendConnection& c, const void* data, size_t n, const WaitContext& ctx) {
  size_t off = 0;
  do {
    void* slot = c.acquire(ctx);
    size_t k = std::min(n - off, c.slotBytes());
    if (k > 0) memcpy(slot, static_cast<const char*>(data) + off, k);
    c.post(k);
    off += k;
  } while (off < n);
}

inline void recvMessage(RecvConnection& c, void* data, size_t n, const WaitContext& ctx) {
  size_t off = 0;
  do {
    size_t got = 0;
    const void* slot = c.peek(&got, ctx);
    size_t want = std::min(n - off, c.slotBytes());
    TCHECK(got == want, "slot of ", got, " bytes at offset ", off, " of a ", n, "-byte message, expected ", want);
    if (got > 0) memcpy(static_cast<char*>(data) + off, slot, got);
    c.release();
    off += got;
  } while (off < n);
}

// Throws unless fn throws chorus::Error with `want`; returns the message.
inline std::string expectError(Status want, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    TCHECK(e.status() == want, "expected ", statusName(want), ", got ", statusName(e.status()), ": ", e.what());
    return e.what();
  }
  TCHECK(false, "expected ", statusName(want), ", nothing was thrown");
  return {};
}

// ---- socketpair messaging between ranks ----

inline void writeAll(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t k = ::write(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    TCHECK(k > 0, "write to a test channel failed: ", strerror(errno));
    c += k;
    n -= static_cast<size_t>(k);
  }
}

inline void readAll(int fd, void* p, size_t n, int timeoutMs = 30000) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    pollfd pfd{fd, POLLIN, 0};
    int r = ::poll(&pfd, 1, timeoutMs);
    TCHECK(r > 0, "timed out reading a test channel");
    ssize_t k = ::read(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    TCHECK(k > 0, "test channel closed");
    c += k;
    n -= static_cast<size_t>(k);
  }
}

class Rank {
 public:
  Rank(int rank, int nranks, Setup setup, std::vector<int> fds)
      : rank_(rank), nranks_(nranks), setup_(setup), fds_(std::move(fds)), peers_(nranks) {}

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  bool processes() const { return setup_.mode == Mode::kProcesses; }
  Kind kind() const { return setup_.kind; }
  Transport& transport() {
    if (!transport_) transport_ = makeTransport(setup_.kind);
    return *transport_;
  }
  // Destroys this rank's transport (connections must be gone first).
  void dropTransport() { transport_.reset(); }
  const PeerInfo& info(int r) const { return peers_[static_cast<size_t>(r)]; }

  void sendBlob(int peer, const std::vector<uint8_t>& blob) {
    uint32_t n = static_cast<uint32_t>(blob.size());
    writeAll(fd(peer), &n, sizeof(n));
    writeAll(fd(peer), blob.data(), blob.size());
  }
  std::vector<uint8_t> recvBlob(int peer) {
    uint32_t n = 0;
    readAll(fd(peer), &n, sizeof(n));
    std::vector<uint8_t> blob(n);
    readAll(fd(peer), blob.data(), n);
    return blob;
  }
  // One-byte notifications (a barrier between two ranks is notify + await on both sides).
  void notify(int peer) { sendBlob(peer, {}); }
  void await(int peer) { TCHECK(recvBlob(peer).empty(), "expected a notification from rank ", peer); }

  // Everybody learns everybody's PeerInfo (what the bootstrap's allgather provides).
  void exchangeInfo() {
    PeerInfo me;
    me.rank = rank_;
    me.pid = getpid();
    me.hostHash = hostHash();
    me.processId = static_cast<uint64_t>(getpid()) * 0x9E3779B97F4A7C15ull;
    peers_[static_cast<size_t>(rank_)] = me;
    std::vector<uint8_t> blob(sizeof(me));
    memcpy(blob.data(), &me, sizeof(me));
    for (int p = 0; p < nranks_; ++p)
      if (p != rank_) sendBlob(p, blob);
    for (int p = 0; p < nranks_; ++p) {
      if (p == rank_) continue;
      auto b = recvBlob(p);
      TCHECK(b.size() == sizeof(PeerInfo));
      memcpy(&peers_[static_cast<size_t>(p)], b.data(), sizeof(PeerInfo));
    }
  }

  ConnectSpec spec(int peer, int nslots, size_t slotBytes) {
    ConnectSpec s;
    s.self = info(rank_);
    s.peer = info(peer);
    s.nslots = nslots;
    s.slotBytes = slotBytes;
    s.ctx = waitFor(30000);
    return s;
  }
  // The receiving end of peer -> this rank; its descriptor goes to the peer, which calls connectTo(this rank).
  std::unique_ptr<RecvConnection> listenFrom(int peer, int nslots, size_t slotBytes) {
    std::vector<uint8_t> desc;
    auto c = createHostRecv(transport(), spec(peer, nslots, slotBytes), &desc);
    sendBlob(peer, desc);
    return c;
  }
  std::unique_ptr<SendConnection> connectTo(int peer, int nslots, size_t slotBytes) {
    return connectHostSend(transport(), spec(peer, nslots, slotBytes), recvBlob(peer));
  }

 private:
  int fd(int peer) const { return fds_[static_cast<size_t>(peer)]; }

  int rank_;
  int nranks_;
  Setup setup_;
  std::vector<int> fds_;
  std::vector<PeerInfo> peers_;
  std::unique_ptr<Transport> transport_;
};

struct Outcome {
  bool ok = false;
  std::string error;  // what the rank threw
  int signal = 0;     // processes: the signal that ended or stopped it
};

// Runs fn on n ranks (threads or forked processes) and returns how each ended. A forked rank that stops
// itself (SIGSTOP) counts as ended; it is killed once every rank has ended.
inline std::vector<Outcome> runRanks(Setup setup, int n, const std::function<void(Rank&)>& fn, int timeoutSec = 60) {
  // fds[a][b]: rank a's end of the socketpair between a and b.
  std::vector<std::vector<int>> fds(n, std::vector<int>(n, -1));
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      int sv[2];
      if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) throw std::runtime_error("socketpair failed");
      fds[a][b] = sv[0];
      fds[b][a] = sv[1];
    }
  }
  auto closeAll = [&] {
    for (auto& row : fds)
      for (int& fd : row)
        if (fd >= 0) ::close(fd), fd = -1;
  };
  auto body = [&](int r) {
    Rank rank(r, n, setup, fds[static_cast<size_t>(r)]);
    rank.exchangeInfo();
    fn(rank);
  };
  std::vector<Outcome> out(n);

  if (setup.mode == Mode::kThreads) {
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
      threads.emplace_back([&, r] {
        try {
          body(r);
          out[r].ok = true;
        } catch (const std::exception& e) {
          out[r].error = e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    closeAll();
    return out;
  }

  std::vector<pid_t> pids(n);
  std::vector<int> results(n);
  for (int r = 0; r < n; ++r) {
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    pid_t pid = fork();
    if (pid == 0) {
      ::close(pfd[0]);
      for (int a = 0; a < n; ++a)
        if (a != r)
          for (int fd : fds[a])
            if (fd >= 0) ::close(fd);
      std::string err;
      try {
        body(r);
      } catch (const std::exception& e) {
        err = e.what();
        err = err.empty() ? "unknown error" : err;
      }
      if (!err.empty()) {
        ssize_t k = ::write(pfd[1], err.data(), err.size());
        (void)k;
      }
      _exit(err.empty() ? 0 : 1);
    }
    ::close(pfd[1]);
    pids[r] = pid;
    results[r] = pfd[0];
  }
  closeAll();

  std::vector<bool> ended(n, false), stopped(n, false);
  uint64_t deadline = nowNs() + static_cast<uint64_t>(timeoutSec) * 1000000000ull;
  for (;;) {
    bool all = true;
    for (int r = 0; r < n; ++r) {
      if (ended[r]) continue;
      int st = 0;
      pid_t w = waitpid(pids[r], &st, WNOHANG | WUNTRACED);
      if (w == pids[r]) {
        ended[r] = true;
        if (WIFEXITED(st)) out[r].ok = WEXITSTATUS(st) == 0;
        if (WIFSIGNALED(st)) out[r].signal = WTERMSIG(st);
        if (WIFSTOPPED(st)) out[r].signal = WSTOPSIG(st), stopped[r] = true;
      } else {
        all = false;
      }
    }
    if (all) break;
    if (nowNs() > deadline) {
      for (int r = 0; r < n; ++r) {
        if (ended[r]) continue;
        kill(pids[r], SIGKILL);
        waitpid(pids[r], nullptr, 0);
        ended[r] = true;
        out[r].error = "rank timed out (killed by the harness)";
      }
      break;
    }
    usleep(2000);
  }
  for (int r = 0; r < n; ++r) {
    if (stopped[r]) {
      kill(pids[r], SIGKILL);
      waitpid(pids[r], nullptr, 0);
    }
    char buf[4096];
    ssize_t k;
    while ((k = ::read(results[r], buf, sizeof(buf))) > 0) out[r].error.append(buf, static_cast<size_t>(k));
    ::close(results[r]);
  }
  return out;
}

}  // namespace chorus::transport::testing
