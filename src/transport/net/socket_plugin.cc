// The socket network plugin: TCP, CHORUS_SOCKET_NSTREAMS connections per net-communicator, framed as
// socket_plugin.h says (the framing the socket transport had before it moved behind the plugin interface).
// All I/O is non-blocking and happens inside connect/accept/isend/irecv/test.
//
// Compiled twice: into the library as the built-in "socket" plugin, and by tests/net as the shared library
// libchorus-net-testsock.so (CHORUS_NET_SOCKET_AS_PLUGIN: exports chorusNetPlugin_v1 named "testsock", with
// one stream and 4 outstanding requests, so that the transport's "no room" path is exercised).
#include <sys/random.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <memory>
#include <vector>

#include "transport/net/plugin_util.h"
#include "transport/net/socket_plugin.h"
#ifndef CHORUS_NET_SOCKET_AS_PLUGIN
#include "base/params.h"
#endif

namespace chorus::netplugin::sock {
namespace {

#ifdef CHORUS_NET_SOCKET_AS_PLUGIN
constexpr const char* kName = "testsock";
constexpr int kMaxRequests = 4;
constexpr uint32_t kDefaultStreams = 1;
#else
constexpr const char* kName = "socket";
constexpr int kMaxRequests = 128;
#endif
WireAddress gListen;  // from init

struct Comm;

struct Request {
  Comm* comm = nullptr;
  char* data = nullptr;
  uint64_t size = 0;  // send: message size; recv: buffer size, then the message's size
  uint32_t tag = 0;
  bool headerKnown = false;  // recv: stream 0 has read the header
  uint32_t streamsDone = 0;
  uint64_t seq = 0;  // position in the comm's posting order
  chorusNetResult_t error = chorusNetSuccess;
  std::string message;
};

// A receiver's stream 0 reads ahead up to this many bytes at a message boundary, so that a small message's header
// and payload come in one recv(); bytes of the messages after it wait in the buffer.
constexpr size_t kReadAhead = 4096;

struct Stream {
  int fd = -1;
  size_t index = 0;               // position in Comm::queue of the request this stream works on (counted from base)
  Header header{};                // stream 0
  size_t headerOff = 0;           // sender: bytes of the header sent
  uint64_t off = 0;               // bytes of this stream's chunk transferred
  bool eof = false;               // receiver: the sender closed this stream between two messages
  std::unique_ptr<char[]> ahead;  // receiver, stream 0: bytes read past the current position, [aheadBegin, aheadEnd)
  size_t aheadBegin = 0;
  size_t aheadEnd = 0;
  size_t buffered() const { return aheadEnd - aheadBegin; }
};

struct Comm {
  bool send = false;
  std::vector<Stream> streams;
  std::deque<std::unique_ptr<Request>> queue;  // posted, not yet freed by test(); in posting order
  uint64_t base = 0;                           // sequence number of queue.front()
  uint64_t posted = 0;
  chorusNetResult_t broken = chorusNetSuccess;  // once set, every request fails with it
  std::string brokenWhy;
  // Connect stage (sender): sockets connected and hello sent.
  WireAddress to;
  uint8_t token[kTokenBytes] = {};
  std::vector<size_t> helloSent;
  ~Comm() {
    for (Stream& s : streams) closeFd(&s.fd);
  }
  void breakWith(chorusNetResult_t code) {
    if (broken != chorusNetSuccess) return;
    broken = code;
    brokenWhy = lastErrorText();
  }
};

struct ListenComm {
  int fd = -1;
  uint32_t nstreams = 0;
  uint8_t token[kTokenBytes] = {};
  struct Pending {
    int fd;
    Hello hello;
    size_t got;
  };
  std::vector<Pending> pending;
  std::unique_ptr<Comm> comm;  // streams attached so far
  uint32_t attached = 0;
  ~ListenComm() {
    closeFd(&fd);
    for (Pending& p : pending) closeFd(&p.fd);
  }
};

struct Mr {
  char* data;
  size_t size;
};

// CHORUS_SOCKET_NSTREAMS for the built-in plugin (0 when out of range); the test plugin uses one stream.
uint32_t streamsFromEnv() {
#ifdef CHORUS_NET_SOCKET_AS_PLUGIN
  return kDefaultStreams;
#else
  int64_t n = param::SocketNstreams();
  return n >= 1 && n <= static_cast<int64_t>(kMaxStreams) ? static_cast<uint32_t>(n) : 0;
#endif
}

chorusNetResult_t init(chorusNetLogger_t, const char* listenAddress) {
  if (!gListen.parse(listenAddress)) {
    return fail(chorusNetInvalidArgument, "%s plugin: listen address '%s' is not an IP address", kName,
                listenAddress == nullptr ? "" : listenAddress);
  }
  return chorusNetSuccess;
}

chorusNetResult_t devices(int* ndev) {
  *ndev = 1;
  return chorusNetSuccess;
}

chorusNetResult_t getProperties(int dev, chorusNetProperties_v1_t* p) {
  if (dev != 0) return fail(chorusNetInvalidArgument, "%s plugin: no device %d (it has one)", kName, dev);
  *p = {};
  p->name = "tcp";
  p->pciPath = nullptr;
  p->guid = 0;
  p->ptrSupport = CHORUS_PTR_HOST;
  p->speed = 10000;
  p->maxComms = 65536;
  p->maxRecvs = 1;
  p->maxRequests = kMaxRequests;
  p->maxMessage = size_t(1) << 40;
  return chorusNetSuccess;
}

chorusNetResult_t listen(int dev, void* handle, void** listenComm) {
  if (dev != 0) return fail(chorusNetInvalidArgument, "%s plugin: no device %d", kName, dev);
  uint32_t nstreams = streamsFromEnv();
  if (nstreams == 0) return fail(chorusNetInvalidArgument, "CHORUS_SOCKET_NSTREAMS is outside [1, %u]", kMaxStreams);
  auto l = std::make_unique<ListenComm>();
  WireAddress where = gListen;
  l->fd = listenOn(&where);
  if (l->fd < 0) return chorusNetSystemError;
  l->nstreams = nstreams;
  if (getrandom(l->token, kTokenBytes, 0) != static_cast<ssize_t>(kTokenBytes)) {
    return fail(chorusNetSystemError, "getrandom: %s", strerror(errno));
  }
  Handle h{};
  h.magic = kMagic;
  h.nstreams = nstreams;
  h.addr = where;
  memcpy(h.token, l->token, kTokenBytes);
  h.stage = nullptr;
  memcpy(handle, &h, sizeof(h));
  *listenComm = l.release();
  return chorusNetSuccess;
}

chorusNetResult_t connect(int, void* handle, void** sendComm) {
  *sendComm = nullptr;
  Handle* h = static_cast<Handle*>(handle);
  if (h->magic != kMagic || h->nstreams < 1 || h->nstreams > kMaxStreams) {
    return fail(chorusNetInvalidArgument, "%s plugin: the connection handle is malformed", kName);
  }
  auto* c = static_cast<Comm*>(h->stage);
  if (c == nullptr) {
    auto fresh = std::make_unique<Comm>();
    fresh->send = true;
    fresh->to = h->addr;
    memcpy(fresh->token, h->token, kTokenBytes);
    fresh->streams.resize(h->nstreams);
    fresh->helloSent.assign(h->nstreams, 0);
    for (Stream& s : fresh->streams) {
      s.fd = startConnect(h->addr);
      if (s.fd < 0) return chorusNetRemoteError;
    }
    c = fresh.release();
    h->stage = c;
  }
  bool all = true;
  for (uint32_t i = 0; i < c->streams.size(); ++i) {
    Stream& s = c->streams[i];
    if (c->helloSent[i] == sizeof(Hello)) continue;
    int ready = c->helloSent[i] > 0 ? 1 : connectDone(s.fd, c->to);
    Hello hello{kMagic, i, {}};
    memcpy(hello.token, c->token, kTokenBytes);
    if (ready == 1) ready = sendSome(s.fd, &hello, sizeof(hello), &c->helloSent[i]);
    if (ready < 0) {
      h->stage = nullptr;
      delete c;
      return chorusNetRemoteError;
    }
    all &= ready == 1;
  }
  if (!all) return chorusNetSuccess;
  h->stage = nullptr;
  *sendComm = c;
  return chorusNetSuccess;
}

chorusNetResult_t accept(void* listenComm, void** recvComm) {
  *recvComm = nullptr;
  auto* l = static_cast<ListenComm*>(listenComm);
  if (!l->comm) {
    l->comm = std::make_unique<Comm>();
    l->comm->streams.resize(l->nstreams);
  }
  acceptWaiting(l->fd, [l](int fd) { l->pending.push_back({fd, {}, 0}); });
  for (auto& p : l->pending) {
    int r = recvSome(p.fd, &p.hello, sizeof(p.hello), &p.got);
    if (r < 0) closeFd(&p.fd);
    if (r != 1) continue;
    // A stranger, a wrong token or a duplicate stream index is dropped.
    Stream* s =
        p.hello.magic == kMagic && p.hello.stream < l->nstreams && memcmp(p.hello.token, l->token, kTokenBytes) == 0
            ? &l->comm->streams[p.hello.stream]
            : nullptr;
    if (s == nullptr || s->fd >= 0) {
      closeFd(&p.fd);
      continue;
    }
    s->fd = p.fd;
    p.fd = -1;
    ++l->attached;
  }
  std::erase_if(l->pending, [](const ListenComm::Pending& p) { return p.fd < 0; });
  if (l->attached < l->nstreams) return chorusNetSuccess;
  *recvComm = l->comm.release();
  l->attached = 0;
  return chorusNetSuccess;
}

chorusNetResult_t regMr(void*, void* data, size_t size, int type, void** mhandle) {
  if (type != CHORUS_PTR_HOST) return fail(chorusNetInvalidArgument, "%s plugin: only host memory", kName);
  *mhandle = new Mr{static_cast<char*>(data), size};
  return chorusNetSuccess;
}

chorusNetResult_t deregMr(void*, void* mhandle) {
  delete static_cast<Mr*>(mhandle);
  return chorusNetSuccess;
}

chorusNetResult_t post(Comm* c, void* data, size_t size, int tag, void* mhandle, void** request) {
  *request = nullptr;
  auto* mr = static_cast<Mr*>(mhandle);
  if (mr == nullptr || static_cast<char*>(data) < mr->data || static_cast<char*>(data) + size > mr->data + mr->size) {
    return fail(chorusNetInvalidArgument, "%s plugin: the buffer is not inside the registered region", kName);
  }
  if (tag < 0 || tag >= CHORUS_NET_MAX_TAG) return fail(chorusNetInvalidArgument, "tag %d out of range", tag);
  if (c->queue.size() >= static_cast<size_t>(kMaxRequests)) return chorusNetSuccess;  // no room: retry
  auto r = std::make_unique<Request>();
  r->comm = c;
  r->data = static_cast<char*>(data);
  r->size = size;
  r->tag = static_cast<uint32_t>(tag);
  r->seq = c->posted;
  *request = r.get();
  c->queue.push_back(std::move(r));
  ++c->posted;
  return chorusNetSuccess;
}

chorusNetResult_t isend(void* comm, void* data, size_t size, int tag, void* mhandle, void** request) {
  return post(static_cast<Comm*>(comm), data, size, tag, mhandle, request);
}

chorusNetResult_t irecv(void* comm, void* data, size_t size, int tag, void* mhandle, void** request) {
  return post(static_cast<Comm*>(comm), data, size, tag, mhandle, request);
}

chorusNetResult_t iflush(void*, void*, size_t, void*, void** request) {
  *request = nullptr;  // host memory: nothing to flush
  return chorusNetSuccess;
}

Request* at(Comm* c, size_t seq) {
  return seq - c->base < c->queue.size() ? c->queue[seq - c->base].get() : nullptr;
}

// Sends what is left of a header (an bytes at a, *ad done; an = 0: none) and of a chunk (bn bytes at b, *bd done)
// in as few system calls as the socket takes: a small message is one sendmsg() with its header. Returns 1 when
// both are sent, 0 when the socket would block, -1 when it failed (lastError set).
int sendHeaderAndChunk(int fd, const void* a, size_t an, size_t* ad, const char* b, uint64_t bn, uint64_t* bd) {
  while (*ad < an || *bd < bn) {
    iovec iov[2];
    int k = 0;
    if (*ad < an) iov[k++] = {static_cast<char*>(const_cast<void*>(a)) + *ad, an - *ad};
    if (*bd < bn) iov[k++] = {const_cast<char*>(b) + *bd, bn - *bd};
    msghdr m{};
    m.msg_iov = iov;
    m.msg_iovlen = static_cast<size_t>(k);
    ssize_t r = ::sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return fail(chorusNetRemoteError, "send: %s", strerror(errno)), -1;
    const size_t head = std::min(static_cast<size_t>(r), an - *ad);
    *ad += head;
    *bd += static_cast<size_t>(r) - head;
  }
  return 1;
}

// Sender: moves bytes on every stream until each would block; stream 0 sends each message's header with its
// chunk. Fails the comm on a socket error.
void progressSend(Comm* c) {
  const auto n = static_cast<uint32_t>(c->streams.size());
  for (uint32_t s = 0; s < n && c->broken == chorusNetSuccess; ++s) {
    Stream& st = c->streams[s];
    for (Request* r = at(c, st.index); r != nullptr; r = at(c, st.index)) {
      if (s == 0 && st.headerOff == 0 && st.off == 0) st.header = {r->tag, 0, r->size};
      uint64_t lo, hi;
      chunkRange(r->size, n, s, &lo, &hi);
      int k = sendHeaderAndChunk(st.fd, &st.header, s == 0 ? sizeof(Header) : 0, &st.headerOff, r->data + lo, hi - lo,
                                 &st.off);
      if (k < 0) return c->breakWith(chorusNetRemoteError);
      if (k == 0) break;
      ++r->streamsDone;
      ++st.index;
      st.off = 0;
      st.headerOff = 0;
    }
  }
}

// One recv() into a stream's read-ahead buffer: 1 when bytes came, 0 when it would block, kClosed when the peer
// closed the stream, -1 when it failed (lastError set).
int readAhead(Stream& st) {
  if (!st.ahead) st.ahead = std::make_unique<char[]>(kReadAhead);
  if (st.aheadBegin > 0) {
    memmove(st.ahead.get(), st.ahead.get() + st.aheadBegin, st.buffered());
    st.aheadEnd -= st.aheadBegin;
    st.aheadBegin = 0;
  }
  for (;;) {
    ssize_t r = ::recv(st.fd, st.ahead.get() + st.aheadEnd, kReadAhead - st.aheadEnd, MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return fail(chorusNetRemoteError, "the peer closed the connection"), kClosed;
    if (r < 0) return fail(chorusNetRemoteError, "recv: %s", strerror(errno)), -1;
    st.aheadEnd += static_cast<size_t>(r);
    return 1;
  }
}

// Receiver: moves bytes on every stream until each would block; fails the comm on a socket error. A stream the
// sender closed between messages only stops (eof): what was sent before is still delivered, and only the
// receives it owes data fail (test()).
void progressRecv(Comm* c) {
  const auto n = static_cast<uint32_t>(c->streams.size());
  for (uint32_t s = 0; s < n && c->broken == chorusNetSuccess; ++s) {
    Stream& st = c->streams[s];
    for (Request* r = at(c, st.index); r != nullptr; r = at(c, st.index)) {
      if (s > 0 && !r->headerKnown) break;  // the size comes from stream 0
      if (st.eof && (s == 0 || !r->headerKnown)) break;
      if (s == 0 && !r->headerKnown) {
        if (st.buffered() < sizeof(Header)) {
          int k = readAhead(st);
          if (k == kClosed && st.buffered() == 0) {
            st.eof = true;  // between two messages
            break;
          }
          if (k < 0) return c->breakWith(chorusNetRemoteError);
          if (st.buffered() < sizeof(Header)) break;
        }
        memcpy(&st.header, st.ahead.get() + st.aheadBegin, sizeof(Header));
        st.aheadBegin += sizeof(Header);
        if (st.header.tag != r->tag || st.header.size > r->size) {
          fail(chorusNetProtocolError,
               "%s plugin: a message of %llu bytes with tag %u reached a receive of %llu bytes with tag %u", kName,
               static_cast<unsigned long long>(st.header.size), st.header.tag, static_cast<unsigned long long>(r->size),
               r->tag);
          return c->breakWith(chorusNetProtocolError);
        }
        r->size = st.header.size;
        r->headerKnown = true;
      }
      uint64_t lo, hi;
      chunkRange(r->size, n, s, &lo, &hi);
      if (st.eof && hi > lo) break;  // a chunk the closed stream owes: test() fails the request
      if (st.buffered() > 0 && st.off < hi - lo) {
        const size_t n = std::min<uint64_t>(st.buffered(), hi - lo - st.off);
        memcpy(r->data + lo + st.off, st.ahead.get() + st.aheadBegin, n);
        st.aheadBegin += n;
        st.off += n;
      }
      size_t off = st.off;
      int k = recvSome(st.fd, r->data + lo, hi - lo, &off);
      if (k == kClosed && s > 0 && st.off == 0) {
        st.eof = true;  // closed before this chunk began; if the message was sent, the test fails it
        break;
      }
      st.off = off;
      if (k < 0) return c->breakWith(chorusNetRemoteError);
      if (k == 0) break;
      ++r->streamsDone;
      ++st.index;
      st.off = 0;
      st.headerOff = 0;
    }
  }
}

void progress(Comm* c) {
  if (c->send) {
    progressSend(c);
  } else {
    progressRecv(c);
  }
}

chorusNetResult_t test(void* request, int* done, size_t* size) {
  auto* r = static_cast<Request*>(request);
  Comm* c = r->comm;
  *done = 0;
  progress(c);
  if (r->streamsDone < c->streams.size() && c->broken == chorusNetSuccess) {
    if (c->send && peerGone(c->streams[0].fd)) {
      // A sender learns that its receiver went away only by reading: receivers never send.
      c->breakWith(fail(chorusNetRemoteError, "the receiver closed the connection"));
    }
    // A stream at its end that still owes part of this request never delivers it: stream 0 owes the header
    // of every request it has not passed, another stream only a non-empty chunk of a known size.
    for (uint32_t s = 0; s < c->streams.size(); ++s) {
      const Stream& st = c->streams[s];
      if (!st.eof || st.index > r->seq) continue;
      uint64_t lo = 0, hi = 1;
      if (s > 0 && r->headerKnown) chunkRange(r->size, static_cast<uint32_t>(c->streams.size()), s, &lo, &hi);
      if ((s == 0 || r->headerKnown) && hi > lo) {
        c->breakWith(fail(chorusNetRemoteError, "the sender closed the connection"));
      }
    }
  }
  if (r->streamsDone < c->streams.size()) {
    if (c->broken != chorusNetSuccess) return fail(c->broken, "%s", c->brokenWhy.c_str());
    return chorusNetSuccess;
  }
  *done = 1;
  if (size != nullptr) *size = r->size;
  // Free it; requests complete in order on every stream, so a finished request is at the front unless the
  // caller tests out of order (then it stays until the ones before it are freed).
  r->comm = nullptr;
  while (!c->queue.empty() && c->queue.front()->comm == nullptr) {
    c->queue.pop_front();
    ++c->base;
  }
  return chorusNetSuccess;
}

// The streams that wait on their socket: each with a request to move, not at its end, and (receiving
// streams after the first) with the size of that request known, since until then they wait on stream 0. A
// receiving stream whose read-ahead buffer already holds bytes for its request can move now: it is named with
// POLLOUT, ready at once (a receiver never writes to its sockets, so their send buffers stay empty).
int pollFds(void* comm, pollfd* fds, int max) {
  Comm* c = static_cast<Comm*>(comm);
  if (c->broken != chorusNetSuccess) return 0;
  int n = 0;
  for (uint32_t s = 0; s < c->streams.size() && n < max; ++s) {
    const Stream& st = c->streams[s];
    const Request* r = at(c, st.index);
    if (r == nullptr || st.eof || st.fd < 0) continue;
    if (!c->send && s > 0 && !r->headerKnown) continue;
    fds[n].fd = st.fd;
    fds[n].events = c->send || st.buffered() > 0 ? POLLOUT : POLLIN;
    fds[n].revents = 0;
    ++n;
  }
  return n;
}

chorusNetResult_t closeComm(void* comm) {
  delete static_cast<Comm*>(comm);
  return chorusNetSuccess;
}

chorusNetResult_t closeListen(void* listenComm) {
  delete static_cast<ListenComm*>(listenComm);
  return chorusNetSuccess;
}

const char* lastError() {
  return lastErrorText().c_str();
}

}  // namespace

const chorusNet_v1_t kPlugin = {kName,  init,      devices,   getProperties, listen,    connect,
                                accept, regMr,     deregMr,   isend,         irecv,     iflush,
                                test,   closeComm, closeComm, closeListen,   lastError, pollFds};

}  // namespace chorus::netplugin::sock

#ifdef CHORUS_NET_SOCKET_AS_PLUGIN
extern "C" __attribute__((visibility("default"))) const chorusNet_v1_t chorusNetPlugin_v1 =
    chorus::netplugin::sock::kPlugin;
#else
const chorusNet_v1_t* chorus::transport::net::socketPlugin() {
  return &chorus::netplugin::sock::kPlugin;
}
#endif
