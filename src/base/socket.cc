#include "base/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "base/error.h"
#include "base/logging.h"
#include "base/params.h"

namespace chorus {

// ---- SocketAddress ----

SocketAddress SocketAddress::parse(const std::string& text, int defaultPort, const char* what) {
  std::string host = text;
  std::string port;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    CHORUS_CHECK_ARG(close != std::string::npos, what, " '", text, "': missing ']'");
    host = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      CHORUS_CHECK_ARG(text[close + 1] == ':', what, " '", text, "': expected ':' after ']'");
      port = text.substr(close + 2);
    }
  } else {
    size_t colon = text.rfind(':');
    if (colon != std::string::npos && text.find(':') == colon) {  // one colon: host:port
      host = text.substr(0, colon);
      port = text.substr(colon + 1);
    }
  }
  if (port.empty()) {
    CHORUS_CHECK_ARG(defaultPort >= 0, what, " '", text, "' has no port");
    port = std::to_string(defaultPort);
  }
  char* end = nullptr;
  long p = strtol(port.c_str(), &end, 10);
  CHORUS_CHECK_ARG(*end == '\0' && p >= 0 && p <= 65535, what, " '", text, "': bad port '", port, "'");
  CHORUS_CHECK_ARG(!host.empty(), what, " '", text, "': empty host");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  CHORUS_CHECK_ARG(rc == 0 && res != nullptr, what, " '", text, "': cannot resolve '", host, "': ", gai_strerror(rc));
  SocketAddress a = fromSockaddr(res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  a.setPort(static_cast<int>(p));
  return a;
}

SocketAddress SocketAddress::fromSockaddr(const sockaddr* sa, socklen_t len) {
  SocketAddress a;
  CHORUS_ENFORCE(len <= sizeof(a.storage_), "sockaddr too large");
  memcpy(&a.storage_, sa, len);
  a.len_ = len;
  return a;
}

SocketAddress SocketAddress::loopback(int port) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  in.sin_port = htons(static_cast<uint16_t>(port));
  return fromSockaddr(reinterpret_cast<sockaddr*>(&in), sizeof(in));
}

int SocketAddress::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_port);
  if (family() == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_port);
  return -1;
}

void SocketAddress::setPort(int port) {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&storage_)->sin_port = htons(static_cast<uint16_t>(port));
  if (family() == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&storage_)->sin6_port = htons(static_cast<uint16_t>(port));
  }
}

bool SocketAddress::isLoopback() const {
  if (family() == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr.s_addr) >> 24) == 127;
  }
  if (family() == AF_INET6) return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr);
  return false;
}

std::string SocketAddress::toString() const {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr, buf, sizeof(buf));
    return std::string(buf) + ":" + std::to_string(port());
  }
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr, buf, sizeof(buf));
    return "[" + std::string(buf) + "]:" + std::to_string(port());
  }
  return "<invalid>";
}

// ---- interfaces ----

namespace {

struct IfSpec {
  bool exclude = false;
  bool exact = false;
  std::vector<std::string> names;
};

IfSpec parseIfSpec(const std::string& spec) {
  IfSpec s;
  std::string rest = spec;
  if (!rest.empty() && rest[0] == '^') {
    s.exclude = true;
    rest.erase(0, 1);
  }
  if (!rest.empty() && rest[0] == '=') {
    s.exact = true;
    rest.erase(0, 1);
  }
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t comma = rest.find(',', pos);
    std::string tok = rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (!tok.empty()) s.names.push_back(tok);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return s;
}

bool matches(const IfSpec& s, const std::string& name) {
  bool hit = false;
  for (const auto& n : s.names) {
    if (s.exact ? name == n : name.compare(0, n.size(), n) == 0) hit = true;
  }
  return s.exclude ? !hit : hit;
}

// Lower ranks are preferred: ib*, then ordinary, then docker*, then loopback.
int preference(const NetInterface& i) {
  if (i.addr.isLoopback()) return 3;
  if (i.name.compare(0, 6, "docker") == 0) return 2;
  if (i.name.compare(0, 2, "ib") == 0) return 0;
  return 1;
}

}  // namespace

std::vector<NetInterface> findInterfaces(const std::string& spec) {
  std::vector<NetInterface> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  IfSpec s = parseIfSpec(spec);
  for (ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr || !(it->ifa_flags & IFF_UP)) continue;
    int fam = it->ifa_addr->sa_family;
    if (fam != AF_INET && fam != AF_INET6) continue;
    if (fam == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<sockaddr_in6*>(it->ifa_addr)->sin6_addr)) continue;
    NetInterface ni;
    ni.name = it->ifa_name;
    ni.addr = SocketAddress::fromSockaddr(it->ifa_addr, fam == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    if (!spec.empty() && !matches(s, ni.name)) continue;
    out.push_back(ni);
  }
  freeifaddrs(list);
  // IPv4 before IPv6 within a preference class keeps addresses short and predictable.
  std::stable_sort(out.begin(), out.end(), [](const NetInterface& a, const NetInterface& b) {
    int pa = preference(a), pb = preference(b);
    if (pa != pb) return pa < pb;
    return a.addr.family() == AF_INET && b.addr.family() != AF_INET;
  });
  return out;
}

NetInterface chooseBootstrapInterface() {
  std::string spec = param::SocketIfname();
  auto list = findInterfaces(spec);
  if (!list.empty()) return list.front();
  if (!spec.empty()) {
    CHORUS_LOG_WARN(kInit, "CHORUS_SOCKET_IFNAME=", spec, " matches no interface that is up; using loopback");
  }
  return NetInterface{"lo", SocketAddress::loopback()};
}

// ---- Socket ----

Socket::~Socket() {
  close();
}

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

void Socket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Socket Socket::listen(const SocketAddress& addr, int backlog) {
  Socket s(CHORUS_CHECK_SYS(::socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0)));
  int one = 1;
  setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  CHORUS_CHECK_SYS(::bind(s.fd(), addr.sa(), addr.len()), "binding to ", addr.toString());
  CHORUS_CHECK_SYS(::listen(s.fd(), backlog));
  return s;
}

Socket Socket::connect(const SocketAddress& addr, const WaitContext& ctx, bool refusedIsFinal) {
  int backoffMs = 1;
  for (;;) {
    Socket s(CHORUS_CHECK_SYS(::socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0)));
    s.setNonBlocking(true);
    int rc = ::connect(s.fd(), addr.sa(), addr.len());
    int err = rc == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      pollfd p{s.fd(), POLLOUT, 0};
      int wait = std::min(ctx.deadline.remainingMs(), 1000);
      int n = ::poll(&p, 1, wait);
      if (n > 0) {
        socklen_t len = sizeof(err);
        getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
      } else {
        err = ETIMEDOUT;
      }
    }
    if (err == 0) {
      s.setNonBlocking(false);
      s.setNoDelay();
      return s;
    }
    if (err == ECONNREFUSED && refusedIsFinal) {
      CHORUS_THROW(Status::kRemoteError, ctx.what, ": ", addr.toString(),
                   " refused the connection: the process listening there is gone");
    }
    // Refused or unreachable: the listener may not be up yet. Retry with back-off inside the deadline.
    if (err != ECONNREFUSED && err != ETIMEDOUT && err != EHOSTUNREACH && err != ENETUNREACH && err != EAGAIN &&
        err != ECONNRESET && err != EINTR) {
      CHORUS_THROW(Status::kSystemError, ctx.what, ": connect to ", addr.toString(), " failed: ", strerror(err));
    }
    if (ctx.deadline.expired()) {
      CHORUS_THROW(Status::kTimeout, ctx.what, ": could not connect to ", addr.toString(),
                   " before the deadline (last error: ", strerror(err), ")");
    }
    checkWaitInterrupted(ctx);
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(backoffMs, ctx.deadline.remainingMs())));
    backoffMs = std::min(backoffMs * 2, 100);
  }
}

Socket Socket::accept(const WaitContext& ctx) {
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    int n = ::poll(&p, 1, std::min(ctx.deadline.remainingMs(), 50));
    if (n > 0) {
      int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        Socket s(fd);
        s.setNoDelay();
        return s;
      }
      if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
        CHORUS_THROW(Status::kSystemError, ctx.what, ": accept failed: ", strerror(errno));
      }
    }
    if (waitInterruptedStatus(ctx) != Status::kSuccess) return Socket();
  }
}

namespace {

// Waits until fd is ready for `events`, watching ctx. Throws on timeout or abort.
void pollReady(int fd, short events, const WaitContext& ctx) {
  for (;;) {
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, std::min(ctx.deadline.remainingMs(), 20));
    if (n > 0) return;
    if (n < 0 && errno != EINTR) CHORUS_THROW(Status::kSystemError, ctx.what, ": poll failed: ", strerror(errno));
    checkWaitInterrupted(ctx);
  }
}

}  // namespace

void Socket::sendAll(const void* data, size_t n, const WaitContext& ctx) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t k = ::send(fd_, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      p += k;
      n -= static_cast<size_t>(k);
      continue;
    }
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollReady(fd_, POLLOUT, ctx);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    CHORUS_THROW(Status::kRemoteError, ctx.what,
                 ": the peer closed the connection (send: ", strerror(k < 0 ? errno : EPIPE), ")");
  }
}

void Socket::recvAll(void* data, size_t n, const WaitContext& ctx) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t k = ::recv(fd_, p, n, MSG_DONTWAIT);
    if (k > 0) {
      p += k;
      n -= static_cast<size_t>(k);
      continue;
    }
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollReady(fd_, POLLIN, ctx);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    CHORUS_THROW(Status::kRemoteError, ctx.what, ": the peer closed the connection",
                 k < 0 ? std::string(" (") + strerror(errno) + ")" : std::string());
  }
}

void Socket::setNoDelay() {
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void Socket::setNonBlocking(bool on) {
  int flags = fcntl(fd_, F_GETFL, 0);
  fcntl(fd_, F_SETFL, on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK));
}

void Socket::setBufferSizes(int bytes) {
  setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
  setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
}

SocketAddress Socket::localAddress() const {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  CHORUS_CHECK_SYS(getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len));
  return SocketAddress::fromSockaddr(reinterpret_cast<sockaddr*>(&ss), len);
}

SocketAddress Socket::peerAddress() const {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  CHORUS_CHECK_SYS(getpeername(fd_, reinterpret_cast<sockaddr*>(&ss), &len));
  return SocketAddress::fromSockaddr(reinterpret_cast<sockaddr*>(&ss), len);
}

}  // namespace chorus
