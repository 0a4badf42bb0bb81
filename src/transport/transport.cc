#include "transport/transport.h"

#include "base/error.h"

namespace chorus::transport {

namespace {

// The typed end of `c`, which must be of kind `kind` (the class a transport of that kind builds).
template <typename End>
std::unique_ptr<End> typedEnd(std::unique_ptr<Connection> c, Connection::Kind kind, const Transport& t) {
  CHORUS_ENFORCE(c != nullptr && c->kind() == kind, t.name(), " did not build a host FIFO end");
  return std::unique_ptr<End>(static_cast<End*>(c.release()));
}

}  // namespace

std::unique_ptr<RecvConnection> createHostRecv(Transport& t, const ConnectSpec& spec,
                                               std::vector<uint8_t>* descriptor) {
  return typedEnd<RecvConnection>(t.createRecv(spec, descriptor), Connection::Kind::kHostRecv, t);
}

std::unique_ptr<SendConnection> connectHostSend(Transport& t, const ConnectSpec& spec,
                                                const std::vector<uint8_t>& descriptor) {
  return typedEnd<SendConnection>(t.connectSend(spec, descriptor), Connection::Kind::kHostSend, t);
}

}  // namespace chorus::transport
