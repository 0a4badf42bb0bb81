#include "transport/net/proxy.h"

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>

#include "base/error.h"
#include "base/futex.h"
#include "base/params.h"
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

}  // namespace

NetConn::NetConn(const chorusNet_v1_t* p, bool isSend, int nslots, size_t slotBytes, std::string name)
    : plugin(p), send(isSend), fifo(nslots, slotBytes), what(std::move(name)) {}

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

Proxy::Proxy(const chorusNet_v1_t* plugin) : plugin_(plugin) {
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
  {
    std::lock_guard<std::mutex> lock(mu_);
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
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& c : incoming_) conns_.push_back(std::move(c));
  incoming_.clear();
  hasIncoming_.store(false, std::memory_order_relaxed);
}

void Proxy::run() {
  const int64_t spinUs = param::SpinUs();
  const uint64_t spinNs = static_cast<uint64_t>(spinUs < 0 ? 0 : spinUs) * 1000;
  uint64_t idleSince = 0;
  uint64_t slice = kMinSliceNs;
  while (!stop_.load(std::memory_order_acquire)) {
    adopt();
    bool moved = false;
    for (auto& c : conns_) moved |= progress(*c);
    reap();
    if (moved) {
      idleSince = 0;
      slice = kMinSliceNs;
      continue;
    }
    uint64_t now = nowNs();
    if (idleSince == 0) idleSince = now;
    if (now - idleSince < spinNs) {
      sched_yield();
      continue;
    }
    // Requests on the network (or an accept) need testing; otherwise only a user or a stop wakes us.
    bool outstanding = std::any_of(conns_.begin(), conns_.end(), [](const std::shared_ptr<NetConn>& c) {
      return !c->dead && (!c->requests.empty() || c->comm == nullptr);
    });
    sleep(outstanding ? slice : kIdleSleepNs);
    if (outstanding) slice = std::min(slice * 2, kMaxSliceNs);
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
  r = plugin_->regMr(c.comm, fifoSlot(f, 0), f->nslots * f->slotBytes, CHORUS_PTR_HOST, &c.mr);
  if (r != chorusNetSuccess) c.fail(detail::concat("regMr: ", pluginError(plugin_, r)));
  return true;
}

// Tests the oldest requests in order and publishes the ones that finished: the sender frees their slots
// (head), the receiver publishes them with their sizes (tail). A request that failed fails the connection
// only after those before it are published, so that everything that arrived is delivered.
static bool completeInOrder(const chorusNet_v1_t* plugin, NetConn& c) {
  FifoControl* f = c.fifo.control();
  const uint32_t before = c.completed;
  std::string failure;
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
    if (!c.send) f->sizes[c.completed % f->nslots] = size;
    c.requests.pop_front();
    ++c.completed;
  }
  if (c.completed != before) {
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
    // The payload alone travels (the tag of the size word stays here: the receiving end is bytesOnly()).
    chorusNetResult_t r = plugin_->isend(c.comm, fifoSlot(f, c.posted), f->sizes[c.posted % f->nslots] & kSlotBytesMask,
                                         static_cast<int>(c.posted & kTagMask), c.mr, &req);
    if (r != chorusNetSuccess) {
      c.fail(detail::concat("isend: ", pluginError(plugin_, r)));
      return true;
    }
    if (req == nullptr) break;  // the plugin has no room: retry after completions
    c.requests.push_back(req);
    ++c.posted;
    moved = true;
  }
  return completeInOrder(plugin_, c) || moved;
}

bool Proxy::progressRecv(NetConn& c) {
  FifoControl* f = c.fifo.control();
  const uint32_t head = f->head.load(std::memory_order_seq_cst);  // seq_cst: pairs with producerSleeping
  bool moved = false;
  while (c.posted - head < f->nslots) {
    void* req = nullptr;
    chorusNetResult_t r =
        plugin_->irecv(c.comm, fifoSlot(f, c.posted), f->slotBytes, static_cast<int>(c.posted & kTagMask), c.mr, &req);
    if (r != chorusNetSuccess) {
      c.fail(detail::concat("irecv: ", pluginError(plugin_, r)));
      return true;
    }
    if (req == nullptr) break;
    c.requests.push_back(req);
    ++c.posted;
    moved = true;
  }
  return completeInOrder(plugin_, c) || moved;
}

void Proxy::setSleepFlags(bool on) {
  for (auto& cp : conns_) {
    NetConn& c = *cp;
    FifoControl* f = c.fifo.control();
    if (!on) {
      if (c.flagged) (c.send ? f->consumerSleeping : f->producerSleeping).store(0, std::memory_order_relaxed);
      c.flagged = false;
      continue;
    }
    if (c.dead || c.comm == nullptr) continue;
    // Sender: everything posted is on the network, a new post is work. Receiver: every slot holds a
    // receive or a published message, only a release makes room.
    bool waitsOnUser = c.send ? c.posted == f->tail.load(std::memory_order_relaxed)
                              : c.posted - f->head.load(std::memory_order_relaxed) >= f->nslots;
    if (waitsOnUser) {
      (c.send ? f->consumerSleeping : f->producerSleeping).store(1, std::memory_order_seq_cst);
      c.flagged = true;
    }
  }
}

void Proxy::sleep(uint64_t sliceNs) {
  setSleepFlags(true);
  // One more pass after raising the flags: a post or release that missed them is seen here.
  bool moved = false;
  for (auto& c : conns_) moved |= progress(*c);
  if (!moved) {
    // The users' eventfd, and the network's fds of every connection with requests outstanding when the plugin
    // offers them; then the sleep lasts until something happens instead of a timer slice.
    pollFds_.assign(1, pollfd{eventFd_, POLLIN, 0});
    bool covered = sliceNs != kIdleSleepNs && plugin_->pollFds != nullptr;
    for (size_t i = 0; covered && i < conns_.size(); ++i) {
      NetConn& c = *conns_[i];
      if (c.dead) continue;
      if (c.comm == nullptr) {
        covered = false;  // accepting: no fd to wait on, accept() is tried each slice
        break;
      }
      if (c.requests.empty()) continue;
      const size_t at = pollFds_.size();
      pollFds_.resize(at + kMaxPollFdsPerComm);
      const int n = plugin_->pollFds(c.comm, pollFds_.data() + at, kMaxPollFdsPerComm);
      pollFds_.resize(at + static_cast<size_t>(n < 0 ? 0 : n));
    }
    if (covered) sliceNs = kPolledSleepNs;
    timespec ts{static_cast<time_t>(sliceNs / 1'000'000'000), static_cast<long>(sliceNs % 1'000'000'000)};
    if (::ppoll(pollFds_.data(), pollFds_.size(), &ts, nullptr) > 0 && (pollFds_[0].revents & POLLIN) != 0) {
      uint64_t count;
      ssize_t r = ::read(eventFd_, &count, sizeof(count));
      (void)r;
    }
  }
  setSleepFlags(false);
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

}  // namespace chorus::transport::net
