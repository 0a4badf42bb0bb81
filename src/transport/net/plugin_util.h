// Small POSIX helpers shared by the network plugins (socket, ucx, ib, the test plugin). Header-only and free
// of the rest of the library, because the plugins that are shared libraries compile it on their own: the
// per-thread last error, the TCP address a listener publishes in its handle, and non-blocking TCP steps.
#pragma once

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "transport/net/net.h"

namespace chorus::netplugin {

// The message lastError() returns; set by fail().
inline std::string& lastErrorText() {
  thread_local std::string text;
  return text;
}

// Records the error message and returns `code`, so that callers write `return fail(code, "...")`.
template <typename... Args>
chorusNetResult_t fail(chorusNetResult_t code, const char* fmt, Args... args) {
  char buf[512];
  if constexpr (sizeof...(Args) == 0) {
    snprintf(buf, sizeof(buf), "%s", fmt);
  } else {
    snprintf(buf, sizeof(buf), fmt, args...);
  }
  lastErrorText() = buf;
  return code;
}

// A TCP endpoint as it travels inside a handle (IPv4 or IPv6, fixed size).
struct WireAddress {
  uint16_t family = 0;
  uint16_t port = 0;  // host order
  uint32_t scope = 0;
  uint8_t addr[16] = {};

  // From the text init() received ("10.0.0.1", "fe80::1%eth0"); false when it does not parse.
  bool parse(const char* text) {
    std::string s(text == nullptr ? "" : text);
    std::string host = s, ifname;
    if (size_t pct = s.find('%'); pct != std::string::npos) {
      host = s.substr(0, pct);
      ifname = s.substr(pct + 1);
    }
    if (inet_pton(AF_INET, host.c_str(), addr) == 1) {
      family = AF_INET;
      return true;
    }
    if (inet_pton(AF_INET6, host.c_str(), addr) == 1) {
      family = AF_INET6;
      scope = ifname.empty() ? 0 : if_nametoindex(ifname.c_str());
      return true;
    }
    return false;
  }
  socklen_t toSockaddr(sockaddr_storage* ss) const {
    memset(ss, 0, sizeof(*ss));
    if (family == AF_INET) {
      auto* in = reinterpret_cast<sockaddr_in*>(ss);
      in->sin_family = AF_INET;
      in->sin_port = htons(port);
      memcpy(&in->sin_addr, addr, 4);
      return sizeof(*in);
    }
    auto* in6 = reinterpret_cast<sockaddr_in6*>(ss);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    in6->sin6_scope_id = scope;
    memcpy(&in6->sin6_addr, addr, 16);
    return sizeof(*in6);
  }
  std::string toString() const {
    char host[INET6_ADDRSTRLEN] = "?";
    inet_ntop(family, addr, host, sizeof(host));
    return std::string(host) + ":" + std::to_string(port);
  }
};

inline void closeFd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

inline void setNonBlocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

inline void setNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// Accepts every connection waiting on the non-blocking listener `fd`, each non-blocking, close-on-exec and
// with TCP_NODELAY, and hands its fd to take(fd).
template <typename Take>
void acceptWaiting(int fd, Take take) {
  for (;;) {
    int c = ::accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c < 0) return;
    setNoDelay(c);
    take(c);
  }
}

// A non-blocking listener on `where` (any port); fills where->port. Returns the fd or -1 (lastError set).
inline int listenOn(WireAddress* where) {
  sockaddr_storage ss;
  socklen_t len = where->toSockaddr(&ss);
  int fd = ::socket(where->family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return fail(chorusNetSystemError, "socket: %s", strerror(errno)), -1;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || ::listen(fd, 1024) != 0) {
    fail(chorusNetSystemError, "listening on %s: %s", where->toString().c_str(), strerror(errno));
    ::close(fd);
    return -1;
  }
  len = sizeof(ss);
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  where->port = ntohs(ss.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&ss)->sin_port
                                              : reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return fd;
}

// Starts a non-blocking connect to `to`; returns the fd or -1 (lastError set).
inline int startConnect(const WireAddress& to) {
  sockaddr_storage ss;
  socklen_t len = to.toSockaddr(&ss);
  int fd = ::socket(to.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return fail(chorusNetSystemError, "socket: %s", strerror(errno)), -1;
  setNoDelay(fd);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 && errno != EINPROGRESS) {
    fail(chorusNetRemoteError, "connecting to %s: %s", to.toString().c_str(), strerror(errno));
    ::close(fd);
    return -1;
  }
  return fd;
}

// 1 when a started connect has completed, 0 while it is in progress, -1 when it failed (lastError set).
inline int connectDone(int fd, const WireAddress& to) {
  pollfd p{fd, POLLOUT, 0};
  if (::poll(&p, 1, 0) == 0) return 0;
  int err = 0;
  socklen_t len = sizeof(err);
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) return fail(chorusNetRemoteError, "connecting to %s: %s", to.toString().c_str(), strerror(err)), -1;
  return 1;
}

// Non-blocking transfer of the rest of a record: advances *done; 1 when complete, 0 when it would block, -1
// when the socket failed, kClosed when the peer closed it in an orderly way (recv only; lastError set).
constexpr int kClosed = -2;
inline int sendSome(int fd, const void* data, size_t n, size_t* done) {
  while (*done < n) {
    ssize_t r = ::send(fd, static_cast<const char*>(data) + *done, n - *done, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return fail(chorusNetRemoteError, "send: %s", strerror(errno)), -1;
    *done += static_cast<size_t>(r);
  }
  return 1;
}
inline int recvSome(int fd, void* data, size_t n, size_t* done) {
  while (*done < n) {
    ssize_t r = ::recv(fd, static_cast<char*>(data) + *done, n - *done, MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return fail(chorusNetRemoteError, "the peer closed the connection"), kClosed;
    if (r < 0) return fail(chorusNetRemoteError, "recv: %s", strerror(errno)), -1;
    *done += static_cast<size_t>(r);
  }
  return 1;
}

// True when the peer of a connected socket has closed it or it failed (a non-blocking peek).
inline bool peerGone(int fd) {
  char b;
  ssize_t r = ::recv(fd, &b, 1, MSG_DONTWAIT | MSG_PEEK);
  return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

}  // namespace chorus::netplugin
