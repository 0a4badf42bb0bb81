// The socket proxy's listener: accepted sockets wait, non-blocking, for their Hello and are attached to the
// receiving connection whose token they present, or dropped (proxy.h, wire.h).
#include <openssl/crypto.h>
#include <sys/socket.h>

#include <cstring>

#include "base/logging.h"
#include "base/wait.h"
#include "transport/socket/proxy.h"

namespace chorus::transport::socket {

namespace {
constexpr uint64_t kHelloNs = 10000000000ull;  // an accepted socket has 10 s to present its token
}  // namespace

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

}  // namespace chorus::transport::socket
