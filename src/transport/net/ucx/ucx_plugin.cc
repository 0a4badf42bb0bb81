// The UCX network plugin (libchorus-net-ucx.so; CHORUS_NET=ucx): UCP tag messages on memory registered with
// ucp_mem_map, one UCP worker per process. UCP picks the wire protocol per message: eager for small ones,
// rendezvous (the receiver pulls the data zero-copy once the receive is matched) above UCX_RNDV_THRESH, and
// the transports UCX_TLS allows: RC/DC verbs on an InfiniBand or RoCE cluster, tcp here; nothing in this file
// depends on which.
//
// Connection setup goes through a TCP socket (the handle holds its address): both sides send a frame of
// [u32 length][UCP worker address][u32 connection id] and create an endpoint to the other's worker, with
// peer error handling. The socket stays open: its end-of-file is how a side learns at once that its peer
// process died (UCX's own keepalive takes much longer over tcp).
//
// Closing a sender in order: a send that completed has left the sender's buffer, not necessarily reached
// the receiver (an eager message may still sit in a socket buffer, a rendezvous message's last control
// message, ATP, may still be in flight), and the setup socket is another TCP connection whose end-of-file can
// overtake them on a slow link. So closeSend flushes the endpoint (at most kFlushSeconds), writes a goodbye on
// the setup socket ([magic][messages sent]), and only then closes the endpoint and the socket. A receiver
// whose peer went (end-of-file on the setup socket, or the endpoint failed) first reads the goodbye, and keeps
// waiting for the messages it announced instead of failing them: they are still on their way or already
// queued in UCX. A peer that went without a goodbye died or lost its link: its receives fail at once.
//
// Sleeping (pollFds): the proxy waits on the worker's event fd (ucp_worker_get_efd; pollFds first progresses
// until ucp_worker_arm succeeds), on the setup socket (the peer's goodbye or end-of-file), and on a timerfd of
// the comm's own, which is set to expire at once when there is work the other two would not show: one of the
// comm's requests completed inside another thread's progress (the worker is shared, and the network event that
// completed it was consumed there), its endpoint failed, or test() would report something already.
//
// Tags: the 64-bit UCP tag is [connection id: 24 bits][sequence: 16 bits][user tag: 24 bits]. The receiver
// chose the connection id; receives match on id and sequence (so messages match receives in posting order,
// net.h), and the user tag is compared on completion (a mismatch is a protocol error).
#include <ucp/api/ucp.h>

#include <sys/timerfd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "transport/net/plugin_util.h"

namespace chorus::netplugin::ucx {
namespace {

constexpr uint32_t kMagic = 0x43485543;  // "CHUC"
constexpr int kMaxRequests = 256;
constexpr uint64_t kSeqMask = 0xffff;
constexpr uint64_t kUserMask = CHORUS_NET_MAX_TAG - 1;
constexpr uint64_t kMatchMask = ~kUserMask;  // connection id and sequence
// How long an orderly closeSend lets UCX push out what it still holds (closing in order, at the top).
constexpr double kFlushSeconds = 1.0;

// The sender's last record on the setup socket (closing in order, at the top).
constexpr uint32_t kGoodbyeMagic = 0x43484259;  // "CHBY"
struct Goodbye {
  uint32_t magic;
  uint32_t pad;
  uint64_t sent;  // messages the sender sent (the first one that did not complete, and all after it, excluded)
};

std::mutex gMu;  // every UCP call (the worker is shared by all comms of the process)
ucp_context_h gContext = nullptr;
ucp_worker_h gWorker = nullptr;
int gEventFd = -1;              // the worker's event fd (pollFds), -1 when UCX gave none
std::vector<uint8_t> gAddress;  // this worker's address
WireAddress gListen;
std::atomic<uint32_t> gNextConnId{1};

struct Handle {
  uint32_t magic;
  WireAddress addr;
  void* stage;  // connect in progress
};
static_assert(sizeof(Handle) <= CHORUS_NET_HANDLE_MAXSIZE);

struct Request;

// One side of a connection: the out-of-band socket, the endpoint to the peer's worker, and the requests.
struct Comm {
  bool send = false;
  int fd = -1;
  uint32_t connId = 0;  // the receiver's choice; both sides use it in tags
  ucp_ep_h ep = nullptr;
  uint16_t seq = 0;
  uint64_t posted = 0;  // messages posted on this comm: the index of the next one
  std::set<Request*> outstanding;
  // The peer going: end-of-file on the setup socket, or a failed endpoint (its message), and what the setup
  // socket brought before its end (the goodbye).
  bool peerClosed = false;
  std::string epFailed;
  std::vector<uint8_t> inbox;
  int64_t peerSent = -1;  // receiver: the sender's goodbye, -1 before one came
  chorusNetResult_t broken = chorusNetSuccess;
  std::string brokenWhy;
  // pollFds: the timerfd that wakes this comm's sleeping thread (at the top of this file), and whether that
  // thread is asleep (set by pollFds, cleared by test).
  int wake = -1;
  bool sleeping = false;
  // Setup: our frame to send, the peer's frame being read.
  std::vector<uint8_t> out;
  size_t outDone = 0;
  uint32_t inLen = 0;
  size_t inLenDone = 0;
  std::vector<uint8_t> in;
  size_t inDone = 0;
  WireAddress to;

  Comm() = default;
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ~Comm() {
    if (wake >= 0) ::close(wake);
  }
  void breakWith(chorusNetResult_t code, const std::string& why) {
    if (broken != chorusNetSuccess) return;
    broken = code;
    brokenWhy = why;
  }
  // Sets the wake-up timer to expire after `ns` (0: disarms it and clears an expiry not yet read).
  void setWake(long ns) {
    if (wake < 0) return;
    itimerspec t{};
    t.it_value.tv_nsec = ns;
    timerfd_settime(wake, 0, &t, nullptr);
    if (ns == 0) {
      uint64_t expirations;
      ssize_t r = ::read(wake, &expirations, sizeof(expirations));
      (void)r;  // EAGAIN: it had not expired
    }
  }
  // Wakes the thread sleeping on this comm (a completion or a failure that came in another thread's progress).
  void wakeSleeper() {
    if (!sleeping) return;
    sleeping = false;
    setWake(1);
  }
};

struct Request {
  Comm* comm = nullptr;  // nullptr once the comm closed with the request outstanding: the callback frees it
  void* ucx = nullptr;   // UCP's request while in flight
  bool done = false;
  ucs_status_t status = UCS_OK;
  size_t size = 0;
  uint32_t tag = 0;
  bool recv = false;
  uint64_t index = 0;  // position among its comm's messages (Comm::posted)
  ucp_tag_t senderTag = 0;
};

struct ListenComm {
  int fd = -1;
  std::vector<std::unique_ptr<Comm>> pending;
};

struct Mr {
  ucp_mem_h memh;
};

void finish(Request* r, ucs_status_t status) {
  if (r->comm == nullptr) {  // orphaned by close
    delete r;
    return;
  }
  r->done = true;
  r->status = status;
  r->comm->wakeSleeper();
}

void sendDone(void* request, ucs_status_t status, void* user) {
  auto* r = static_cast<Request*>(user);
  if (r->comm != nullptr) r->ucx = nullptr;
  finish(r, status);
  ucp_request_free(request);
}

void recvDone(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info, void* user) {
  auto* r = static_cast<Request*>(user);
  if (r->comm != nullptr) {
    r->ucx = nullptr;
    if (status == UCS_OK) {
      r->size = info->length;
      r->senderTag = info->sender_tag;
    }
  }
  finish(r, status);
  ucp_request_free(request);
}

void epError(void* arg, ucp_ep_h, ucs_status_t status) {
  // Not fatal by itself: a sender that closed in order fails its endpoint too (see peerGoneFor).
  auto* c = static_cast<Comm*>(arg);
  if (c->epFailed.empty())
    c->epFailed = std::string("the UCX endpoint to the peer failed: ") + ucs_status_string(status);
  c->wakeSleeper();
}

chorusNetResult_t init(chorusNetLogger_t, const char* listenAddress) {
  std::lock_guard<std::mutex> lock(gMu);
  if (gWorker != nullptr) return chorusNetSuccess;
  if (!gListen.parse(listenAddress)) return fail(chorusNetInvalidArgument, "ucx plugin: bad listen address");
  ucp_config_t* config = nullptr;
  ucs_status_t s = ucp_config_read("CHORUS", nullptr, &config);
  if (s != UCS_OK) return fail(chorusNetUnavailable, "ucp_config_read: %s", ucs_status_string(s));
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;  // WAKEUP: the worker's event fd (pollFds)
  params.mt_workers_shared = 0;
  s = ucp_init(&params, config, &gContext);
  ucp_config_release(config);
  if (s != UCS_OK) return fail(chorusNetUnavailable, "ucp_init: %s", ucs_status_string(s));
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;  // gMu serializes every call
  s = ucp_worker_create(gContext, &wp, &gWorker);
  if (s != UCS_OK) {
    ucp_cleanup(gContext);
    gContext = nullptr;
    return fail(chorusNetUnavailable, "ucp_worker_create: %s", ucs_status_string(s));
  }
  ucp_address_t* addr = nullptr;
  size_t len = 0;
  s = ucp_worker_get_address(gWorker, &addr, &len);
  if (s != UCS_OK) return fail(chorusNetUnavailable, "ucp_worker_get_address: %s", ucs_status_string(s));
  gAddress.assign(reinterpret_cast<uint8_t*>(addr), reinterpret_cast<uint8_t*>(addr) + len);
  ucp_worker_release_address(gWorker, addr);
  if (ucp_worker_get_efd(gWorker, &gEventFd) != UCS_OK) gEventFd = -1;  // pollFds falls back to a timer
  return chorusNetSuccess;
}

chorusNetResult_t devices(int* ndev) {
  *ndev = 1;
  return chorusNetSuccess;
}

chorusNetResult_t getProperties(int dev, chorusNetProperties_v1_t* p) {
  if (dev != 0) return fail(chorusNetInvalidArgument, "ucx plugin: no device %d (it has one)", dev);
  *p = {};
  p->name = "ucp";
  p->ptrSupport = CHORUS_PTR_HOST;
  p->maxComms = 1 << 20;
  p->maxRecvs = 1;
  p->maxRequests = kMaxRequests;
  p->maxMessage = size_t(1) << 40;
  return chorusNetSuccess;
}

// Frames our worker address and the connection id for the peer.
void prepareFrame(Comm* c) {
  uint32_t len = static_cast<uint32_t>(gAddress.size() + sizeof(uint32_t));
  c->out.resize(sizeof(len) + len);
  memcpy(c->out.data(), &len, sizeof(len));
  memcpy(c->out.data() + sizeof(len), gAddress.data(), gAddress.size());
  memcpy(c->out.data() + sizeof(len) + gAddress.size(), &c->connId, sizeof(uint32_t));
}

// Advances the frame exchange; 1 when the endpoint exists, 0 while in progress, -1 on failure (lastError).
int exchange(Comm* c) {
  if (c->ep != nullptr) return 1;
  if (sendSome(c->fd, c->out.data(), c->out.size(), &c->outDone) < 0) return -1;
  int r = recvSome(c->fd, &c->inLen, sizeof(c->inLen), &c->inLenDone);
  if (r <= 0) return r;
  if (c->inLen < sizeof(uint32_t) + 1 || c->inLen > (1u << 20)) {
    return fail(chorusNetProtocolError, "ucx plugin: a malformed setup frame (%u bytes)", c->inLen), -1;
  }
  c->in.resize(c->inLen);
  r = recvSome(c->fd, c->in.data(), c->in.size(), &c->inDone);
  if (r <= 0) return r;
  if (c->outDone < c->out.size()) return 0;
  uint32_t peerId;
  memcpy(&peerId, c->in.data() + c->in.size() - sizeof(uint32_t), sizeof(peerId));
  if (c->send) c->connId = peerId;  // the receiver chose it
  ucp_ep_params_t ep{};
  ep.field_mask =
      UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
  ep.address = reinterpret_cast<const ucp_address_t*>(c->in.data());
  ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  ep.err_handler.cb = epError;
  ep.err_handler.arg = c;
  std::lock_guard<std::mutex> lock(gMu);
  ucs_status_t s = ucp_ep_create(gWorker, &ep, &c->ep);
  if (s != UCS_OK) return fail(chorusNetRemoteError, "ucp_ep_create: %s", ucs_status_string(s)), -1;
  return 1;
}

chorusNetResult_t listen(int dev, void* handle, void** listenComm) {
  if (dev != 0) return fail(chorusNetInvalidArgument, "ucx plugin: no device %d", dev);
  auto l = std::make_unique<ListenComm>();
  WireAddress where = gListen;
  l->fd = listenOn(&where);
  if (l->fd < 0) return chorusNetSystemError;
  Handle h{kMagic, where, nullptr};
  memcpy(handle, &h, sizeof(h));
  *listenComm = l.release();
  return chorusNetSuccess;
}

void closeEp(Comm* c);

chorusNetResult_t connect(int, void* handle, void** sendComm) {
  *sendComm = nullptr;
  auto* h = static_cast<Handle*>(handle);
  if (h->magic != kMagic) return fail(chorusNetInvalidArgument, "ucx plugin: the connection handle is malformed");
  auto* c = static_cast<Comm*>(h->stage);
  if (c == nullptr) {
    c = new Comm;
    c->send = true;
    c->to = h->addr;
    c->fd = startConnect(h->addr);
    if (c->fd < 0) {
      delete c;
      return chorusNetRemoteError;
    }
    prepareFrame(c);
    h->stage = c;
  }
  int r = c->outDone > 0 ? 1 : connectDone(c->fd, c->to);
  if (r == 1) r = exchange(c);
  if (r < 0) {
    h->stage = nullptr;
    closeFd(&c->fd);
    delete c;
    return chorusNetRemoteError;
  }
  if (r == 0) return chorusNetSuccess;
  h->stage = nullptr;
  *sendComm = c;
  return chorusNetSuccess;
}

chorusNetResult_t accept(void* listenComm, void** recvComm) {
  *recvComm = nullptr;
  auto* l = static_cast<ListenComm*>(listenComm);
  acceptWaiting(l->fd, [l](int fd) {
    auto c = std::make_unique<Comm>();
    c->fd = fd;
    c->connId = gNextConnId.fetch_add(1) & 0xffffff;
    prepareFrame(c.get());
    l->pending.push_back(std::move(c));
  });
  for (auto& c : l->pending) {
    int r = exchange(c.get());
    if (r < 0) {
      closeFd(&c->fd);  // a stranger or a sender that went away: drop it
      c.reset();
      continue;
    }
    if (r == 1) {
      *recvComm = c.release();
      break;
    }
  }
  std::erase_if(l->pending, [](const std::unique_ptr<Comm>& c) { return !c; });
  return chorusNetSuccess;
}

chorusNetResult_t regMr(void*, void* data, size_t size, int type, void** mhandle) {
  if (type != CHORUS_PTR_HOST) return fail(chorusNetInvalidArgument, "ucx plugin: only host memory");
  ucp_mem_map_params_t p{};
  p.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  p.address = data;
  p.length = size == 0 ? 1 : size;
  ucp_mem_h memh = nullptr;
  std::lock_guard<std::mutex> lock(gMu);
  ucs_status_t s = ucp_mem_map(gContext, &p, &memh);
  if (s != UCS_OK) return fail(chorusNetSystemError, "ucp_mem_map: %s", ucs_status_string(s));
  *mhandle = new Mr{memh};
  return chorusNetSuccess;
}

chorusNetResult_t deregMr(void*, void* mhandle) {
  auto* mr = static_cast<Mr*>(mhandle);
  std::lock_guard<std::mutex> lock(gMu);
  ucp_mem_unmap(gContext, mr->memh);
  delete mr;
  return chorusNetSuccess;
}

// Reads what the peer wrote on the setup socket since setup (a sender writes only its goodbye) and notes its
// end-of-file.
void watchPeer(Comm* c) {
  while (!c->peerClosed) {
    uint8_t buf[64];
    ssize_t n = ::recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      c->peerClosed = true;  // end-of-file, or a reset
      break;
    }
    // A receiver keeps the goodbye; anything past it (or anything a send comm is sent) is not ours.
    const size_t keep = c->send ? 0 : std::min(static_cast<size_t>(n), sizeof(Goodbye) - c->inbox.size());
    c->inbox.insert(c->inbox.end(), buf, buf + keep);
  }
  if (c->peerSent < 0 && c->inbox.size() >= sizeof(Goodbye)) {
    Goodbye g;
    memcpy(&g, c->inbox.data(), sizeof(g));
    if (g.magic == kGoodbyeMagic) c->peerSent = static_cast<int64_t>(g.sent);
  }
}

// Breaks the comm when its peer went and message `index` cannot come any more: everything on a send comm,
// and on a receive comm whatever the sender's goodbye did not announce (everything when it died without one).
void peerGoneFor(Comm* c, uint64_t index) {
  if (!c->peerClosed && c->epFailed.empty()) return;
  if (!c->send) {
    watchPeer(c);  // the goodbye may be waiting behind an endpoint failure
    if (c->peerSent >= 0 && index < static_cast<uint64_t>(c->peerSent)) return;
  }
  std::string why = c->send ? "the receiver closed the connection or died"
                    : c->peerSent >= 0
                        ? "the sender closed the connection after " + std::to_string(c->peerSent) + " messages"
                        : "the sender died or lost its link (it closed without a goodbye)";
  if (!c->epFailed.empty()) why += " (" + c->epFailed + ")";
  c->breakWith(chorusNetRemoteError, why);
}

chorusNetResult_t post(bool isSend, void* comm, void* data, size_t size, int tag, void* mhandle, void** request) {
  *request = nullptr;
  auto* c = static_cast<Comm*>(comm);
  std::lock_guard<std::mutex> lock(gMu);  // c->broken is written by callbacks under it
  if (mhandle == nullptr) return fail(chorusNetInvalidArgument, "ucx plugin: the buffer is not registered");
  if (tag < 0 || tag >= CHORUS_NET_MAX_TAG) return fail(chorusNetInvalidArgument, "tag %d out of range", tag);
  if (c->broken == chorusNetSuccess) peerGoneFor(c, c->posted);
  if (c->broken != chorusNetSuccess) return fail(c->broken, "%s", c->brokenWhy.c_str());
  if (c->outstanding.size() >= static_cast<size_t>(kMaxRequests)) return chorusNetSuccess;  // no room
  auto* r = new Request;
  r->comm = c;
  r->tag = static_cast<uint32_t>(tag);
  r->recv = !isSend;
  r->size = size;
  r->index = c->posted++;
  const ucp_tag_t base = (static_cast<ucp_tag_t>(c->connId) << 40) | (static_cast<ucp_tag_t>(c->seq & kSeqMask) << 24);
  ++c->seq;
  ucp_request_param_t p{};
  // The buffer's registration (regMr) goes with it: UCP then takes its zero-copy paths without looking the
  // memory up in its registration cache.
  p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_MEMH;
  p.user_data = r;
  p.memh = static_cast<Mr*>(mhandle)->memh;
  ucs_status_ptr_t s;
  if (isSend) {
    p.cb.send = sendDone;
    s = ucp_tag_send_nbx(c->ep, data, size, base | static_cast<ucp_tag_t>(tag), &p);
  } else {
    p.cb.recv = recvDone;
    // A receive whose message is already here (unexpected) would complete in place, and UCX before 1.16 then
    // leaves UCP_OP_ATTR_FIELD_RECV_INFO unwritten (the size and tag would read 0). Denying immediate
    // completion makes UCX call recvDone with the message's info inside this call instead.
    p.op_attr_mask |= UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
    s = ucp_tag_recv_nbx(gWorker, data, size, base, kMatchMask, &p);
  }
  if (UCS_PTR_IS_ERR(s)) {
    delete r;
    c->breakWith(chorusNetRemoteError, std::string(isSend ? "ucp_tag_send_nbx: " : "ucp_tag_recv_nbx: ") +
                                           ucs_status_string(UCS_PTR_STATUS(s)));
    return fail(c->broken, "%s", c->brokenWhy.c_str());
  }
  if (s == nullptr) {
    r->done = true;  // a send completed in place: no callback comes
  } else if (!r->done) {
    r->ucx = s;  // (a receive whose callback already ran has freed s)
  }
  c->outstanding.insert(r);
  *request = r;
  return chorusNetSuccess;
}

chorusNetResult_t isend(void* comm, void* data, size_t size, int tag, void* mhandle, void** request) {
  return post(true, comm, data, size, tag, mhandle, request);
}

chorusNetResult_t irecv(void* comm, void* data, size_t size, int tag, void* mhandle, void** request) {
  return post(false, comm, data, size, tag, mhandle, request);
}

chorusNetResult_t iflush(void*, void*, size_t, void*, void** request) {
  *request = nullptr;  // host memory only: nothing to flush
  return chorusNetSuccess;
}

chorusNetResult_t test(void* request, int* done, size_t* size) {
  auto* r = static_cast<Request*>(request);
  Comm* c = r->comm;
  *done = 0;
  // Callbacks of any comm's requests run inside any thread's progress call: read request and comm state
  // under the same lock that serializes them.
  std::lock_guard<std::mutex> lock(gMu);
  c->sleeping = false;
  for (int i = 0; i < 16 && ucp_worker_progress(gWorker) != 0; ++i) {
  }
  if (!r->done) {
    if (c->broken == chorusNetSuccess) {
      watchPeer(c);
      peerGoneFor(c, r->index);
    }
    if (c->broken != chorusNetSuccess) return fail(c->broken, "%s", c->brokenWhy.c_str());
    return chorusNetSuccess;
  }
  chorusNetResult_t result = chorusNetSuccess;
  if (r->status == UCS_ERR_MESSAGE_TRUNCATED) {
    result = fail(chorusNetProtocolError, "ucx plugin: a message larger than its receive of %zu bytes", r->size);
  } else if (r->status != UCS_OK) {
    result =
        fail(chorusNetRemoteError, "ucx plugin: %s: %s", r->recv ? "receive" : "send", ucs_status_string(r->status));
  } else if (r->recv && (r->senderTag & kUserMask) != r->tag) {
    result = fail(chorusNetProtocolError, "ucx plugin: a message with tag %u reached a receive with tag %u",
                  static_cast<unsigned>(r->senderTag & kUserMask), r->tag);
  }
  if (result != chorusNetSuccess) {
    c->breakWith(result, lastErrorText());
    return result;  // the request stays with the comm; closing it frees it
  }
  *done = 1;
  if (size != nullptr) *size = r->size;
  c->outstanding.erase(r);
  delete r;
  return chorusNetSuccess;
}

// Sender closing in order (at the top of this file): lets UCX push out what it holds, then says how many
// messages went out, before the endpoint and the setup socket close.
void sayGoodbye(Comm* c) {
  using Clock = std::chrono::steady_clock;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kFlushSeconds));
  Goodbye g{kGoodbyeMagic, 0, c->posted};
  ucs_status_ptr_t s;
  {
    std::lock_guard<std::mutex> lock(gMu);
    for (Request* r : c->outstanding) {
      if (!r->done || r->status != UCS_OK) g.sent = std::min(g.sent, r->index);
    }
    ucp_request_param_t p{};
    s = ucp_ep_flush_nbx(c->ep, &p);
  }
  // A failed endpoint lost what it held: no goodbye then, and the receiver fails what it still waits for as soon
  // as the socket closes. A flush still in progress at the bound means the receiver is not reading now: the
  // goodbye goes anyway, the rest follows while this process progresses UCX, and the receiver waits for it
  // under its own deadline.
  if (UCS_PTR_IS_ERR(s)) return;
  if (s != nullptr) {
    ucs_status_t status;
    for (;;) {
      std::lock_guard<std::mutex> lock(gMu);  // taken per step: other comms' threads progress meanwhile
      ucp_worker_progress(gWorker);
      status = ucp_request_check_status(s);
      if (status != UCS_INPROGRESS || Clock::now() >= deadline) {
        ucp_request_free(s);
        break;
      }
    }
    if (status != UCS_OK && status != UCS_INPROGRESS) return;
  }
  size_t done = 0;
  while (sendSome(c->fd, &g, sizeof(g), &done) == 0 && Clock::now() < deadline) {
    pollfd p{c->fd, POLLOUT, 0};
    ::poll(&p, 1, 1);  // 16 bytes on an otherwise idle socket: room at once in practice
  }
}

// Whether test() on the comm's oldest request (the proxy tests in posting order) would report something now.
bool testWouldProgress(Comm* c) {
  if (c->broken != chorusNetSuccess) return true;
  const Request* oldest = nullptr;
  for (const Request* r : c->outstanding) {
    if (oldest == nullptr || r->index < oldest->index) oldest = r;
  }
  if (oldest->done) return true;
  if (!c->peerClosed && c->epFailed.empty()) return false;
  // The peer went: test() fails the request, unless a goodbye announced its message (net.h, at the top).
  return c->send || c->peerSent < 0 || oldest->index >= static_cast<uint64_t>(c->peerSent);
}

// The fds whose readiness means that test() on this comm can progress (net.h; at the top of this file).
int pollFds(void* comm, pollfd* fds, int max) {
  auto* c = static_cast<Comm*>(comm);
  std::lock_guard<std::mutex> lock(gMu);
  if (c->outstanding.empty() || max < 1) return 0;
  if (c->wake < 0) {
    c->wake = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (c->wake < 0) return 0;
  }
  c->setWake(0);
  c->sleeping = true;
  bool armed = false;
  for (int i = 0; i < 8 && !armed && gEventFd >= 0; ++i) {
    for (int j = 0; j < 64 && ucp_worker_progress(gWorker) != 0; ++j) {
    }
    armed = ucp_worker_arm(gWorker) == UCS_OK;  // UCS_ERR_BUSY: events came meanwhile, progress them first
  }
  if (gEventFd < 0) {
    c->setWake(100'000);  // no event fd: a 100 us slice, as the proxy's own timer would
  } else if (!armed || testWouldProgress(c)) {
    c->wakeSleeper();
  }
  int n = 0;
  fds[n++] = pollfd{c->wake, POLLIN, 0};
  if (n < max && gEventFd >= 0) fds[n++] = pollfd{gEventFd, POLLIN, 0};
  if (n < max && !c->peerClosed) fds[n++] = pollfd{c->fd, POLLIN, 0};
  return n;
}

// Closes the endpoint: flushes what was sent while the peer is alive (bounded), then forces it.
void closeEp(Comm* c) {
  std::lock_guard<std::mutex> lock(gMu);
  for (Request* r : c->outstanding) {
    if (r->ucx != nullptr && r->recv) ucp_request_cancel(gWorker, r->ucx);
  }
  if (c->ep != nullptr) {
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = c->broken == chorusNetSuccess ? 0 : UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t s = ucp_ep_close_nbx(c->ep, &p);
    if (UCS_PTR_IS_PTR(s)) {
      for (int i = 0; i < 100000 && ucp_request_check_status(s) == UCS_INPROGRESS; ++i) ucp_worker_progress(gWorker);
      ucp_request_free(s);
    }
    c->ep = nullptr;
  }
  // Requests still in flight are orphaned: their callbacks free them. Finished ones are freed here.
  for (Request* r : c->outstanding) {
    if (r->ucx == nullptr) {
      delete r;
    } else {
      r->comm = nullptr;
    }
  }
  c->outstanding.clear();
  for (int i = 0; i < 64 && ucp_worker_progress(gWorker) != 0; ++i) {
  }
}

chorusNetResult_t closeComm(void* comm) {
  if (comm == nullptr) return chorusNetSuccess;
  auto* c = static_cast<Comm*>(comm);
  if (c->send && c->ep != nullptr && c->broken == chorusNetSuccess && c->posted > 0) sayGoodbye(c);
  closeEp(c);
  closeFd(&c->fd);
  delete c;
  return chorusNetSuccess;
}

chorusNetResult_t closeListen(void* listenComm) {
  auto* l = static_cast<ListenComm*>(listenComm);
  for (auto& c : l->pending) {
    closeEp(c.get());
    closeFd(&c->fd);
  }
  closeFd(&l->fd);
  delete l;
  return chorusNetSuccess;
}

const char* lastError() {
  return lastErrorText().c_str();
}

}  // namespace
}  // namespace chorus::netplugin::ucx

extern "C" __attribute__((visibility("default"))) const chorusNet_v1_t chorusNetPlugin_v1 = {
    "ucx",
    chorus::netplugin::ucx::init,
    chorus::netplugin::ucx::devices,
    chorus::netplugin::ucx::getProperties,
    chorus::netplugin::ucx::listen,
    chorus::netplugin::ucx::connect,
    chorus::netplugin::ucx::accept,
    chorus::netplugin::ucx::regMr,
    chorus::netplugin::ucx::deregMr,
    chorus::netplugin::ucx::isend,
    chorus::netplugin::ucx::irecv,
    chorus::netplugin::ucx::iflush,
    chorus::netplugin::ucx::test,
    chorus::netplugin::ucx::closeComm,
    chorus::netplugin::ucx::closeComm,
    chorus::netplugin::ucx::closeListen,
    chorus::netplugin::ucx::lastError,
    chorus::netplugin::ucx::pollFds,
};
