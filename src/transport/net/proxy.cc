#include "transport/net/proxy.h"

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "base/futex.h"
#include "base/params.h"
#include "base/sched_policy.h"
#include "base/wait.h"
#include "transport/net/plugin.h"

namespace chorus::transport::net {
namespace {

constexpr uint64_t kMinSliceNs = 20'000;
constexpr uint64_t kMaxSliceNs = 200'000;
constexpr uint64_t kIdleSleepNs = 100'000'000;  // nothing outstanding: sleep until woken (stop checks)
// Every outstanding request's comm offered its fds (chorusNet_v1_t::pollFds): poll() wakes on the network, and
// this bound only limits what a plugin whose fds miss an event could cost.
constexpr uint64_t kPolledSleepNs = 10'000'000;
constexpr int kMaxPollFdsPerComm = 16;
constexpr uint32_t kTagMask = CHORUS_NET_MAX_TAG - 1;
// The operation's tag (the size word's high half) after each message's payload.
constexpr size_t kSlotTagBytes = sizeof(uint32_t);

// Raises the proxy's sleeping flag on c's FIFO (the consumer's on a send FIFO, the producer's on a receive FIFO).
void raiseFlag(NetConn& c) {
  if (c.flagged) return;
  FifoControl* f = c.fifo.control();
  (c.send ? f->consumerSleeping : f->producerSleeping).store(1, std::memory_order_seq_cst);
  c.flagged = true;
}

}  // namespace

NetConn::NetConn(const chorusNet_v1_t* p, bool isSend, int nslots, size_t slotBytes, std::string name)
    : plugin(p), send(isSend), fifo(nslots, slotBytes, kSlotTagBytes), what(std::move(name)) {}

NetConn::~NetConn() {
  // Close before the FIFO memory goes: a plugin may still write into a posted receive until closeRecv.
  if (comm != nullptr) {
    if (mr != nullptr) plugin->deregMr(comm, mr);
    (send ? plugin->closeSend : plugin->closeRecv)(comm);
  }
  if (listenComm != nullptr) plugin->closeListen(listenComm);
}

void NetConn::fail(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (reason_.empty()) reason_ = reason;
  }
  dead = true;
  fifoClose(fifo.control());
}

void NetConn::check() const {
  if (fifo.control()->closed.load(std::memory_order_acquire) == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  CHORUS_THROW(Status::kRemoteError, what, ": ", reason_.empty() ? "the connection was closed" : reason_);
}

Proxy::Proxy(const chorusNet_v1_t* plugin)
    : plugin_(plugin),
      userDrives_(plugin->pollFds != nullptr),
      bulkBytes_(static_cast<uint64_t>(std::max<int64_t>(param::NetProxyBytes(), 0))) {
  eventFd_ = CHORUS_CHECK_SYS(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), "creating the network proxy's eventfd");
  thread_ = std::thread([this] { run(); });
}

Proxy::~Proxy() {
  stop_.store(true, std::memory_order_release);
  wake();
  thread_.join();
  ::close(eventFd_);
}

void Proxy::add(std::shared_ptr<NetConn> conn) {
  if (userDrives_) raiseFlag(*conn);  // not bulk yet: its user moves it from the first post (setSleepFlags)
  {
    std::lock_guard<std::mutex> lock(incomingMu_);
    incoming_.push_back(std::move(conn));
    hasIncoming_.store(true, std::memory_order_release);
  }
  wake();
}

void Proxy::wake() {
  uint64_t one = 1;
  ssize_t r = ::write(eventFd_, &one, sizeof(one));
  (void)r;  // EAGAIN: the counter is already non-zero, the thread wakes anyway
}

void Proxy::adopt() {
  if (!hasIncoming_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(incomingMu_);
  for (auto& c : incoming_) {
    if (flagsUp_) setSleepFlag(*c, true);
    conns_.push_back(std::move(c));
  }
  incoming_.clear();
  hasIncoming_.store(false, std::memory_order_relaxed);
}

bool Proxy::pass() {
  adopt();
  bool moved = false;
  for (auto& c : conns_) moved |= progress(*c);
  return moved;
}

void Proxy::run() {
  leaveInheritedBatch();  // woken by the network, it must preempt, even when a host stream's thread created it
  const int64_t spinUs = param::SpinUs();
  const uint64_t spinNs = static_cast<uint64_t>(spinUs < 0 ? 0 : spinUs) * 1000;
  uint64_t idleSince = 0;
  uint64_t slice = kMinSliceNs;
  while (!stop_.load(std::memory_order_acquire)) {
    std::unique_lock<std::mutex> lock(mu_);
    if (driver_.load(std::memory_order_seq_cst) != 0) {
      // A user thread drives: keep away from the plugin until it is done (unclaim wakes us when something is
      // left to watch). The raised flags make other threads' posts move themselves or wake someone.
      adopt();
      setSleepFlags(true);
      lock.unlock();
      // Unclaimed before the flags rose: a post in between may have missed them, and only a pass sees it.
      if (driver_.load(std::memory_order_seq_cst) == 0) continue;
      pollFds_.assign(1, pollfd{eventFd_, POLLIN, 0});
      sleepOn(pollFds_, kIdleSleepNs);
      idleSince = 0;
      continue;
    }
    setSleepFlags(false);
    bool moved = pass();
    reap();
    if (moved) {
      idleSince = 0;
      slice = kMinSliceNs;
      continue;
    }
    uint64_t now = nowNs();
    if (idleSince == 0) idleSince = now;
    if (now - idleSince < spinNs) {
      lock.unlock();
      sched_yield();
      continue;
    }
    setSleepFlags(true);
    // One more pass after raising the flags: a post or release that missed them is seen here.
    if (pass()) continue;
    // What is left for this thread: the eventfd, and the network's fds of what it watches (sends the kernel
    // has not taken whole, bulk receives). Nothing to watch: only a user or a stop wakes us.
    pollFds_.assign(1, pollfd{eventFd_, POLLIN, 0});
    bool any = false;
    const bool covered = collectFds(&pollFds_, false, &any);
    lock.unlock();
    sleepOn(pollFds_, !any ? kIdleSleepNs : covered ? kPolledSleepNs : slice);
    if (any && !covered) slice = std::min(slice * 2, kMaxSliceNs);
  }
}

bool Proxy::progress(NetConn& c) {
  if (c.dead) return false;
  if (c.comm == nullptr) return establish(c);
  return c.send ? progressSend(c) : progressRecv(c);
}

// Receiver: accept the sender, then register the FIFO's slots.
bool Proxy::establish(NetConn& c) {
  chorusNetResult_t r = plugin_->accept(c.listenComm, &c.comm);
  if (r != chorusNetSuccess) {
    c.fail(detail::concat("accept: ", pluginError(plugin_, r)));
    return true;
  }
  if (c.comm == nullptr) return false;
  plugin_->closeListen(c.listenComm);
  c.listenComm = nullptr;
  FifoControl* f = c.fifo.control();
  r = plugin_->regMr(c.comm, fifoSlot(f, 0), f->nslots * f->slotStride, CHORUS_PTR_HOST, &c.mr);
  if (r != chorusNetSuccess) c.fail(detail::concat("regMr: ", pluginError(plugin_, r)));
  return true;
}

// Tests the oldest requests in order and publishes the ones that finished: the sender frees their slots
// (head), the receiver publishes them with their sizes (tail). A request that failed fails the connection
// only after those before it are published, so that everything that arrived is delivered.
static bool completeInOrder(const chorusNet_v1_t* plugin, bool userDrives, uint64_t bulkBytes, NetConn& c) {
  FifoControl* f = c.fifo.control();
  const uint32_t before = c.completed;
  std::string failure;
  size_t last = 0;
  while (!c.requests.empty()) {
    int done = 0;
    size_t size = 0;
    chorusNetResult_t r = plugin->test(c.requests.front(), &done, &size);
    if (r != chorusNetSuccess) {
      c.requests.clear();  // the plugin frees a failed comm's requests when it is closed
      failure = pluginError(plugin, r);
      break;
    }
    if (!done) break;
    if (!c.send) {
      // The message is the payload and then the operation's tag (progressSend): the size word gets both back.
      if (size < kSlotTagBytes || size - kSlotTagBytes > f->slotBytes) {
        c.requests.pop_front();
        failure = detail::concat("a message of ", size, " bytes cannot be a slot of ", f->slotBytes,
                                 " bytes and its tag (a peer of another version or build?)");
        break;
      }
      const size_t bytes = size - kSlotTagBytes;
      uint32_t tag = 0;
      memcpy(&tag, fifoSlot(f, c.completed) + bytes, sizeof(tag));
      f->sizes[c.completed % f->nslots] = slotWord(bytes, tag);
    }
    last = f->sizes[c.completed % f->nslots] & kSlotBytesMask;
    c.requests.pop_front();
    ++c.completed;
  }
  if (c.completed != before) {
    c.bulk.store(last > bulkBytes, std::memory_order_relaxed);
    if (userDrives && last <= bulkBytes) raiseFlag(c);  // small again: its user moves it (setSleepFlags)
    if (c.send) {
      f->head.store(c.completed, std::memory_order_seq_cst);
      if (f->producerSleeping.load(std::memory_order_seq_cst) != 0) futexWake(&f->head);
    } else {
      f->tail.store(c.completed, std::memory_order_seq_cst);
      if (f->consumerSleeping.load(std::memory_order_seq_cst) != 0) futexWake(&f->tail);
    }
  }
  if (!failure.empty()) c.fail(failure);
  return c.completed != before || !failure.empty();
}

bool Proxy::progressSend(NetConn& c) {
  FifoControl* f = c.fifo.control();
  const uint32_t tail = f->tail.load(std::memory_order_seq_cst);  // seq_cst: pairs with consumerSleeping
  bool moved = false;
  while (c.posted != tail) {
    void* req = nullptr;
    // The payload travels with the operation's tag after it, in the slot's trailer, so that the receiver checks
    // bytes and operation as over shared memory (a same-size message of another operation is a mismatch).
    const uint64_t word = f->sizes[c.posted % f->nslots];
    const size_t bytes = word & kSlotBytesMask;
    const uint32_t tag = static_cast<uint32_t>(word >> 32);
    char* slot = fifoSlot(f, c.posted);
    memcpy(slot + bytes, &tag, sizeof(tag));
    chorusNetResult_t r =
        plugin_->isend(c.comm, slot, bytes + kSlotTagBytes, static_cast<int>(c.posted & kTagMask), c.mr, &req);
    if (r != chorusNetSuccess) {
      c.fail(detail::concat("isend: ", pluginError(plugin_, r)));
      return true;
    }
    if (req == nullptr) break;  // the plugin has no room: retry after completions
    c.requests.push_back(req);
    ++c.posted;
    moved = true;
  }
  return completeInOrder(plugin_, userDrives_, bulkBytes_, c) || moved;
}

// An irecv into every free slot (no test: posting is local).
bool Proxy::postRecvs(NetConn& c) {
  FifoControl* f = c.fifo.control();
  const uint32_t head = f->head.load(std::memory_order_seq_cst);  // seq_cst: pairs with producerSleeping
  bool moved = false;
  while (c.posted - head < f->nslots) {
    void* req = nullptr;
    chorusNetResult_t r = plugin_->irecv(c.comm, fifoSlot(f, c.posted), f->slotBytes + kSlotTagBytes,
                                         static_cast<int>(c.posted & kTagMask), c.mr, &req);
    if (r != chorusNetSuccess) {
      c.fail(detail::concat("irecv: ", pluginError(plugin_, r)));
      return true;
    }
    if (req == nullptr) break;
    c.requests.push_back(req);
    ++c.posted;
    moved = true;
  }
  return moved;
}

bool Proxy::progressRecv(NetConn& c) {
  bool moved = postRecvs(c);
  if (c.dead) return true;
  return completeInOrder(plugin_, userDrives_, bulkBytes_, c) || moved;
}

// A raised flag makes a user's post (send) or release (receive) call posted()/released(), which move the
// connection on the user's thread or wake a sleeper. It is up on every connection whenever the proxy thread
// does not pass over them continuously (it sleeps or parks), including on connections adopted meanwhile
// (adopt): a post that finds no flag is seen by nobody until the proxy's next pass. It stays up on connections
// whose messages are small (not bulk) even while the proxy thread runs: their user moves them, so that a small
// message is on the network when post() returns, whether or not the proxy thread gets a core.
void Proxy::setSleepFlags(bool on) {
  if (on == flagsUp_) return;
  flagsUp_ = on;
  for (auto& cp : conns_) setSleepFlag(*cp, on);
}

void Proxy::setSleepFlag(NetConn& c, bool on) {
  if (on || (userDrives_ && !c.bulk.load(std::memory_order_relaxed))) {
    raiseFlag(c);
  } else if (c.flagged) {
    FifoControl* f = c.fifo.control();
    (c.send ? f->consumerSleeping : f->producerSleeping).store(0, std::memory_order_relaxed);
    c.flagged = false;
  }
}

// Appends the fds of the connections to wait on: with `everything`, every connection with requests
// outstanding (a user thread that drives); otherwise what the proxy thread watches (sends in flight, bulk
// receives). *any: something is to be waited on. Returns false when a connection to wait on has no fd (a
// receiver still accepting, a plugin without pollFds): then the sleep must be a timer slice.
bool Proxy::collectFds(std::vector<pollfd>* fds, bool everything, bool* any) {
  bool covered = plugin_->pollFds != nullptr;
  for (auto& cp : conns_) {
    NetConn& c = *cp;
    if (c.dead) continue;
    if (c.comm == nullptr) {
      *any = true;
      covered = false;  // accepting: no fd to wait on, accept() is tried each slice
      continue;
    }
    if (c.requests.empty() && !(c.send && c.posted != c.fifo.control()->tail.load(std::memory_order_relaxed))) {
      continue;
    }
    if (!everything && !c.send && !c.bulk.load(std::memory_order_relaxed)) continue;  // its user fetches it
    *any = true;
    if (!covered) continue;
    const size_t at = fds->size();
    fds->resize(at + kMaxPollFdsPerComm);
    const int n = plugin_->pollFds(c.comm, fds->data() + at, kMaxPollFdsPerComm);
    fds->resize(at + static_cast<size_t>(n < 0 ? 0 : n));
  }
  return covered;
}

// After a user thread's claim: whether the proxy thread has something to watch that it may not be watching.
bool Proxy::needsWatcher() const {
  if (hasIncoming_.load(std::memory_order_acquire)) return true;
  for (const auto& cp : conns_) {
    const NetConn& c = *cp;
    if (c.dead) continue;
    if (c.comm == nullptr || c.userGone.load(std::memory_order_relaxed)) return true;
    if (c.send && (!c.requests.empty() || c.posted != c.fifo.control()->tail.load(std::memory_order_relaxed))) {
      return true;
    }
    if (!c.send && !c.requests.empty() && c.bulk.load(std::memory_order_relaxed)) return true;
  }
  return false;
}

void Proxy::sleepOn(std::vector<pollfd>& fds, uint64_t ns) {
  timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  if (::ppoll(fds.data(), fds.size(), &ts, nullptr) > 0 && (fds[0].revents & POLLIN) != 0) {
    uint64_t count;
    ssize_t r = ::read(eventFd_, &count, sizeof(count));
    (void)r;  // EAGAIN: another sleeper consumed it
  }
}

void Proxy::reap() {
  for (auto& cp : conns_) {
    NetConn& c = *cp;
    if (!c.dead && c.userGone.load(std::memory_order_acquire)) {
      // A sender's user end is gone: finish sending what it posted, then close.
      bool flushed = c.send && c.completed == c.fifo.control()->tail.load(std::memory_order_acquire);
      if (!c.send || flushed || c.comm == nullptr) c.dead = true;
    }
    if (c.dead && c.fifo.control()->closed.load(std::memory_order_relaxed) == 0) fifoClose(c.fifo.control());
  }
  // The plugin comms close when the last owner (proxy or user end) drops the NetConn.
  std::erase_if(conns_, [](const std::shared_ptr<NetConn>& c) { return c->dead; });
}

// ---- the user side ----

bool Proxy::claim(const NetConn& awaited) {
  if (!userDrives_ || awaited.bulk.load(std::memory_order_relaxed)) return false;
  int expected = 0;
  return driver_.compare_exchange_strong(expected, 1, std::memory_order_seq_cst);
}

bool Proxy::drive() {
  std::lock_guard<std::mutex> lock(mu_);
  return pass();
}

void Proxy::block(uint64_t ns) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    driverFds_.assign(1, pollfd{eventFd_, POLLIN, 0});
    bool any = false;
    if (!collectFds(&driverFds_, true, &any)) ns = std::min(ns, kMinSliceNs);
  }
  sleepOn(driverFds_, ns);
}

void Proxy::unclaim() {
  driver_.store(0, std::memory_order_seq_cst);
  bool need;
  {
    std::lock_guard<std::mutex> lock(mu_);
    need = needsWatcher();
  }
  if (need) wake();
}

void Proxy::poke(const NetConn& c) {
  // A bulk connection is the proxy thread's: the user thread has its own copying and reducing to do.
  if (!userDrives_ || c.bulk.load(std::memory_order_relaxed) || !mu_.try_lock()) return;
  pass();
  mu_.unlock();
}

void Proxy::posted(NetConn& c) {
  FifoControl* f = c.fifo.control();
  const uint32_t tail = f->tail.load(std::memory_order_relaxed);
  const bool small = (f->sizes[(tail - 1) % f->nslots] & kSlotBytesMask) <= bulkBytes_;
  if (userDrives_ && small) {
    // Waits for a pass in progress rather than leave the message to a thread that may not get a core soon.
    std::unique_lock<std::mutex> lock(mu_);
    if (!c.dead) progressSend(c);
    const bool left = !c.dead && (!c.requests.empty() || c.posted != tail);
    lock.unlock();
    if (!left) return;  // in the kernel's hands
  }
  wake();
}

void Proxy::released(NetConn& c) {
  if (userDrives_ && mu_.try_lock()) {
    if (!c.dead && c.comm != nullptr) postRecvs(c);
    const bool watched = !c.dead && (c.comm == nullptr || c.bulk.load(std::memory_order_relaxed));
    mu_.unlock();
    if (!watched) return;
  }
  wake();
}

}  // namespace chorus::transport::net
