#include "transport/socket/proxy.h"

#include <sched.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "base/futex.h"
#include "base/logging.h"
#include "base/params.h"
#include "base/wait.h"

namespace chorus::transport::socket {
namespace {

constexpr int kPollMs = 100;  // upper bound of a sleep (stop and hello deadlines)

}  // namespace

std::string errnoText(const char* op, int err) {
  return detail::concat(op, ": ", strerror(err));
}

Proxy::Proxy(const SocketAddress& bindAddr) {
  listener_ = Socket::listen(bindAddr);
  listener_.setNonBlocking(true);
  address_ = listener_.localAddress();
  eventFd_ = CHORUS_CHECK_SYS(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), "creating the socket proxy's eventfd");
  thread_ = std::thread([this] { run(); });
}

Proxy::~Proxy() {
  stop_.store(true, std::memory_order_release);
  wake();
  thread_.join();
  ::close(eventFd_);
}

void Proxy::add(std::shared_ptr<ConnState> conn) {
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
  (void)r;  // EAGAIN means the counter is already non-zero: the thread will wake anyway
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
  while (!stop_.load(std::memory_order_acquire)) {
    adopt();
    bool moved = false;
    for (auto& c : conns_) moved |= progress(*c);
    reap();
    if (moved) {
      idleSince = 0;
      continue;
    }
    // Nothing moved: keep looking for a while (a ping-pong partner answers within microseconds), yielding
    // because ranks may outnumber cores, then sleep in poll().
    uint64_t now = nowNs();
    if (idleSince == 0) idleSince = now;
    if (now - idleSince < spinNs) {
      sched_yield();
      continue;
    }
    sleep();
    idleSince = 0;
  }
}

bool Proxy::progress(ConnState& c) {
  if (c.dead) return false;
  return c.send ? progressSend(c) : progressRecv(c);
}

void Proxy::setSleepFlags(bool on) {
  for (auto& cp : conns_) {
    ConnState& c = *cp;
    FifoControl* f = c.fifo.control();
    if (!on) {
      if (c.flagged) (c.send ? f->consumerSleeping : f->producerSleeping).store(0, std::memory_order_relaxed);
      c.flagged = false;
      continue;
    }
    if (c.dead || (!c.send && c.attached < c.streams.size())) continue;
    bool waitsOnUser;
    if (c.send) {
      // Some stream has written everything posted: a new post has work for it.
      uint32_t tail = f->tail.load(std::memory_order_relaxed);
      waitsOnUser = std::any_of(c.streams.begin(), c.streams.end(), [&](const Stream& st) { return st.slot == tail; });
    } else {
      // Stream 0 has filled every free slot: only a release makes room.
      waitsOnUser = c.streams[0].slot - f->head.load(std::memory_order_relaxed) >= f->nslots;
    }
    if (waitsOnUser) {
      (c.send ? f->consumerSleeping : f->producerSleeping).store(1, std::memory_order_seq_cst);
      c.flagged = true;
    }
  }
}

void Proxy::sleep() {
  setSleepFlags(true);
  // One more pass after raising the flags: a post or release that missed them is seen here.
  bool moved = false;
  for (auto& c : conns_) moved |= progress(*c);
  if (moved) {
    setSleepFlags(false);
    return;
  }

  pollFds_.clear();
  pollRefs_.clear();
  pollFds_.push_back({eventFd_, POLLIN, 0});
  pollRefs_.push_back({PollRef::kWake, nullptr, 0});
  pollFds_.push_back({listener_.fd(), POLLIN, 0});
  pollRefs_.push_back({PollRef::kListener, nullptr, 0});
  for (size_t i = 0; i < pending_.size(); ++i) {
    pollFds_.push_back({pending_[i].sock.fd(), POLLIN, 0});
    pollRefs_.push_back({PollRef::kPending, nullptr, i});
  }
  for (auto& cp : conns_) {
    ConnState& c = *cp;
    if (c.dead) continue;
    FifoControl* f = c.fifo.control();
    for (size_t s = 0; s < c.streams.size(); ++s) {
      Stream& st = c.streams[s];
      if (!st.sock.valid()) continue;
      short events = 0;
      if (c.send) {
        // POLLIN on a sending stream means the receiver closed it (it never sends).
        events = static_cast<short>(POLLIN | (st.blocked ? POLLOUT : 0));
      } else if (s == 0) {
        if (!st.eof && st.slot - f->head.load(std::memory_order_relaxed) < f->nslots) events = POLLIN;
      } else if (st.slot != c.headers) {
        events = POLLIN;
      }
      // A receiving stream with nothing to read is left out: a hang-up on it would make poll() spin, and its
      // data (or end) is read once the user frees a slot.
      if (events == 0) continue;
      pollFds_.push_back({st.sock.fd(), events, 0});
      pollRefs_.push_back({PollRef::kStream, &c, s});
    }
  }

  int n = ::poll(pollFds_.data(), pollFds_.size(), kPollMs);
  setSleepFlags(false);
  if (n <= 0) return;

  bool acceptNow = false;
  for (size_t i = 0; i < pollFds_.size(); ++i) {
    short rev = pollFds_[i].revents;
    if (rev == 0) continue;
    const PollRef& ref = pollRefs_[i];
    switch (ref.kind) {
      case PollRef::kWake: {
        uint64_t count;
        ssize_t r = ::read(eventFd_, &count, sizeof(count));
        (void)r;
        break;
      }
      case PollRef::kListener: acceptNow = true; break;
      case PollRef::kPending:
        if (readHello(pending_[ref.index])) admit(pending_[ref.index]);
        break;
      case PollRef::kStream:
        if (ref.conn->send) watchSendStream(*ref.conn, ref.conn->streams[ref.index], rev);
        break;
    }
  }
  // Drop pending sockets that were admitted, rejected, closed or too slow.
  uint64_t now = nowNs();
  std::erase_if(pending_, [&](const Pending& p) { return !p.sock.valid() || now > p.deadlineNs; });
  if (acceptNow) acceptAll();
}

void Proxy::watchSendStream(ConnState& c, Stream& st, short revents) {
  if (revents & POLLOUT) st.blocked = false;
  if (c.dead || !(revents & (POLLIN | POLLERR | POLLHUP))) return;
  char byte;
  ssize_t r = ::recv(st.sock.fd(), &byte, 1, MSG_DONTWAIT);
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (r > 0) {
    c.fail(detail::concat("protocol error: the receiver at ", st.peer, " sent data"));
  } else if (r == 0) {
    c.fail(detail::concat("the receiver at ", st.peer, " closed the connection"));
  } else {
    c.fail(detail::concat("stream to ", st.peer, ": ", errnoText("recv", errno)));
  }
}

void Proxy::reap() {
  for (auto& cp : conns_) {
    ConnState& c = *cp;
    if (!c.dead && c.userGone.load(std::memory_order_acquire)) {
      // A sender's user end is gone: finish writing what it posted, then close.
      bool flushed = c.send && c.published == c.fifo.control()->tail.load(std::memory_order_acquire);
      if (!c.send || flushed) c.dead = true;
    }
    if (c.dead) {
      if (c.fifo.control()->closed.load(std::memory_order_relaxed) == 0) fifoClose(c.fifo.control());
      for (Stream& st : c.streams) st.sock.close();
    }
  }
  std::erase_if(conns_, [](const std::shared_ptr<ConnState>& c) { return c->dead; });
}

}  // namespace chorus::transport::socket
