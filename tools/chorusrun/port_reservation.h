// A free loopback TCP port for the job's rendezvous, chosen below the kernel's ephemeral range. The port stays
// bound (SO_REUSEADDR, not listening) for the life of the reservation, so the kernel hands it to no other socket
// of this network namespace, while rank 0 can still bind and listen on it with SO_REUSEADDR, as base/socket.h's
// Socket::listen does.
#pragma once

#include <string>

namespace chorus::launcher {

class PortReservation {
 public:
  // Binds 127.0.0.1 on a free port in [20000, 32767] (any free port when 64 random tries find none); throws
  // chorus::Error (chorusSystemError) when that fails.
  PortReservation();
  ~PortReservation();
  PortReservation(const PortReservation&) = delete;
  PortReservation& operator=(const PortReservation&) = delete;

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace chorus::launcher
