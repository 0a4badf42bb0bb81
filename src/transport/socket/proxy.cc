#include "transport/socket/proxy.h"

#include <openssl/crypto.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
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

constexpr int kPollMs = 100;                   // upper bound of a sleep (stop and hello deadlines)
constexpr uint64_t kHelloNs = 10000000000ull;  // an accepted socket has 10 s to present its token

std::string errnoText(const char* op, int err) {
  return detail::concat(op, ": ", strerror(err));
}

// Outcome of one non-blocking read on a receiving stream.
enum class Read { kData, kAgain, kEnd };

Read readSome(ConnState& c, Stream& st, uint32_t index, void* buf, size_t n, bool atBoundary, ssize_t* got) {
  ssize_t r = ::recv(st.sock.fd(), buf, n, MSG_DONTWAIT);
  *got = r;
  if (r > 0) return Read::kData;
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return Read::kAgain;
  if (r == 0 && atBoundary) {
    st.eof = true;  // a clean close between slots; whether data is missing is decided by the caller
    return Read::kEnd;
  }
  c.fail(r == 0 ? detail::concat("stream ", index, " from ", st.peer, " closed in the middle of a slot")
                : detail::concat("stream ", index, " from ", st.peer, ": ", errnoText("recv", errno)));
  return Read::kEnd;
}

}  // namespace

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

// Sender: the proxy is the FIFO's consumer. Each stream writes its chunk of every posted slot; a slot is
// freed (head advanced) once every stream has written its part.
bool Proxy::progressSend(ConnState& c) {
  FifoControl* f = c.fifo.control();
  const uint32_t tail = f->tail.load(std::memory_order_seq_cst);  // seq_cst: pairs with consumerSleeping
  const uint32_t nstreams = static_cast<uint32_t>(c.streams.size());
  bool moved = false;
  for (uint32_t s = 0; s < nstreams; ++s) {
    Stream& st = c.streams[s];
    while (!st.blocked && st.slot != tail) {
      const uint64_t total = f->sizes[st.slot % f->nslots];
      uint64_t lo, hi;
      chunkRange(total, nstreams, s, &lo, &hi);
      iovec iov[2];
      int k = 0;
      if (s == 0 && st.headerOff < sizeof(st.header)) {
        if (st.headerOff == 0) st.header = total;
        iov[k++] = {reinterpret_cast<char*>(&st.header) + st.headerOff, sizeof(st.header) - st.headerOff};
      }
      if (st.off < hi - lo) iov[k++] = {fifoSlot(f, st.slot) + lo + st.off, hi - lo - st.off};
      if (k > 0) {
        msghdr m{};
        m.msg_iov = iov;
        m.msg_iovlen = static_cast<size_t>(k);
        ssize_t r = ::sendmsg(st.sock.fd(), &m, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (r < 0) {
          if (errno == EINTR) continue;
          if (errno == EAGAIN || errno == EWOULDBLOCK) {
            st.blocked = true;  // poll() tells when the socket drains
            break;
          }
          c.fail(detail::concat("stream ", s, " to ", st.peer, ": ", errnoText("send", errno)));
          return true;
        }
        moved = true;
        auto left = static_cast<uint64_t>(r);
        if (s == 0 && st.headerOff < sizeof(st.header)) {
          uint64_t h = std::min<uint64_t>(left, sizeof(st.header) - st.headerOff);
          st.headerOff += static_cast<uint32_t>(h);
          left -= h;
        }
        st.off += left;
        if ((s == 0 && st.headerOff < sizeof(st.header)) || st.off < hi - lo) continue;
      }
      ++st.slot;  // this stream's part of the slot is on the wire (or it had none)
      st.headerOff = 0;
      st.off = 0;
      moved = true;
    }
  }
  // head = the slot the slowest stream is on.
  uint32_t lag = 0;
  for (const Stream& st : c.streams) lag = std::max(lag, tail - st.slot);
  const uint32_t head = tail - lag;
  if (head != c.published) {
    c.published = head;
    f->head.store(head, std::memory_order_seq_cst);
    if (f->producerSleeping.load(std::memory_order_seq_cst) != 0) futexWake(&f->head);
    moved = true;
  }
  return moved;
}

// Receiver: the proxy is the FIFO's producer. Stream 0 reads each slot's size and its own chunk; the other
// streams fill their chunks of the slots whose size is known. A slot is published (tail advanced) once every
// stream has filled its part; no stream writes a slot the user has not freed.
bool Proxy::progressRecv(ConnState& c) {
  const uint32_t nstreams = static_cast<uint32_t>(c.streams.size());
  if (c.attached < nstreams) return false;
  FifoControl* f = c.fifo.control();
  const uint32_t head = f->head.load(std::memory_order_seq_cst);  // seq_cst: pairs with producerSleeping
  bool moved = false;
  ssize_t got = 0;

  Stream& s0 = c.streams[0];
  while (!s0.eof && s0.slot - head < f->nslots) {
    if (s0.headerOff < sizeof(s0.header)) {
      bool boundary = s0.headerOff == 0;
      Read r = readSome(c, s0, 0, reinterpret_cast<char*>(&s0.header) + s0.headerOff, sizeof(s0.header) - s0.headerOff,
                        boundary, &got);
      if (r != Read::kData) break;
      moved = true;
      s0.headerOff += static_cast<uint32_t>(got);
      if (s0.headerOff < sizeof(s0.header)) continue;
      if (s0.header > f->slotBytes) {
        c.fail(detail::concat("protocol error on stream 0 from ", s0.peer, ": a slot of ", s0.header,
                              " bytes exceeds the slot size ", f->slotBytes));
        break;
      }
      f->sizes[s0.slot % f->nslots] = s0.header;
      c.headers = s0.slot + 1;
    }
    uint64_t lo, hi;
    chunkRange(s0.header, nstreams, 0, &lo, &hi);
    if (s0.off < hi - lo) {
      Read r = readSome(c, s0, 0, fifoSlot(f, s0.slot) + lo + s0.off, hi - lo - s0.off, false, &got);
      if (r != Read::kData) break;
      moved = true;
      s0.off += static_cast<uint64_t>(got);
      if (s0.off < hi - lo) continue;
    }
    ++s0.slot;
    s0.headerOff = 0;
    s0.off = 0;
    moved = true;
  }
  for (uint32_t s = 1; s < nstreams && !c.dead; ++s) {
    Stream& st = c.streams[s];
    while (st.slot != c.headers) {
      uint64_t lo, hi;
      chunkRange(f->sizes[st.slot % f->nslots], nstreams, s, &lo, &hi);
      if (st.off < hi - lo) {
        // A stream that ends while it owes a chunk has lost data: readSome fails the connection.
        Read r = readSome(c, st, s, fifoSlot(f, st.slot) + lo + st.off, hi - lo - st.off, false, &got);
        if (r != Read::kData) break;
        moved = true;
        st.off += static_cast<uint64_t>(got);
        if (st.off < hi - lo) continue;
      }
      ++st.slot;
      st.off = 0;
      moved = true;
    }
  }
  if (c.dead) return true;

  // tail = the slot the slowest stream is on.
  uint32_t ahead = f->nslots;
  for (const Stream& st : c.streams) ahead = std::min(ahead, st.slot - head);
  const uint32_t tail = head + ahead;
  if (tail != c.published) {
    c.published = tail;
    f->tail.store(tail, std::memory_order_seq_cst);
    if (f->consumerSleeping.load(std::memory_order_seq_cst) != 0) futexWake(&f->tail);
    moved = true;
  }
  // Stream 0 closed between slots and the other streams owe nothing: the sender went away. Everything it
  // sent is published above, so the user reads it all before the closed flag stops its waits.
  if (s0.eof) {
    bool owed = false;
    for (uint32_t s = 1; s < nstreams; ++s) owed |= c.streams[s].slot != c.headers;
    if (!owed) {
      c.fail(detail::concat("the sender closed the connection (stream 0 from ", s0.peer, ")"));
      moved = true;
    }
  }
  return moved;
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
  pollRefs_.push_back({nullptr, -1});
  pollFds_.push_back({listener_.fd(), POLLIN, 0});
  pollRefs_.push_back({nullptr, -2});
  for (size_t i = 0; i < pending_.size(); ++i) {
    pollFds_.push_back({pending_[i].sock.fd(), POLLIN, 0});
    pollRefs_.push_back({nullptr, static_cast<int>(i)});
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
      pollRefs_.push_back({&c, static_cast<int>(s)});
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
    if (ref.conn == nullptr) {
      if (ref.index == -1) {
        uint64_t count;
        ssize_t r = ::read(eventFd_, &count, sizeof(count));
        (void)r;
      } else if (ref.index == -2) {
        acceptNow = true;
      } else if (readHello(pending_[static_cast<size_t>(ref.index)])) {
        admit(pending_[static_cast<size_t>(ref.index)]);
      }
      continue;
    }
    Stream& st = ref.conn->streams[static_cast<size_t>(ref.index)];
    if (ref.conn->send) watchSendStream(*ref.conn, st, rev);
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

void Proxy::acceptAll() {
  for (;;) {
    int fd = ::accept4(listener_.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        CHORUS_LOG_WARN(kNet, "socket transport: accept on ", address_.toString(), " failed: ", strerror(errno));
      }
      return;
    }
    Pending p;
    p.sock = Socket(fd);
    p.sock.setNoDelay();
    p.deadlineNs = nowNs() + kHelloNs;
    pending_.push_back(std::move(p));
  }
}

bool Proxy::readHello(Pending& p) {
  ssize_t r = ::recv(p.sock.fd(), reinterpret_cast<char*>(&p.hello) + p.got, sizeof(p.hello) - p.got, MSG_DONTWAIT);
  if (r > 0) {
    p.got += static_cast<size_t>(r);
    return p.got == sizeof(p.hello);
  }
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
  p.sock.close();  // closed or failed before introducing itself
  return false;
}

// Attaches an introduced socket to the receiving connection whose token it presents, or drops it.
bool Proxy::admit(Pending& p) {
  if (p.hello.magic == kHelloMagic) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      for (auto& cp : conns_) {
        ConnState& c = *cp;
        if (c.send || c.dead || p.hello.stream >= c.streams.size()) continue;
        if (CRYPTO_memcmp(c.token, p.hello.token, kTokenBytes) != 0) continue;
        Stream& st = c.streams[p.hello.stream];
        if (st.sock.valid()) break;  // a second stream with the same index: reject
        SocketAddress peer = p.sock.peerAddress();
        st.sock = std::move(p.sock);
        st.peer = peer.toString();
        ++c.attached;
        return true;
      }
      adopt();  // the receiver may have registered while this thread slept
    }
  }
  std::string from = p.sock.valid() ? p.sock.peerAddress().toString() : std::string("?");
  CHORUS_LOG_WARN(kNet, "socket transport: rejected a connection from ", from, " to ", address_.toString(),
                  ": it did not present a valid token");
  p.sock.close();
  return false;
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
