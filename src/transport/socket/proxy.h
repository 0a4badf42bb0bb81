// The socket transport's progress thread, one per SocketTransport (so one per communicator). It owns every
// stream of every connection of that transport and moves bytes between the local FIFOs and the sockets with
// non-blocking I/O, resuming partial reads and writes. It also accepts incoming streams on the listener and
// admits only those that present a live receiver's token.
//
// Idle protocol: after CHORUS_SPIN_US without progress the thread sets the FIFO sleeping flags of the
// connections it waits on (a sender FIFO it has drained: consumerSleeping; a full receiver FIFO:
// producerSleeping), makes one more pass, and sleeps in poll() on the sockets, the listener and an eventfd.
// The user's post()/release() see the flag and write the eventfd (wakeConsumer/wakeProducer overrides).
//
// Files: proxy.cc (the thread's loop, sleeping in poll(), reaping), proxy_progress.cc (moving slots between
// FIFOs and streams), proxy_admit.cc (accepting streams and checking their tokens).
#pragma once

#include <poll.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/socket.h"
#include "transport/socket/connection.h"

namespace chorus::transport::socket {

// "op: <strerror(err)>", for the messages of failed socket calls.
std::string errnoText(const char* op, int err);

class Proxy {
 public:
  // Listens on `bindAddr` (port 0: any free port) and starts the thread.
  explicit Proxy(const SocketAddress& bindAddr);
  ~Proxy();
  Proxy(const Proxy&) = delete;
  Proxy& operator=(const Proxy&) = delete;

  // Where senders connect.
  const SocketAddress& address() const { return address_; }
  // Hands a connection to the thread (a receiver waiting for its streams, or a sender with all of them).
  void add(std::shared_ptr<ConnState> conn);
  // Wakes the thread from poll(). Cheap to call from any thread.
  void wake();

 private:
  struct Pending {  // an accepted socket that has not finished its Hello yet
    Socket sock;
    Hello hello{};
    size_t got = 0;
    uint64_t deadlineNs = 0;
  };

  void run();
  void adopt();
  bool progress(ConnState& c);
  bool progressSend(ConnState& c);
  bool progressRecv(ConnState& c);
  void setSleepFlags(bool on);
  void sleep();
  void watchSendStream(ConnState& c, Stream& st, short revents);
  void acceptAll();
  bool readHello(Pending& p);
  bool admit(Pending& p);
  void reap();

  Socket listener_;
  SocketAddress address_;
  int eventFd_ = -1;
  std::atomic<bool> stop_{false};

  std::mutex mu_;
  std::vector<std::shared_ptr<ConnState>> incoming_;  // guarded by mu_
  std::atomic<bool> hasIncoming_{false};

  // What each entry of pollFds_ stands for.
  struct PollRef {
    enum Kind { kWake, kListener, kPending, kStream } kind;
    ConnState* conn;  // kStream: the connection
    size_t index;     // kPending: index in pending_; kStream: stream index
  };

  // Thread-owned (reused between sleeps so that the loop does not allocate).
  std::vector<std::shared_ptr<ConnState>> conns_;
  std::vector<Pending> pending_;
  std::vector<pollfd> pollFds_;
  std::vector<PollRef> pollRefs_;
  std::thread thread_;
};

}  // namespace chorus::transport::socket
