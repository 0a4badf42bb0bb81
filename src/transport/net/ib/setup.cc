#include "transport/net/ib/setup.h"

#include <sys/random.h>

#include <algorithm>
#include <memory>

#include "transport/net/ib/comm.h"
#include "transport/net/ib/plugin_state.h"
#include "transport/net/plugin_util.h"

namespace chorus::netplugin::ib {
namespace {

constexpr int kStepFailed = -1;    // the peer failed or is a stranger (lastError set)
constexpr int kLocalFailure = -2;  // this side could not build its part (lastError set)

chorusNetResult_t checkDevice(int dev) {
  IbState& st = ibState();
  if (!st.ready) return fail(chorusNetInvalidArgument, "ib plugin: init has not succeeded");
  if (dev < 0 || dev >= static_cast<int>(st.ports.size())) {
    return fail(chorusNetInvalidArgument, "ib plugin: no device %d (it has %zu)", dev, st.ports.size());
  }
  return chorusNetSuccess;
}

// Whether `in` is a ConnInfo a peer of `port` may send: our token, a sane QP count, the same link layer.
bool acceptable(const ConnInfo& in, uint64_t token, const IbPort& port, uint32_t nqps) {
  if (in.magic != kInfoMagic || in.token != token) {
    fail(chorusNetRemoteError, "ib plugin: a setup message with a wrong magic or token (a stranger)");
    return false;
  }
  if (in.nqps < 1 || in.nqps > kMaxQps || (nqps != 0 && in.nqps != nqps)) {
    fail(chorusNetRemoteError, "ib plugin: the peer offers %u QPs", in.nqps);
    return false;
  }
  if (in.linkLayer != port.linkLayer) {
    fail(chorusNetRemoteError, "ib plugin: %s is %s but the peer's port is not", port.name.c_str(),
         port.linkLayer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand");
    return false;
  }
  return true;
}

// Sender: connect, send our ConnInfo, read the receiver's, connect the QPs, send kReady. 1 when done.
int stepConnect(Comm* c) {
  Setup& s = *c->setup;
  if (s.stage == 0) {
    int r = connectDone(c->fd, s.to);
    if (r <= 0) return r < 0 ? kStepFailed : 0;
    s.stage = 1;
  }
  if (s.stage == 1) {
    int w = sendSome(c->fd, &s.out, sizeof(s.out), &s.outDone);
    if (w < 0) return kStepFailed;
    int r = recvSome(c->fd, &s.in, sizeof(s.in), &s.inDone);
    if (r < 0) return kStepFailed;
    if (w == 0 || r == 0) return 0;
    if (!acceptable(s.in, s.token, *c->port, static_cast<uint32_t>(c->qps.size()))) return kStepFailed;
    std::string why;
    if (!connectQps(c, s.in, ibState().timing, &why)) {
      fail(chorusNetSystemError, "ib plugin: %s", why.c_str());
      return kLocalFailure;
    }
    s.stage = 2;
  }
  int w = sendSome(c->fd, &s.ready, sizeof(s.ready), &s.readyDone);
  return w < 0 ? kStepFailed : w;
}

// Receiver: read the sender's ConnInfo, build as many QPs, connect them, answer, wait for kReady. 1 when done.
int stepAccept(Comm* c, const ListenComm& l) {
  Setup& s = *c->setup;
  if (s.stage == 0) {
    int r = recvSome(c->fd, &s.in, sizeof(s.in), &s.inDone);
    if (r <= 0) return r < 0 ? kStepFailed : 0;
    if (!acceptable(s.in, l.token, *l.port, 0)) return kStepFailed;
    std::string why;
    if (!createResources(c, l.port, static_cast<int>(s.in.nqps), &why) ||
        !connectQps(c, s.in, ibState().timing, &why) || !createFlushQp(c, ibState().timing, &why)) {
      fail(chorusNetSystemError, "ib plugin: %s", why.c_str());
      return kLocalFailure;
    }
    describe(*c, l.token, &s.out);
    s.stage = 1;
  }
  if (s.stage == 1) {
    int w = sendSome(c->fd, &s.out, sizeof(s.out), &s.outDone);
    if (w <= 0) return w < 0 ? kStepFailed : 0;
    s.stage = 2;
  }
  int r = recvSome(c->fd, &s.ready, sizeof(s.ready), &s.readyDone);
  if (r <= 0) return r < 0 ? kStepFailed : 0;
  if (s.ready != kReady) {
    fail(chorusNetRemoteError, "ib plugin: the sender's ready message is malformed");
    return kStepFailed;
  }
  return 1;
}

}  // namespace

chorusNetResult_t ibListen(int dev, void* handle, void** listenComm) {
  *listenComm = nullptr;
  if (chorusNetResult_t r = checkDevice(dev); r != chorusNetSuccess) return r;
  auto l = std::make_unique<ListenComm>();
  l->port = &ibState().ports[dev];
  WireAddress where = ibState().listen;
  l->fd = listenOn(&where);
  if (l->fd < 0) return chorusNetSystemError;
  if (getrandom(&l->token, sizeof(l->token), 0) != static_cast<ssize_t>(sizeof(l->token))) {
    closeFd(&l->fd);
    return fail(chorusNetSystemError, "getrandom: %s", strerror(errno));
  }
  Handle h{};
  h.magic = kHandleMagic;
  h.token = l->token;
  h.addr = where;
  h.stage = nullptr;
  memcpy(handle, &h, sizeof(h));
  *listenComm = l.release();
  return chorusNetSuccess;
}

chorusNetResult_t ibConnect(int dev, void* handle, void** sendComm) {
  *sendComm = nullptr;
  if (chorusNetResult_t r = checkDevice(dev); r != chorusNetSuccess) return r;
  auto* h = static_cast<Handle*>(handle);
  if (h->magic != kHandleMagic) return fail(chorusNetInvalidArgument, "ib plugin: the connection handle is malformed");
  auto* c = static_cast<Comm*>(h->stage);
  if (c == nullptr) {
    c = new Comm;
    c->send = true;
    c->setup = std::make_unique<Setup>();
    c->setup->to = h->addr;
    c->setup->token = h->token;
    std::string why;
    if (!createResources(c, &ibState().ports[dev], ibState().nqps, &why)) {
      destroyComm(c);
      return fail(chorusNetSystemError, "ib plugin: %s", why.c_str());
    }
    // The Cts receives are posted before the receiver may send any (kReady comes after them).
    for (int i = 0; i < kMaxRequests; ++i) {
      if (!postCtsRecv(c, static_cast<uint64_t>(i), &why)) {
        destroyComm(c);
        return fail(chorusNetSystemError, "ib plugin: %s", why.c_str());
      }
    }
    describe(*c, h->token, &c->setup->out);
    c->fd = startConnect(h->addr);
    if (c->fd < 0) {
      destroyComm(c);
      return chorusNetRemoteError;
    }
    h->stage = c;
  }
  int r = stepConnect(c);
  if (r == 0) return chorusNetSuccess;
  h->stage = nullptr;
  if (r < 0) {
    destroyComm(c);
    return r == kLocalFailure ? chorusNetSystemError : chorusNetRemoteError;
  }
  c->setup.reset();
  *sendComm = c;
  return chorusNetSuccess;
}

chorusNetResult_t ibAccept(void* listenComm, void** recvComm) {
  *recvComm = nullptr;
  auto* l = static_cast<ListenComm*>(listenComm);
  acceptWaiting(l->fd, [l](int fd) {
    auto c = std::make_unique<Comm>();
    c->fd = fd;
    c->setup = std::make_unique<Setup>();
    l->pending.push_back(std::move(c));
  });
  chorusNetResult_t result = chorusNetSuccess;
  for (auto& c : l->pending) {
    int r = stepAccept(c.get(), *l);
    if (r < 0) {
      // A stranger or a sender that went away is dropped; a failure of our own is reported.
      if (r == kLocalFailure) result = chorusNetSystemError;
      destroyComm(c.release());
      continue;
    }
    if (r == 1 && *recvComm == nullptr) {
      c->setup.reset();
      *recvComm = c.release();
    }
  }
  std::erase_if(l->pending, [](const std::unique_ptr<Comm>& c) { return !c; });
  return *recvComm != nullptr ? chorusNetSuccess : result;
}

chorusNetResult_t ibCloseListen(void* listenComm) {
  auto* l = static_cast<ListenComm*>(listenComm);
  if (l == nullptr) return chorusNetSuccess;
  for (auto& c : l->pending) destroyComm(c.release());
  closeFd(&l->fd);
  delete l;
  return chorusNetSuccess;
}

}  // namespace chorus::netplugin::ib
