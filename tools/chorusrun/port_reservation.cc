#include "port_reservation.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

#include "base/error.h"

namespace chorus::launcher {
namespace {

// Below Linux's ephemeral range (ip_local_port_range, 32768-60999 by default). Rank 0 may listen in another
// network namespace than this reservation's (chorusrun --hosts with ranks moved into namespaces), where nothing
// reserves the port: there an ephemeral port, taken by any process's connect or listen on port 0, would collide
// with it ("Address already in use" at rank 0's bind, seen in CI), which a port outside that range cannot.
constexpr uint16_t kFirstPort = 20000, kLastPort = 32767;
constexpr int kTries = 64;

// Binds fd to 127.0.0.1:port; true on success.
bool bindLoopback(int fd, uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  return ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
}

}  // namespace

PortReservation::PortReservation() {
  fd_ = CHORUS_CHECK_SYS(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "(reserving a rendezvous port)");
  // Bound without SO_REUSEADDR first, so that a port any other socket holds is refused; SO_REUSEADDR set after
  // the bind lets rank 0 bind and listen on it while this socket keeps every other process off it.
  uint16_t port = 0;
  for (int i = 0; i < kTries && port == 0; ++i) {
    uint16_t r = 0;
    if (getrandom(&r, sizeof(r), 0) != sizeof(r)) break;
    const auto candidate = static_cast<uint16_t>(kFirstPort + r % (kLastPort - kFirstPort + 1));
    if (bindLoopback(fd_, candidate)) port = candidate;
  }
  if (port == 0 && !bindLoopback(fd_, 0)) {  // every try taken: any free port, ephemeral or not
    const int err = errno;
    ::close(fd_);
    errno = err;
    CHORUS_CHECK_SYS(-1, "(reserving a rendezvous port)");
  }
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    ::close(fd_);
    errno = err;
    CHORUS_CHECK_SYS(-1, "(reserving a rendezvous port)");
  }
  int one = 1;
  setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  port_ = ntohs(addr.sin_port);
}

PortReservation::~PortReservation() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace chorus::launcher
