#include "transport/net/ib/ib_plugin.h"

#include <mutex>

#include "base/params.h"
#include "transport/net/ib/comm.h"
#include "transport/net/ib/data_path.h"
#include "transport/net/ib/plugin_state.h"
#include "transport/net/ib/setup.h"

namespace chorus::netplugin::ib {
namespace {

std::mutex gInitMu;

chorusNetResult_t devices(int* ndev) {
  *ndev = static_cast<int>(ibState().ports.size());
  return chorusNetSuccess;
}

chorusNetResult_t getProperties(int dev, chorusNetProperties_v1_t* props) {
  IbState& st = ibState();
  if (dev < 0 || dev >= static_cast<int>(st.ports.size())) {
    return fail(chorusNetInvalidArgument, "ib plugin: no device %d (it has %zu)", dev, st.ports.size());
  }
  *props = portProperties(st.ports[dev], st.nqps);
  return chorusNetSuccess;
}

chorusNetResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
  *mhandle = nullptr;
  auto* c = static_cast<Comm*>(comm);
  if (c == nullptr || c->port == nullptr) return fail(chorusNetInvalidArgument, "ib plugin: regMr without a comm");
  if (type != CHORUS_PTR_HOST && type != CHORUS_PTR_CUDA) {
    return fail(chorusNetInvalidArgument, "ib plugin: unknown pointer type %d", type);
  }
  if (type == CHORUS_PTR_CUDA && !c->port->gdr) {
    return fail(chorusNetInvalidArgument, "ib plugin: %s cannot reach GPU memory (no GPUDirect RDMA)",
                c->port->name.c_str());
  }
  std::string why;
  MrCache::Entry* e = c->port->dev->mrs->acquire(data, size, type, &why);
  if (e == nullptr) return fail(chorusNetSystemError, "ib plugin: registering %zu bytes: %s", size, why.c_str());
  auto* h = new MrHandle;
  h->entry = e;
  h->dev = c->port->dev;
  h->addr = reinterpret_cast<uintptr_t>(data);
  h->size = size;
  h->type = type;
  *mhandle = h;
  return chorusNetSuccess;
}

chorusNetResult_t deregMr(void*, void* mhandle) {
  auto* h = static_cast<MrHandle*>(mhandle);
  if (h == nullptr || h->magic != MrHandle::kMrMagic) {
    return fail(chorusNetInvalidArgument, "ib plugin: deregMr of a handle regMr did not return");
  }
  std::string why;
  const bool ok = h->entry->owner->release(h->entry, &why);
  h->magic = 0;
  delete h;
  if (!ok) return fail(chorusNetSystemError, "ib plugin: %s", why.c_str());
  return chorusNetSuccess;
}

const char* lastError() {
  return lastErrorText().c_str();
}

// An integer setting in [lo, hi]; false (lastError set) otherwise.
bool inRange(const char* var, int64_t value, int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi) return true;
  fail(chorusNetInvalidArgument, "%s=%lld is outside [%lld, %lld]", var, static_cast<long long>(value),
       static_cast<long long>(lo), static_cast<long long>(hi));
  return false;
}

}  // namespace

IbState& ibState() {
  static IbState state;
  return state;
}

void ibLog(int level, const std::string& message) {
  if (ibState().logger != nullptr) ibState().logger(level, message.c_str());
}

chorusNetResult_t initWith(const IbVerbs& verbs, chorusNetLogger_t logger, const char* listenAddress) {
  std::lock_guard<std::mutex> lock(gInitMu);
  IbState& st = ibState();
  if (st.ready) return chorusNetSuccess;
  if (!st.listen.parse(listenAddress)) {
    return fail(chorusNetInvalidArgument, "ib plugin: listen address '%s' is not an IP address",
                listenAddress == nullptr ? "" : listenAddress);
  }
  st.logger = logger;
  st.verbs = verbs;
  const std::string hca = param::IbHca();
  HcaFilter filter;
  std::string why;
  if (!HcaFilter::parse(hca, &filter, &why)) {
    return fail(chorusNetInvalidArgument, "CHORUS_IB_HCA='%s': %s", hca.c_str(), why.c_str());
  }
  const int64_t nqps = param::IbQpsPerConnection(), gid = param::IbGidIndex();
  const int64_t timeout = param::IbTimeout(), retry = param::IbRetryCnt();
  if (!inRange("CHORUS_IB_QPS_PER_CONNECTION", nqps, 1, kMaxQps) || !inRange("CHORUS_IB_GID_INDEX", gid, -1, 255) ||
      !inRange("CHORUS_IB_TIMEOUT", timeout, 1, 31) || !inRange("CHORUS_IB_RETRY_CNT", retry, 0, 7)) {
    return chorusNetInvalidArgument;
  }
  st.nqps = static_cast<int>(nqps);
  st.timing.timeout = static_cast<int>(timeout);
  st.timing.retryCnt = static_cast<int>(retry);
  chorusNetResult_t r = discoverPorts(st.verbs, filter, static_cast<int>(gid), ibLog, &st.contexts, &st.ports, &why);
  if (r != chorusNetSuccess) return fail(r, "ib plugin (%s): %s", st.verbs.provider, why.c_str());
  st.ready = true;
  return chorusNetSuccess;
}

chorusNet_v1_t makeIbPlugin(const char* name, chorusNetResult_t (*init)(chorusNetLogger_t, const char*)) {
  chorusNet_v1_t p{};
  p.name = name;
  p.init = init;
  p.devices = devices;
  p.getProperties = getProperties;
  p.listen = ibListen;
  p.connect = ibConnect;
  p.accept = ibAccept;
  p.regMr = regMr;
  p.deregMr = deregMr;
  p.isend = ibIsend;
  p.irecv = ibIrecv;
  p.iflush = ibIflush;
  p.test = ibTest;
  p.closeSend = ibCloseComm;
  p.closeRecv = ibCloseComm;
  p.closeListen = ibCloseListen;
  p.lastError = lastError;
  p.pollFds = ibPollFds;
  return p;
}

}  // namespace chorus::netplugin::ib
