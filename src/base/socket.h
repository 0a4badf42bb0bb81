// TCP socket helpers shared by the bootstrap and the socket transport: addresses, interface selection,
// listening, connecting with retries inside a deadline, and whole-buffer send/recv that honour a WaitContext.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/wait.h"

namespace chorus {

// An IPv4 or IPv6 address with a port.
class SocketAddress {
 public:
  SocketAddress() = default;
  // Parses "1.2.3.4:80", "[::1]:80", "host:80" (resolved) or a bare host with defaultPort.
  // Throws chorusInvalidArgument naming `what` on failure.
  static SocketAddress parse(const std::string& text, int defaultPort = -1, const char* what = "address");
  static SocketAddress fromSockaddr(const sockaddr* sa, socklen_t len);
  static SocketAddress loopback(int port = 0);

  const sockaddr* sa() const { return reinterpret_cast<const sockaddr*>(&storage_); }
  sockaddr* sa() { return reinterpret_cast<sockaddr*>(&storage_); }
  socklen_t len() const { return len_; }
  int family() const { return storage_.ss_family; }
  int port() const;
  void setPort(int port);
  bool isLoopback() const;
  std::string toString() const;  // "1.2.3.4:80" or "[::1]:80"
  bool valid() const { return len_ != 0; }

 private:
  sockaddr_storage storage_{};
  socklen_t len_ = 0;
};

struct NetInterface {
  std::string name;
  SocketAddress addr;  // port 0
};

// The interfaces that are up and have an address, filtered by an NCCL_SOCKET_IFNAME-style spec: a comma list
// of name prefixes, `^` to exclude, `=` for exact names. With an empty spec: every non-loopback interface
// first (names starting with "ib" before others; "docker*" and "lo" last).
std::vector<NetInterface> findInterfaces(const std::string& spec);

// The address the bootstrap binds to: the first interface chosen by CHORUS_SOCKET_IFNAME, else the first
// non-loopback interface that is up, else loopback.
NetInterface chooseBootstrapInterface();

// A connected or listening TCP socket. Movable, closes on destruction.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket();
  Socket(Socket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  // A listening socket on addr (port 0: any free port), SO_REUSEADDR set.
  static Socket listen(const SocketAddress& addr, int backlog = 1024);
  // Connects to addr, retrying refused and unreachable attempts with back-off until ctx's deadline.
  // refusedIsFinal: the peer is known to have listened (a rank's endpoint after the rendezvous), so a refusal
  // means its process is gone: chorusRemoteError at once instead of retrying until the deadline.
  static Socket connect(const SocketAddress& addr, const WaitContext& ctx, bool refusedIsFinal = false);

  // Waits up to ctx's deadline for a connection; returns an invalid Socket on timeout or abort.
  Socket accept(const WaitContext& ctx);

  // Sends or receives exactly n bytes. A closed connection or reset is chorusRemoteError; the deadline
  // chorusTimeout; abort chorusInvalidUsage.
  void sendAll(const void* data, size_t n, const WaitContext& ctx);
  void recvAll(void* data, size_t n, const WaitContext& ctx);

  void setNoDelay();
  void setNonBlocking(bool on = true);
  void setBufferSizes(int bytes);
  SocketAddress localAddress() const;
  SocketAddress peerAddress() const;
  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void close();
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace chorus
