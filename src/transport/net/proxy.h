// The network transport's progress thread, one per NetTransport (so one per communicator). It owns every
// plugin communicator of that transport and drives them with non-blocking calls only:
//   sender:   each slot the user posts becomes an isend (tag = slot number mod 2^24, so a lost or reordered
//             message is a protocol error, not silent corruption); a slot is freed (head) when its send
//             completes, in order;
//   receiver: accept() until the sender has connected, then an irecv into every free slot; a slot is
//             published (tail) with the received size when its receive completes, in order.
// Idle protocol: after CHORUS_SPIN_US without progress the thread sets the FIFO sleeping flags of the
// connections that wait only on their user and sleeps in poll() on an eventfd the user ends write to and on
// the fds the plugin names for every connection with requests outstanding (chorusNet_v1_t::pollFds): a
// message wakes it when it arrives. A plugin without pollFds (UCX today), or a receiver still accepting,
// makes it sleep in slices of 20 us growing to 200 us instead, so that the first message after a pause costs
// up to 200 us (1 ms slices once made a 64 KiB all-reduce between two namespaces take 6 ms).
#pragma once

#include <poll.h>

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "transport/fifo.h"
#include "transport/host_fifo.h"
#include "transport/net/net.h"

namespace chorus::transport::net {

// State shared by a user end and the proxy. The proxy alone calls the plugin on it; the user touches only
// the FIFO (through the base class protocol), userGone and the failure reason.
class NetConn {
 public:
  NetConn(const chorusNet_v1_t* plugin, bool send, int nslots, size_t slotBytes, std::string what);
  ~NetConn();

  // Records why the connection failed and closes the FIFO (the user's waits then throw). Proxy thread only.
  void fail(const std::string& reason);
  // Throws chorusRemoteError with the recorded reason once the connection has failed.
  void check() const;

  const chorusNet_v1_t* const plugin;
  const bool send;
  HostFifo fifo;
  const std::string what;
  void* listenComm = nullptr;  // receiver, until accept() returns the comm
  void* comm = nullptr;        // sendComm or recvComm
  void* mr = nullptr;          // the FIFO's slots, registered on comm
  std::deque<void*> requests;  // outstanding, oldest first: slots completed .. completed+size()-1
  uint32_t posted = 0;         // slots handed to the plugin
  uint32_t completed = 0;      // slots whose request finished (sender: head, receiver: tail)
  bool dead = false;           // proxy: failed or finished; plugin comms closed
  bool flagged = false;        // proxy: set our sleeping flag before sleeping
  std::atomic<bool> userGone{false};

 private:
  mutable std::mutex mu_;
  std::string reason_;
};

class Proxy {
 public:
  explicit Proxy(const chorusNet_v1_t* plugin);
  ~Proxy();

  // Hands a connection to the thread.
  void add(std::shared_ptr<NetConn> conn);
  // Wakes the thread (a user posted or released a slot, or went away).
  void wake();
  const chorusNet_v1_t* plugin() const { return plugin_; }

 private:
  void run();
  void adopt();
  bool progress(NetConn& c);
  bool progressSend(NetConn& c);
  bool progressRecv(NetConn& c);
  bool establish(NetConn& c);
  void setSleepFlags(bool on);
  void sleep(uint64_t sliceNs);
  void reap();

  const chorusNet_v1_t* plugin_;
  int eventFd_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<std::shared_ptr<NetConn>> incoming_;
  std::atomic<bool> hasIncoming_{false};
  std::vector<std::shared_ptr<NetConn>> conns_;  // proxy thread only
  std::vector<pollfd> pollFds_;                  // proxy thread only: what sleep() waits on
};

}  // namespace chorus::transport::net
