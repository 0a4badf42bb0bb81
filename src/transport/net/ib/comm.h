// The ib plugin's communicators and requests, and the resources each comm owns: a completion queue with its
// event channel, the RC QPs of the connection, a ring of Cts buffers and the TCP socket of its setup.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "transport/net/ib/devices.h"
#include "transport/net/ib/mr_cache.h"
#include "transport/net/ib/qp.h"
#include "transport/net/ib/wire.h"

namespace chorus::netplugin::ib {

// What a work request is, in the top byte of its wr_id; the rest is a request slot or a counter.
enum class WrKind : uint8_t {
  kCtsRecv = 1,    // sender: a receive buffer for the next Cts (value: its index in the ring)
  kCtsSend = 2,    // receiver: a Cts sent (value: the Cts count; only every kCtsSignalEvery-th is signaled)
  kDataWrite = 3,  // sender: a stripe of a message (value: request slot)
  kDataRecv = 4,   // receiver: the arrival of a stripe (value: request slot)
  kFlushRead = 5,  // receiver: the read that flushes GPU memory (value: request slot)
};
inline uint64_t wrId(WrKind kind, uint64_t value) {
  return (static_cast<uint64_t>(kind) << 56) | value;
}
inline WrKind wrKind(uint64_t id) {
  return static_cast<WrKind>(id >> 56);
}
inline uint64_t wrValue(uint64_t id) {
  return id & ((uint64_t(1) << 56) - 1);
}
constexpr uint64_t kCtsSignalEvery = 8;
constexpr int kMaxFlushes = 8;  // outstanding iflush requests per comm

struct Comm;

// What regMr returns: the range the caller registered (isend/irecv must stay inside it) and the cache's
// registration of its pages, which other handles may share.
struct MrHandle {
  MrCache::Entry* entry = nullptr;
  const IbContext* dev = nullptr;
  uintptr_t addr = 0;
  size_t size = 0;
  int type = 0;
  uint32_t magic = kMrMagic;
  static constexpr uint32_t kMrMagic = 0x4d52484e;
  // Whether [p, p + n) lies inside the registered range.
  bool covers(const void* p, size_t n) const {
    auto a = reinterpret_cast<uintptr_t>(p);
    return a >= addr && a + n <= addr + size && a + n >= a;
  }
  uint32_t lkey() const { return entry->mr->lkey; }
  uint32_t rkey() const { return entry->mr->rkey; }
};

struct Request {
  Comm* comm = nullptr;
  bool used = false;
  bool done = false;
  chorusNetResult_t error = chorusNetSuccess;  // set when this request failed (message in `why`)
  std::string why;
  uint64_t seq = 0;
  char* data = nullptr;
  uint64_t size = 0;  // send: the message; recv: the buffer, then what arrived
  uint32_t tag = 0;
  const MrHandle* mr = nullptr;
  uint32_t expected = 0;  // completions that finish it (one per QP it uses)
  uint32_t got = 0;
  bool sizeKnown = false;  // recv: a stripe told the message's size
};

// The state of a connection while connect()/accept() build it.
struct Setup {
  int stage = 0;
  WireAddress to;  // sender: the listener
  uint64_t token = 0;
  ConnInfo out{};
  size_t outDone = 0;
  ConnInfo in{};
  size_t inDone = 0;
  uint32_t ready = kReady;
  size_t readyDone = 0;
};

struct Comm {
  bool send = false;
  const IbPort* port = nullptr;
  const IbVerbs* v = nullptr;
  int fd = -1;      // the setup socket, kept open: its end-of-file means the peer is gone
  int wakeFd = -1;  // eventfd that pollFds makes readable when a test() has news to report
  ibv_comp_channel* channel = nullptr;
  ibv_cq* cq = nullptr;
  unsigned unackedEvents = 0;
  bool armed = false;
  std::vector<ibv_qp*> qps;
  bool inlineCts = false;
  uint32_t psn = 0;
  // Cts buffers: the sender receives into them, the receiver sends from them when inline is not available.
  std::unique_ptr<Cts[]> cts;
  ibv_mr* ctsMr = nullptr;
  // Requests: a fixed pool, so that a wr_id can name a slot.
  Request reqs[kMaxRequests];
  int outstanding = 0;
  uint64_t posted = 0;  // isend/irecv count: the next request's seq
  // Sender: Cts received and not yet matched, sends not yet matched, both in order.
  std::deque<Cts> ctsReady;
  uint64_t ctsExpected = 0;
  std::deque<Request*> unsent;
  // Receiver: the next QP a message starts on; Cts sent and the count known complete.
  uint32_t qpCursor = 0;
  uint64_t ctsPosted = 0;
  uint64_t ctsRetired = 0;
  // Receiver with GPUDirect: a QP connected to itself whose RDMA read of one byte flushes GPU memory, and the
  // requests of those reads.
  ibv_qp* flushQp = nullptr;
  Request flushes[kMaxFlushes];
  int flushesOutstanding = 0;
  std::unique_ptr<uint64_t> flushScratch;
  ibv_mr* flushMr = nullptr;
  std::chrono::steady_clock::time_point nextPeerCheck{};  // when test() next looks at the setup socket
  // Once set, every request fails with it; only close is valid.
  chorusNetResult_t broken = chorusNetSuccess;
  std::string brokenWhy;
  std::unique_ptr<Setup> setup;

  // Records the first error; returns its code (for `return c->breakWith(...)`).
  chorusNetResult_t breakWith(chorusNetResult_t code, const std::string& why);
};

struct ListenComm {
  const IbPort* port = nullptr;
  int fd = -1;
  uint64_t token = 0;
  std::vector<std::unique_ptr<Comm>> pending;  // accepted sockets whose setup is under way
};

// Creates the CQ (with its channel), `nqps` QPs in INIT, the Cts ring and the wake eventfd of `c` on
// `port`; false with *why.
bool createResources(Comm* c, const IbPort* port, int nqps, std::string* why);
// Fills `info` with this side's address and QP numbers.
void describe(const Comm& c, uint64_t token, ConnInfo* info);
// Connects every QP of `c` to the peer `remote` (RTR, RTS); false with *why.
bool connectQps(Comm* c, const ConnInfo& remote, const QpTiming& timing, std::string* why);
// Posts the Cts receive buffer `index` (sender); false with *why.
bool postCtsRecv(Comm* c, uint64_t index, std::string* why);
// Creates the GPU flush QP of a receiver (when its port has GPUDirect); false with *why.
bool createFlushQp(Comm* c, const QpTiming& timing, std::string* why);
// Releases everything `c` holds (never waits on the peer) and deletes it.
void destroyComm(Comm* c);

}  // namespace chorus::netplugin::ib
