#include "port_reservation.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/error.h"

namespace chorus::launcher {

PortReservation::PortReservation() {
  fd_ = CHORUS_CHECK_SYS(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "(reserving a rendezvous port)");
  int one = 1;
  setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  try {
    CHORUS_CHECK_SYS(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len), "(reserving a rendezvous port)");
    CHORUS_CHECK_SYS(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len), "(reserving a port)");
  } catch (...) {
    ::close(fd_);
    throw;
  }
  port_ = ntohs(addr.sin_port);
}

PortReservation::~PortReservation() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace chorus::launcher
