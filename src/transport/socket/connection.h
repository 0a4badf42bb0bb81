// The two ends of a socket connection. Each end is a FIFO in local memory whose far side is the proxy
// thread (proxy.h): the sender's proxy consumes posted slots and writes them to the streams, the receiver's
// proxy reads the streams and publishes slots. The user-facing classes only add how to wake the proxy
// (it sleeps in poll(), not on a futex) and how to report a failed stream.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/socket.h"
#include "transport/fifo.h"
#include "transport/host_fifo.h"
#include "transport/socket/wire.h"

namespace chorus::transport::socket {

class Proxy;

// One TCP stream's progress through the FIFO. Counters are absolute slot numbers (they wrap like the FIFO's).
struct Stream {
  Socket sock;
  std::string peer;        // remote address, for messages
  uint32_t slot = 0;       // the slot this stream is transferring
  uint64_t header = 0;     // stream 0: the slot's payload size
  uint32_t headerOff = 0;  // stream 0: header bytes transferred
  uint64_t off = 0;        // payload bytes of this stream's chunk transferred
  bool blocked = false;    // sender: the last write returned EAGAIN (poll for POLLOUT)
  bool eof = false;        // receiver: the sender closed this stream at a slot boundary
};

// State shared by a user end and the proxy. The proxy alone touches the streams; the user only the FIFO
// (through the base class protocol), userGone and the failure reason.
class ConnState {
 public:
  ConnState(bool send, int nslots, size_t slotBytes, uint32_t nstreams, std::string what);

  // Records why the connection failed, marks it dead and closes the FIFO (the user's waits then throw).
  // Proxy thread only.
  void fail(const std::string& reason);
  // Throws chorusRemoteError with the recorded reason once the connection has failed.
  void check() const;

  const bool send;
  HostFifo fifo;
  const std::string what;
  std::vector<Stream> streams;
  uint8_t token[kTokenBytes] = {};
  uint32_t attached = 0;   // receiver: streams whose Hello was accepted
  uint32_t headers = 0;    // receiver: slots whose size stream 0 has read
  uint32_t published = 0;  // the FIFO counter the proxy owns (sender: head, receiver: tail)
  bool dead = false;       // proxy: failed or finished; sockets closed
  bool flagged = false;    // proxy: set our sleeping flag before poll()
  std::atomic<bool> userGone{false};

 private:
  mutable std::mutex mu_;
  std::string reason_;
};

class SendConnection : public transport::SendConnection {
 public:
  SendConnection(std::shared_ptr<Proxy> proxy, std::shared_ptr<ConnState> state);
  ~SendConnection() override;

 protected:
  void wakeConsumer() override;

 private:
  std::shared_ptr<Proxy> proxy_;
  std::shared_ptr<ConnState> state_;
};

class RecvConnection : public transport::RecvConnection {
 public:
  RecvConnection(std::shared_ptr<Proxy> proxy, std::shared_ptr<ConnState> state);
  ~RecvConnection() override;

 protected:
  void wakeProducer() override;

 private:
  std::shared_ptr<Proxy> proxy_;
  std::shared_ptr<ConnState> state_;
};

}  // namespace chorus::transport::socket
