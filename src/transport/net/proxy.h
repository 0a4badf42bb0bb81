// The network transport's progress engine, one per NetTransport (so one per communicator). It owns every plugin
// communicator of that transport and moves them with non-blocking calls only:
//   sender:   each slot the user posts becomes an isend (tag = slot number mod 2^24, so a lost or reordered
//             message is a protocol error, not silent corruption); a slot is freed (head) when its send
//             completes, in order;
//   receiver: accept() until the sender has connected, then an irecv into every free slot; a slot is
//             published (tail) with the received size when its receive completes, in order.
//
// Who calls the plugin. One mutex makes sure that one thread at a time calls it on the proxy's comms (net.h: one
// thread per net-communicator at a time). Messages up to CHORUS_NET_PROXY_BYTES (1 MiB, more than the default
// 128 KiB slot) are moved by the user threads themselves; larger ones ("bulk") by the proxy's own thread in
// parallel with them:
//  - A user that posts a message sends it at once (isend and test on the posting thread); a user that frees a
//    slot posts its receive. A user thread that waits on a connection claims the proxy (FifoDriver,
//    transport/fifo.h): it moves every connection itself and sleeps in poll() on their fds, so the kernel wakes
//    it when its data arrives, with no thread hand-off (MPI libraries progress the same way, from the calling
//    thread). Receives nobody waits for stay in the kernel until their user waits.
//  - The proxy thread moves bulk messages (it receives slot k+1 while the user reduces slot k) and what no user
//    thread waits for: a send the kernel did not take whole, accepts, connections whose user went away. It
//    sleeps in poll() on the fds of what it watches and on an eventfd the users write to, and parks (eventfd
//    only) while a user thread drives.
//  Why the default leaves everything to the user threads: on 2 cores shared by two simulated hosts, a 512 KiB
//  all-reduce with 64 KiB as the bulk limit (so every 128 KiB slot through the proxy thread) used 28 % more CPU
//  and 8x more context switches than with every slot on the user thread, and ran at 0.7 instead of 1.1 GB/s;
//  8 MiB: 0.6-0.8 against 0.75-1.3 GB/s (docs/performance.md). The proxy thread pays off where a rank has a
//  core to spare for it.
// A plugin without pollFds (UCX today) keeps everything on the proxy thread, which sleeps in slices of 20 us
// growing to 200 us while requests are outstanding (1 ms slices once made a 64 KiB all-reduce between two
// namespaces take 6 ms); so does a receiver still accepting.
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

// State shared by a user end and the proxy. The plugin is called on it only under the proxy's mutex; the user
// end touches the FIFO (through the base class protocol), userGone, bulk and the failure reason.
class NetConn {
 public:
  NetConn(const chorusNet_v1_t* plugin, bool send, int nslots, size_t slotBytes, std::string what);
  ~NetConn();

  // Records why the connection failed and closes the FIFO (the user's waits then throw). Under the mutex.
  void fail(const std::string& reason);
  // Throws chorusRemoteError with the recorded reason once the connection has failed.
  void check() const;

  const chorusNet_v1_t* const plugin;
  const bool send;
  HostFifo fifo;
  const std::string what;
  // Under the proxy's mutex:
  void* listenComm = nullptr;  // receiver, until accept() returns the comm
  void* comm = nullptr;        // sendComm or recvComm
  void* mr = nullptr;          // the FIFO's slots, registered on comm
  std::deque<void*> requests;  // outstanding, oldest first: slots completed .. completed+size()-1
  uint32_t posted = 0;         // slots handed to the plugin
  uint32_t completed = 0;      // slots whose request finished (sender: head, receiver: tail)
  bool dead = false;           // failed or finished; plugin comms closed
  bool flagged = false;        // the proxy's sleeping flag is raised on the FIFO (Proxy::setSleepFlags)
  // The last message was larger than CHORUS_NET_PROXY_BYTES: the proxy thread moves this connection (its user
  // does not claim the proxy to wait on it).
  std::atomic<bool> bulk{false};
  std::atomic<bool> userGone{false};

 private:
  mutable std::mutex mu_;
  std::string reason_;
};

class Proxy {
 public:
  explicit Proxy(const chorusNet_v1_t* plugin);
  ~Proxy();

  // Hands a connection to the proxy.
  void add(std::shared_ptr<NetConn> conn);
  // Wakes the proxy thread, and a user thread sleeping in block() (a user posted or released a slot the
  // caller could not move itself, or went away).
  void wake();
  const chorusNet_v1_t* plugin() const { return plugin_; }
  // Whether user threads may call the plugin through this proxy (the plugin names fds to poll).
  bool userDrives() const { return userDrives_; }

  // The user side (connection.h, through FifoDriver), for a wait on `awaited`. claim() fails when awaited is
  // bulk or another thread drives; while claimed the proxy thread stays away from the plugin.
  bool claim(const NetConn& awaited);
  // One pass over every connection; true when anything moved.
  bool drive();
  // Sleeps in poll() on the fds of every connection with requests outstanding and on the eventfd, at most ns.
  void block(uint64_t ns);
  // Ends a claim; wakes the proxy thread when something is left for it to watch.
  void unclaim();
  // A pass, if no other thread is in one and c is not bulk (a non-blocking FIFO call on c found nothing ready).
  void poke(const NetConn& c);
  // A user posted a slot on c (send) or freed one (receive) while the proxy slept: moves a small message or a
  // receive at once on the calling thread, or wakes the proxy thread.
  void posted(NetConn& c);
  void released(NetConn& c);

 private:
  void run();
  bool pass();  // the following, under mu_
  void adopt();
  bool progress(NetConn& c);
  bool progressSend(NetConn& c);
  bool progressRecv(NetConn& c);
  bool postRecvs(NetConn& c);
  bool establish(NetConn& c);
  bool needsWatcher() const;
  bool collectFds(std::vector<pollfd>* fds, bool everything, bool* any);
  void setSleepFlags(bool on);
  void setSleepFlag(NetConn& c, bool on);
  void reap();
  // Sleeps in ppoll() on fds (fds[0] is the eventfd) for at most ns, and consumes the eventfd when it fired.
  void sleepOn(std::vector<pollfd>& fds, uint64_t ns);

  const chorusNet_v1_t* plugin_;
  const bool userDrives_;
  const uint64_t bulkBytes_;  // CHORUS_NET_PROXY_BYTES: larger messages are bulk (NetConn::bulk)
  int eventFd_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex incomingMu_;
  std::vector<std::shared_ptr<NetConn>> incoming_;
  std::atomic<bool> hasIncoming_{false};
  // Held by the thread that calls the plugin: the proxy thread for one pass, or a user thread (drive, block's
  // collection of fds, posted, released, poke).
  mutable std::mutex mu_;
  std::atomic<int> driver_{0};                   // 1 while a user thread has claimed the proxy
  std::vector<std::shared_ptr<NetConn>> conns_;  // under mu_
  bool flagsUp_ = false;                         // under mu_: some connection's sleeping flag is raised
  std::vector<pollfd> pollFds_;                  // proxy thread only: what its sleep waits on
  std::vector<pollfd> driverFds_;                // the claiming user thread only: what block() waits on
};

}  // namespace chorus::transport::net
