#include "bootstrap/endpoint.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "base/error.h"
#include "base/logging.h"

namespace chorus::bootstrap {
namespace {

constexpr const char* kClosedByPeer = "connection closed by peer";

std::mutex gLimitsMu;
EndpointLimits gLimits;

constexpr size_t kReadChunk = 64 * 1024;
// Bytes read from one connection per poll round, so one busy sender cannot starve the others.
constexpr size_t kReadBudget = 1 << 20;
constexpr int kPollMs = 50;

}  // namespace

struct Endpoint::Conn {
  int id = 0;
  int fd = -1;
  Socket sock;                   // incoming connections: owned here
  std::shared_ptr<OutConn> out;  // outgoing connections: watched for EOF, owned by the OutConn
  std::string label;             // remote address, for logs
  FrameParser parser{kMaxHandshakePayload};
  std::unique_ptr<ServerHandshake> handshake;
  bool authed = false;
  uint64_t authHash = 0;
  Purpose purpose = Purpose::kData;
  PeerKey peer;
  bool pendingCounted = false;
  bool openCounted = false;
  bool registered = false;  // sent a REGISTER to a root served here
  uint64_t handshakeDeadlineNs = 0;
  uint64_t lastProgressNs = 0;
  std::vector<uint8_t> outBuf;
  size_t outOff = 0;
  bool dead = false;
};

void Endpoint::setLimits(const EndpointLimits& limits) {
  std::lock_guard<std::mutex> lock(gLimitsMu);
  gLimits = limits;
}

EndpointLimits Endpoint::limits() {
  std::lock_guard<std::mutex> lock(gLimitsMu);
  return gLimits;
}

Endpoint& Endpoint::get() {
  // Never destroyed: the service thread serves until the process exits, and ranks of communicators that are
  // still alive during static destruction must not find their endpoint gone. A forked child inherits the
  // parent's endpoint without its service thread, so it starts its own (the parent's copy is abandoned).
  static std::mutex mu;
  static Endpoint* ep = nullptr;
  static pid_t owner = 0;
  std::lock_guard<std::mutex> lock(mu);
  if (ep == nullptr || owner != getpid()) {
    ep = new Endpoint();
    owner = getpid();
  }
  return *ep;
}

Endpoint::Endpoint() {
  NetInterface iface = chooseBootstrapInterface();
  Socket listener = Socket::listen(iface.addr);
  listener.setNonBlocking(true);
  address_ = listener.localAddress();
  listeners_.push_back(std::move(listener));
  wakeFd_ = CHORUS_CHECK_SYS(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), "creating the bootstrap wake-up fd");
  CHORUS_LOG_INFO(kBootstrap, "bootstrap endpoint listening on ", address_.toString(), " (interface ", iface.name, ")");
  thread_ = std::thread([this] { run(); });
  thread_.detach();
}

void Endpoint::wake() {
  uint64_t one = 1;
  ssize_t rc = ::write(wakeFd_, &one, sizeof(one));
  (void)rc;  // EAGAIN means a wake-up is already pending
}

void Endpoint::registerSecret(uint64_t authHash, const Secret& secret) {
  std::lock_guard<std::mutex> lock(mu_);
  secrets_.try_emplace(authHash, secret);  // a commHash names one secret; the first registration stays
}

std::optional<Secret> Endpoint::secretFor(uint64_t authHash) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = secrets_.find(authHash);
  if (it == secrets_.end()) return std::nullopt;
  return it->second;
}

void Endpoint::serveRoot(uint64_t authHash) {
  roots_.serve(authHash);
}

void Endpoint::addListener(const SocketAddress& addr) {
  Socket s = Socket::listen(addr);
  s.setNonBlocking(true);
  {
    std::lock_guard<std::mutex> lock(mu_);
    newListeners_.push_back(std::move(s));
  }
  wake();
}

// ---- service thread ----

Endpoint::Conn* Endpoint::findConn(int id) {
  for (auto& c : conns_) {
    if (c->id == id && !c->dead) return c.get();
  }
  return nullptr;
}

void Endpoint::queue(Conn& c, std::vector<uint8_t> bytes) {
  if (c.dead) return;
  if (c.outOff == c.outBuf.size()) {
    c.outBuf = std::move(bytes);
    c.outOff = 0;
  } else {
    c.outBuf.insert(c.outBuf.end(), bytes.begin(), bytes.end());
  }
  flush(c);
}

void Endpoint::flush(Conn& c) {
  while (!c.dead && c.outOff < c.outBuf.size()) {
    ssize_t k = ::send(c.fd, c.outBuf.data() + c.outOff, c.outBuf.size() - c.outOff, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      c.outOff += static_cast<size_t>(k);
    } else if (k < 0 && errno == EINTR) {
      continue;
    } else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;  // poll() reports POLLOUT when there is room again
    } else {
      drop(c, std::string("send failed: ") + strerror(k < 0 ? errno : EPIPE));
      return;
    }
  }
  if (c.outOff == c.outBuf.size()) {
    c.outBuf.clear();
    c.outOff = 0;
  }
}

void Endpoint::closeConn(Conn& c) {
  if (c.out) {
    // The OutConn owns the fd and its writers may still hold it: shut it down so their next send fails
    // instead of closing an fd number that could be reused under them.
    ::shutdown(c.fd, SHUT_RDWR);
    c.out->closed.store(true);
    mailbox_.outgoingClosed(c.peer);
  } else {
    c.sock.close();
  }
  c.fd = -1;
}

void Endpoint::drop(Conn& c, const std::string& why) {
  if (c.dead) return;
  c.dead = true;
  // A peer closing its end is how every communicator ends: TRACE, not INFO. A dead peer is reported by the
  // waits that needed it, at WARN.
  const LogLevel level = why == kClosedByPeer ? LogLevel::kTrace : LogLevel::kInfo;
  if (c.out) {
    CHORUS_LOG(level, kBootstrap, "bootstrap: connection to ", c.label, " closed: ", why);
  } else if (!c.authed) {
    CHORUS_LOG_WARN(kBootstrap, "bootstrap: dropped unauthenticated connection from ", c.label, ": ", why);
  } else {
    CHORUS_LOG(level, kBootstrap, "bootstrap: connection from ", c.label, " closed: ", why);
  }
  if (c.pendingCounted) mailbox_.incomingPending(c.peer, -1);
  if (c.openCounted) mailbox_.incomingClosed(c.peer);
  c.pendingCounted = c.openCounted = false;
  // The root learns of the loss after this round (processLost), outside any frame handling that holds mu_.
  if (c.registered) lost_.emplace_back(c.authHash, c.id);
  closeConn(c);
}

void Endpoint::acceptAll(Socket& listener) {
  EndpointLimits lim = limits();
  for (;;) {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    int fd = ::accept4(listener.fd(), reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        CHORUS_LOG_WARN(kBootstrap, "bootstrap: accept failed: ", strerror(errno));
      }
      return;
    }
    auto c = std::make_unique<Conn>();
    c->id = nextConnId_++;
    c->sock = Socket(fd);
    c->fd = fd;
    c->sock.setNoDelay();
    c->label = SocketAddress::fromSockaddr(reinterpret_cast<sockaddr*>(&ss), len).toString();
    uint64_t now = nowNs();
    c->handshakeDeadlineNs = now + static_cast<uint64_t>(lim.handshakeMs) * 1000000ull;
    c->lastProgressNs = now;
    c->handshake = std::make_unique<ServerHandshake>([this](uint64_t h) { return secretFor(h); },
                                                     [] {
                                                       Nonce n{};
                                                       randomBytes(n.data(), n.size());
                                                       return n;
                                                     }());
    conns_.push_back(std::move(c));
    // Bound what unauthenticated peers can hold: evict the oldest of them (it had the longest time).
    int unauth = 0;
    for (auto& x : conns_) unauth += (!x->dead && !x->authed && !x->out) ? 1 : 0;
    if (unauth > lim.maxUnauthenticated) {
      for (auto& x : conns_) {
        if (!x->dead && !x->authed && !x->out) {
          drop(*x, "too many unauthenticated connections");
          break;
        }
      }
    }
  }
}

void Endpoint::readConn(Conn& c) {
  uint8_t buf[kReadChunk];
  size_t budget = kReadBudget;
  while (!c.dead && budget > 0) {
    ssize_t k = ::recv(c.fd, buf, std::min(sizeof(buf), budget), MSG_DONTWAIT);
    if (k == 0) {
      drop(c, kClosedByPeer);
      return;
    }
    if (k < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      drop(c, std::string("recv failed: ") + strerror(errno));
      return;
    }
    if (c.out) {
      drop(c, "unexpected data on an outgoing connection");
      return;
    }
    budget -= static_cast<size_t>(k);
    c.lastProgressNs = nowNs();
    const uint8_t* p = buf;
    size_t n = static_cast<size_t>(k);
    while (n > 0 && !c.dead) {
      size_t used = c.parser.feed(p, n);
      p += used;
      n -= used;
      if (c.parser.failed()) {
        drop(c, c.parser.error());
        return;
      }
      if (c.parser.hasFrame()) handleFrame(c, c.parser.take());
    }
  }
}

void Endpoint::handleFrame(Conn& c, Frame f) {
  if (!c.authed) {
    std::vector<uint8_t> reply;
    std::string error;
    auto step = c.handshake->onFrame(f, &reply, &error);
    if (step == ServerHandshake::Step::kFail) {
      drop(c, error);
      return;
    }
    if (c.handshake->helloSeen() && !c.pendingCounted && c.handshake->purpose() == Purpose::kData) {
      c.peer = PeerKey{c.handshake->commHash(), c.handshake->peerEndpoint().toString()};
      c.pendingCounted = true;
      mailbox_.incomingPending(c.peer, +1);
    }
    if (step == ServerHandshake::Step::kContinue) {
      queue(c, std::move(reply));
      return;
    }
    c.authed = true;
    c.authHash = c.handshake->commHash();
    c.purpose = c.handshake->purpose();
    c.label += " (endpoint " + c.handshake->peerEndpoint().toString() + ")";
    c.handshake.reset();
    c.parser.setMaxPayload(kMaxDataPayload);
    if (c.pendingCounted) {
      mailbox_.incomingOpened(c.peer);
      mailbox_.incomingPending(c.peer, -1);
      c.pendingCounted = false;
      c.openCounted = true;
    }
    return;
  }
  if (c.purpose == Purpose::kData && f.header.type == FrameType::kData) {
    MailKey key{c.authHash, f.header.commHash, f.header.dst, f.header.src, f.header.tag};
    mailbox_.deposit(key, std::move(f.payload));
    return;
  }
  if (c.purpose == Purpose::kRendezvous && f.header.type == FrameType::kRegister && !c.registered) {
    handleRegister(c, f);
    return;
  }
  drop(c, std::string("unexpected ") + frameTypeName(f.header.type) + " frame");
}

void Endpoint::sendReplies(Replies replies) {
  for (auto& [id, bytes] : replies) {
    if (Conn* m = findConn(id)) queue(*m, std::move(bytes));
  }
}

void Endpoint::processLost() {
  // Sending may drop more connections, whose losses the next round handles.
  while (!lost_.empty()) {
    auto lost = std::move(lost_);
    lost_.clear();
    sendReplies(roots_.onLost(lost));
  }
}

void Endpoint::handleRegister(Conn& c, const Frame& f) {
  auto reg = decodeRegistration(f.payload);
  if (!reg) {
    drop(c, "malformed REGISTER");
    return;
  }
  RootService::RegisterOutcome out = roots_.onRegister(c.id, c.authHash, *reg, address_);
  c.registered = out.registered;
  for (int id : out.released) {
    if (Conn* m = findConn(id)) m->registered = false;
  }
  sendReplies(std::move(out.replies));
}

void Endpoint::run() {
  std::vector<pollfd> fds;
  for (;;) {
    // Last resort: the per-connection handlers catch their own failures; nothing may end this thread.
    try {
      serveOnce(fds);
    } catch (const std::exception& e) {
      CHORUS_LOG_WARN(kBootstrap, "bootstrap: service thread error: ", e.what());
    }
    rounds_.fetch_add(1, std::memory_order_release);
  }
}

bool Endpoint::awaitFreshRound(const Deadline& until) {
  // The round under way may have polled before the call; the one after it has not. Each is woken, so that
  // neither sleeps its poll() timeout when nothing is readable.
  const uint64_t target = rounds_.load(std::memory_order_acquire) + 2;
  wake();
  bool wokeNext = false;
  for (uint64_t done; (done = rounds_.load(std::memory_order_acquire)) < target;) {
    if (until.expired()) return false;
    if (!wokeNext && done + 1 == target) {
      wake();
      wokeNext = true;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

void Endpoint::serveOnce(std::vector<pollfd>& fds) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& l : newListeners_) listeners_.push_back(std::move(l));
    newListeners_.clear();
    for (auto& w : newWatches_) {
      auto c = std::make_unique<Conn>();
      c->id = nextConnId_++;
      c->out = w;
      c->fd = w->sock.fd();
      c->authed = true;
      c->peer = w->peer;
      c->label = w->peer.endpoint;
      conns_.push_back(std::move(c));
    }
    newWatches_.clear();
  }
  fds.clear();
  fds.push_back(pollfd{wakeFd_, POLLIN, 0});
  for (auto& l : listeners_) fds.push_back(pollfd{l.fd(), POLLIN, 0});
  size_t firstConn = fds.size();
  for (auto& c : conns_) {
    short ev = POLLIN | POLLRDHUP;
    if (c->outOff < c->outBuf.size()) ev |= POLLOUT;
    fds.push_back(pollfd{c->fd, ev, 0});
  }
  int n = ::poll(fds.data(), fds.size(), kPollMs);
  if (n < 0) {
    if (errno != EINTR) CHORUS_LOG_WARN(kBootstrap, "bootstrap: poll failed: ", strerror(errno));
    return;
  }
  if (fds[0].revents & POLLIN) {
    uint64_t v;
    ssize_t rc = ::read(wakeFd_, &v, sizeof(v));
    (void)rc;
  }
  // Serve the connections that existed when poll() was called; new ones join the next round.
  // Nothing may escape this thread: a failure while serving one connection drops that connection only.
  size_t nconns = conns_.size();
  for (size_t i = 0; i < nconns; ++i) {
    Conn& c = *conns_[i];
    short re = fds[firstConn + i].revents;
    if (c.dead || re == 0) continue;
    try {
      if (re & POLLOUT) flush(c);
      if (re & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) readConn(c);
    } catch (const std::exception& e) {
      drop(c, std::string("internal error: ") + e.what());
    }
  }
  for (size_t i = 0; i < listeners_.size(); ++i) {
    try {
      if (fds[1 + i].revents & POLLIN) acceptAll(listeners_[i]);
    } catch (const std::exception& e) {
      CHORUS_LOG_WARN(kBootstrap, "bootstrap: accepting a connection failed: ", e.what());
    }
  }
  processLost();
  // Time limits: a handshake must finish in handshakeMs; a frame may not stall mid-way for stallMs.
  uint64_t now = nowNs();
  uint64_t stallNs = static_cast<uint64_t>(limits().stallMs) * 1000000ull;
  for (auto& c : conns_) {
    if (c->dead || c->out) continue;
    if (!c->authed && now > c->handshakeDeadlineNs) {
      drop(*c, "handshake not completed in time");
    } else if (c->authed && c->parser.midFrame() && now - c->lastProgressNs > stallNs) {
      drop(*c, "frame stalled mid-way");
    }
  }
  processLost();
  conns_.erase(std::remove_if(conns_.begin(), conns_.end(), [](const auto& c) { return c->dead; }), conns_.end());
}

}  // namespace chorus::bootstrap
