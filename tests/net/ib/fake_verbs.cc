#include "net/ib/fake_verbs.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "transport/net/ib/gid_select.h"

namespace chorus::ibfake {
namespace {

enum class Armed { kNo, kAll, kSolicited };

struct FDevice {
  ibv_device dev{};  // first: the plugin sees ibv_device*
  FakeDevice desc;
};

struct FContext {
  ibv_context ctx{};
  FDevice* dev = nullptr;
};

struct FPd {
  ibv_pd pd{};
};

struct FMr {
  ibv_mr mr{};
  int access = 0;
};

struct FCq;

struct FChannel {
  ibv_comp_channel ch{};
  int writeFd = -1;
  std::deque<FCq*> events;
};

// A completion as the CQ holds it, with what the fake needs when it is polled.
struct Cqe {
  ibv_wc wc{};
  bool sendSide = false;  // a send-queue completion: polling it frees send-queue slots
  uint64_t seq = 0;       // the work request's position in its QP's send queue
};

struct FCq {
  ibv_cq cq{};
  int capacity = 0;
  std::deque<Cqe> q;
  FChannel* channel = nullptr;
  Armed armed = Armed::kNo;
  bool overrun = false;
  unsigned delivered = 0;  // events handed out by ibv_get_cq_event
  unsigned acked = 0;
  int users = 0;  // QPs attached
};

struct SendWr {
  ibv_send_wr wr{};
  std::vector<ibv_sge> sges;
  std::vector<uint8_t> inlineData;
  bool isInline = false;
  uint64_t seq = 0;
};

struct RecvWr {
  uint64_t wrId = 0;
  std::vector<ibv_sge> sges;
};

struct FQp {
  ibv_qp qp{};
  FContext* ctx = nullptr;
  FPd* pd = nullptr;
  FCq* scq = nullptr;
  FCq* rcq = nullptr;
  ibv_qp_cap cap{};
  bool sigAll = false;
  ibv_qp_state state = IBV_QPS_RESET;
  uint8_t port = 0;
  int access = 0;
  uint32_t remoteQpn = 0;
  ibv_ah_attr ah{};
  ibv_mtu pathMtu = IBV_MTU_256;
  std::deque<SendWr> sq;  // posted, not executed yet
  std::deque<RecvWr> rq;
  uint64_t nextSeq = 0;
  uint64_t retired = 0;                            // send-queue entries freed (all seq < retired)
  std::deque<std::pair<uint64_t, bool>> executed;  // executed, not retired: (seq, signaled)
  uint64_t bytesWritten = 0;
  uint64_t created = 0;
  bool executing = false;  // the wire thread is copying the first request's payload (it stays queued)

  uint64_t occupied() const { return nextSeq - retired; }
};

struct Fabric {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<FakeDevice> devices = defaultDevices();
  std::vector<std::unique_ptr<FDevice>> listed;  // owned by the fabric, never freed (lists point into it)
  int listErrno = 0;
  bool peermem = false;
  std::map<uint32_t, FQp*> qps;
  std::map<uint32_t, FMr*> mrs;  // by key (lkey == rkey)
  uint32_t nextQpn = 0x101;
  uint32_t nextKey = 0x2001;
  uint64_t qpCount = 0;
  Counters counters;
  std::vector<std::string> violations;
  std::mt19937 rng{20240917};
  bool wireStarted = false;
  bool copying = false;  // the wire thread copies a payload with the lock released
};

Fabric& fabric() {
  static Fabric* f = new Fabric;  // never destroyed: the wire thread may run while the process exits
  return *f;
}

void violation(Fabric& f, const std::string& what) {
  f.violations.push_back(what);
}

// Adds a completion to `cq`, raising an event when the CQ is armed for it.
void push(Fabric& f, FCq* cq, const Cqe& e, bool solicited) {
  if (static_cast<int>(cq->q.size()) >= cq->capacity) {
    if (!cq->overrun) violation(f, "CQ overrun: more than " + std::to_string(cq->capacity) + " completions");
    cq->overrun = true;
    return;
  }
  cq->q.push_back(e);
  bool fire =
      cq->armed == Armed::kAll || (cq->armed == Armed::kSolicited && (solicited || e.wc.status != IBV_WC_SUCCESS));
  if (fire && cq->channel != nullptr) {
    cq->armed = Armed::kNo;
    cq->channel->events.push_back(cq);
    const char b = 1;
    ssize_t w = write(cq->channel->writeFd, &b, 1);
    (void)w;
  }
}

void sendCompletion(Fabric& f, FQp* qp, const SendWr& w, ibv_wc_status status, ibv_wc_opcode op, uint32_t len,
                    bool force) {
  const bool signaled = qp->sigAll || (w.wr.send_flags & IBV_SEND_SIGNALED) != 0;
  qp->executed.emplace_back(w.seq, signaled || force);
  if (!signaled && !force) return;
  Cqe e;
  e.wc.wr_id = w.wr.wr_id;
  e.wc.status = status;
  e.wc.opcode = op;
  e.wc.byte_len = len;
  e.wc.qp_num = qp->qp.qp_num;
  e.sendSide = true;
  e.seq = w.seq;
  push(f, qp->scq, e, false);
}

void recvCompletion(Fabric& f, FQp* qp, uint64_t wrId, ibv_wc_status status, ibv_wc_opcode op, uint32_t len,
                    uint32_t srcQp, const uint32_t* imm, bool solicited) {
  Cqe e;
  e.wc.wr_id = wrId;
  e.wc.status = status;
  e.wc.opcode = op;
  e.wc.byte_len = len;
  e.wc.qp_num = qp->qp.qp_num;
  e.wc.src_qp = srcQp;
  if (imm != nullptr) {
    e.wc.imm_data = *imm;
    e.wc.wc_flags = IBV_WC_WITH_IMM;
  }
  push(f, qp->rcq, e, solicited);
}

// Moves `qp` to the error state: every outstanding work request completes with a flush error.
void toError(Fabric& f, FQp* qp) {
  if (qp->state == IBV_QPS_ERR) return;
  qp->state = IBV_QPS_ERR;
  qp->qp.state = IBV_QPS_ERR;
  // A request being executed completes (flushed) when its copy ends.
  const size_t keep = qp->executing ? 1 : 0;
  while (qp->sq.size() > keep) {
    SendWr w = qp->sq[keep];
    qp->sq.erase(qp->sq.begin() + static_cast<std::ptrdiff_t>(keep));
    sendCompletion(f, qp, w, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, 0, true);
  }
  while (!qp->rq.empty()) {
    recvCompletion(f, qp, qp->rq.front().wrId, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, 0, nullptr, false);
    qp->rq.pop_front();
  }
}

FQp* find(Fabric& f, uint32_t qpn) {
  auto it = f.qps.find(qpn);
  return it == f.qps.end() ? nullptr : it->second;
}

const FakePort& portOf(const FQp* qp) {
  return qp->ctx->dev->desc.ports[qp->port - 1];
}

// Whether the address vector of `from` (set at RTR) names the port and source GID of `to`.
bool addressed(const FQp* from, const FQp* to) {
  const FakePort& target = portOf(to);
  if (target.state != IBV_PORT_ACTIVE) return false;
  if (from->ah.is_global) {
    if (!to->ah.is_global) return false;
    const ibv_gid_entry& g = target.gids[to->ah.grh.sgid_index];
    return memcmp(g.gid.raw, from->ah.grh.dgid.raw, 16) == 0;
  }
  return target.linkLayer == IBV_LINK_LAYER_INFINIBAND && from->ah.dlid == target.lid;
}

// The MR with key `key` when [addr, addr + len) lies inside it, it belongs to `pd` and allows `access`.
FMr* region(Fabric& f, uint32_t key, uint64_t addr, uint64_t len, const FPd* pd, int access) {
  auto it = f.mrs.find(key);
  if (it == f.mrs.end()) return nullptr;
  FMr* mr = it->second;
  const auto base = reinterpret_cast<uint64_t>(mr->mr.addr);
  if (mr->mr.pd != &pd->pd || (mr->access & access) != access) return nullptr;
  if (addr < base || addr + len > base + mr->mr.length || addr + len < addr) return nullptr;
  return mr;
}

bool localSgesOk(Fabric& f, const FQp* qp, const std::vector<ibv_sge>& sges, int access) {
  for (const ibv_sge& s : sges) {
    if (s.length > 0 && region(f, s.lkey, s.addr, s.length, qp->pd, access) == nullptr) return false;
  }
  return true;
}

uint64_t total(const std::vector<ibv_sge>& sges) {
  uint64_t n = 0;
  for (const ibv_sge& s : sges) n += s.length;
  return n;
}

// The wire thread's copy of a payload, with the fabric's lock released (the memory is the users'; calls that
// free it, ibv_dereg_mr and ibv_destroy_qp, wait for the copy to end, as an HCA finishes its DMA first).
void copyUnlocked(std::unique_lock<std::mutex>& lock, FQp* qp, const std::vector<std::pair<void*, const void*>>& dst,
                  const std::vector<size_t>& len) {
  Fabric& f = fabric();
  f.copying = true;
  qp->executing = true;
  lock.unlock();
  for (size_t i = 0; i < dst.size(); ++i) memcpy(dst[i].first, dst[i].second, len[i]);
  lock.lock();
  qp->executing = false;
  f.copying = false;
  f.cv.notify_all();
}

// Gathers a send's payload (inline, or its SGEs) into one buffer.
std::vector<uint8_t> gather(const SendWr& w) {
  if (w.isInline) return w.inlineData;
  std::vector<uint8_t> out;
  for (const ibv_sge& s : w.sges) {
    const auto* p = reinterpret_cast<const uint8_t*>(s.addr);
    out.insert(out.end(), p, p + s.length);
  }
  return out;
}

enum class Step { kDone, kWait };

// Executes the first send work request of `qp` (RTS, non-empty send queue).
Step execute(std::unique_lock<std::mutex>& lock, FQp* qp) {
  Fabric& f = fabric();
  SendWr w = qp->sq.front();
  const ibv_wr_opcode op = w.wr.opcode;
  FQp* peer = find(f, qp->remoteQpn);
  auto fail = [&](ibv_wc_status status, FQp* alsoBroken) {
    qp->sq.pop_front();
    const ibv_wc_opcode wcOp = op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ
                               : op == IBV_WR_SEND    ? IBV_WC_SEND
                                                      : IBV_WC_RDMA_WRITE;
    sendCompletion(f, qp, w, status, wcOp, 0, true);
    toError(f, qp);
    if (alsoBroken != nullptr) toError(f, alsoBroken);
    return Step::kDone;
  };
  // A target that does not exist, is not connected to us or is in error never acknowledges.
  if (peer == nullptr || (peer->state != IBV_QPS_RTR && peer->state != IBV_QPS_RTS) ||
      peer->remoteQpn != qp->qp.qp_num || !addressed(qp, peer) || !addressed(peer, qp)) {
    return fail(IBV_WC_RETRY_EXC_ERR, nullptr);
  }
  const uint64_t len = w.isInline ? w.inlineData.size() : total(w.sges);
  if (!w.isInline && !localSgesOk(f, qp, w.sges, op == IBV_WR_RDMA_READ ? IBV_ACCESS_LOCAL_WRITE : 0)) {
    return fail(IBV_WC_LOC_PROT_ERR, nullptr);
  }
  if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM) {
    const uint64_t raddr = w.wr.wr.rdma.remote_addr;
    if (len > 0 && ((peer->access & IBV_ACCESS_REMOTE_WRITE) == 0 ||
                    region(f, w.wr.wr.rdma.rkey, raddr, len, peer->pd, IBV_ACCESS_REMOTE_WRITE) == nullptr)) {
      return fail(IBV_WC_REM_ACCESS_ERR, peer);
    }
    if (op == IBV_WR_RDMA_WRITE_WITH_IMM && peer->rq.empty()) return Step::kWait;  // receiver not ready
    std::vector<std::pair<void*, const void*>> dst;
    std::vector<size_t> lens;
    std::vector<uint8_t> inlineCopy = w.inlineData;
    uint64_t off = 0;
    if (w.isInline) {
      dst.emplace_back(reinterpret_cast<void*>(raddr), inlineCopy.data());
      lens.push_back(len);
    } else {
      for (const ibv_sge& s : w.sges) {
        dst.emplace_back(reinterpret_cast<void*>(raddr + off), reinterpret_cast<const void*>(s.addr));
        lens.push_back(s.length);
        off += s.length;
      }
    }
    const uint32_t self = qp->qp.qp_num, target = peer->qp.qp_num;
    copyUnlocked(lock, qp, dst, lens);
    peer = find(f, target);
    qp->sq.pop_front();
    if (qp->state == IBV_QPS_ERR) {  // moved to error during the copy
      sendCompletion(f, qp, w, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE, 0, true);
      return Step::kDone;
    }
    qp->bytesWritten += len;
    if (peer != nullptr && op == IBV_WR_RDMA_WRITE_WITH_IMM && peer->state != IBV_QPS_ERR && !peer->rq.empty()) {
      RecvWr r = peer->rq.front();
      peer->rq.pop_front();
      const uint32_t imm = w.wr.imm_data;
      recvCompletion(f, peer, r.wrId, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, static_cast<uint32_t>(len), self, &imm,
                     (w.wr.send_flags & IBV_SEND_SOLICITED) != 0);
      ++f.counters.writesWithImm;
    }
    sendCompletion(f, qp, w, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, static_cast<uint32_t>(len), false);
    return Step::kDone;
  }
  if (op == IBV_WR_SEND) {
    if (peer->rq.empty()) return Step::kWait;
    RecvWr r = peer->rq.front();
    if (len > total(r.sges)) {
      peer->rq.pop_front();
      recvCompletion(f, peer, r.wrId, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, qp->qp.qp_num, nullptr, false);
      return fail(IBV_WC_REM_INV_REQ_ERR, peer);
    }
    if (!localSgesOk(f, peer, r.sges, IBV_ACCESS_LOCAL_WRITE)) {
      peer->rq.pop_front();
      recvCompletion(f, peer, r.wrId, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, qp->qp.qp_num, nullptr, false);
      return fail(IBV_WC_REM_OP_ERR, peer);
    }
    peer->rq.pop_front();
    std::vector<uint8_t> payload = gather(w);
    uint64_t at = 0;
    for (const ibv_sge& s : r.sges) {
      const uint64_t n = std::min<uint64_t>(s.length, payload.size() - at);
      memcpy(reinterpret_cast<void*>(s.addr), payload.data() + at, n);
      at += n;
    }
    qp->sq.pop_front();
    recvCompletion(f, peer, r.wrId, IBV_WC_SUCCESS, IBV_WC_RECV, static_cast<uint32_t>(len), qp->qp.qp_num, nullptr,
                   (w.wr.send_flags & IBV_SEND_SOLICITED) != 0);
    ++f.counters.sends;
    sendCompletion(f, qp, w, IBV_WC_SUCCESS, IBV_WC_SEND, static_cast<uint32_t>(len), false);
    return Step::kDone;
  }
  // RDMA READ.
  const uint64_t raddr = w.wr.wr.rdma.remote_addr;
  FMr* src = region(f, w.wr.wr.rdma.rkey, raddr, len, peer->pd, IBV_ACCESS_REMOTE_READ);
  if (len > 0 && (src == nullptr || (peer->access & IBV_ACCESS_REMOTE_READ) == 0)) {
    return fail(IBV_WC_REM_ACCESS_ERR, peer);
  }
  uint64_t off = 0;
  for (const ibv_sge& s : w.sges) {
    memcpy(reinterpret_cast<void*>(s.addr), reinterpret_cast<const void*>(raddr + off), s.length);
    off += s.length;
  }
  qp->sq.pop_front();
  ++f.counters.reads;
  sendCompletion(f, qp, w, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, static_cast<uint32_t>(len), false);
  return Step::kDone;
}

// Whether `qp` has a send request the wire can execute now.
bool runnable(Fabric& f, const FQp* qp) {
  if (qp->state != IBV_QPS_RTS || qp->sq.empty()) return false;
  const ibv_wr_opcode op = qp->sq.front().wr.opcode;
  if (op != IBV_WR_SEND && op != IBV_WR_RDMA_WRITE_WITH_IMM) return true;
  const FQp* peer = f.qps.count(qp->remoteQpn) != 0 ? f.qps.at(qp->remoteQpn) : nullptr;
  return peer == nullptr || peer->state == IBV_QPS_ERR || peer->state < IBV_QPS_RTR || !peer->rq.empty() ||
         peer->remoteQpn != qp->qp.qp_num;
}

void wire() {
  Fabric& f = fabric();
  std::unique_lock<std::mutex> lock(f.mu);
  for (;;) {
    std::vector<FQp*> ready;
    for (auto& [qpn, qp] : f.qps) {
      if (runnable(f, qp)) ready.push_back(qp);
    }
    if (ready.empty()) {
      f.cv.wait(lock);
      continue;
    }
    FQp* qp = ready[std::uniform_int_distribution<size_t>(0, ready.size() - 1)(f.rng)];
    execute(lock, qp);
  }
}

void kick(Fabric& f) {
  if (!f.wireStarted) {
    f.wireStarted = true;
    std::thread(wire).detach();
  }
  f.cv.notify_all();
}

// ---- the verbs -------------------------------------------------------------------------------------------

ibv_device** getDeviceList(int* num) {
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  if (f.listErrno != 0) {
    errno = f.listErrno;
    return nullptr;
  }
  auto** list = new ibv_device*[f.devices.size() + 1];
  for (size_t i = 0; i < f.devices.size(); ++i) {
    auto d = std::make_unique<FDevice>();
    d->desc = f.devices[i];
    snprintf(d->dev.name, sizeof(d->dev.name), "%s", d->desc.name.c_str());
    list[i] = &d->dev;
    f.listed.push_back(std::move(d));
  }
  list[f.devices.size()] = nullptr;
  if (num != nullptr) *num = static_cast<int>(f.devices.size());
  return list;
}

void freeDeviceList(ibv_device** list) {
  delete[] list;
}

const char* getDeviceName(ibv_device* d) {
  return reinterpret_cast<FDevice*>(d)->desc.name.c_str();
}

ibv_context* openDevice(ibv_device* d) {
  auto* c = new FContext;
  c->dev = reinterpret_cast<FDevice*>(d);
  c->ctx.device = d;
  return &c->ctx;
}

int closeDevice(ibv_context* ctx) {
  delete reinterpret_cast<FContext*>(ctx);
  return 0;
}

int queryDevice(ibv_context* ctx, ibv_device_attr* attr) {
  const FDevice* d = reinterpret_cast<FContext*>(ctx)->dev;
  *attr = {};
  attr->phys_port_cnt = static_cast<uint8_t>(d->desc.ports.size());
  attr->max_qp = 1 << 16;
  attr->max_qp_wr = 1 << 14;
  attr->max_cqe = 1 << 20;
  attr->max_sge = 16;
  attr->node_guid = std::hash<std::string>()(d->desc.name);
  return 0;
}

int queryPort(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) {
  const FDevice* d = reinterpret_cast<FContext*>(ctx)->dev;
  if (port < 1 || port > d->desc.ports.size()) return EINVAL;
  const FakePort& p = d->desc.ports[port - 1];
  *attr = {};
  attr->state = p.state;
  attr->link_layer = p.linkLayer;
  attr->lid = p.lid;
  attr->active_mtu = p.mtu;
  attr->max_mtu = p.mtu;
  attr->gid_tbl_len = static_cast<int>(p.gids.size());
  attr->active_speed = 64;  // HDR, 50 Gb/s per lane
  attr->active_width = 2;   // 4x
  return 0;
}

int queryGidEntry(ibv_context* ctx, uint8_t port, int index, ibv_gid_entry* entry) {
  const FDevice* d = reinterpret_cast<FContext*>(ctx)->dev;
  if (port < 1 || port > d->desc.ports.size()) return EINVAL;
  const FakePort& p = d->desc.ports[port - 1];
  if (index < 0 || index >= static_cast<int>(p.gids.size())) return EINVAL;
  *entry = p.gids[index];
  entry->gid_index = static_cast<uint32_t>(index);
  entry->port_num = port;
  return 0;
}

ibv_pd* allocPd(ibv_context* ctx) {
  auto* pd = new FPd;
  pd->pd.context = ctx;
  return &pd->pd;
}

int deallocPd(ibv_pd* pd) {
  delete reinterpret_cast<FPd*>(pd);
  return 0;
}

ibv_mr* regMr(ibv_pd* pd, void* addr, size_t length, int access) {
  // The rules of the verbs API: remote write needs local write, an empty range is refused.
  if (addr == nullptr || length == 0 ||
      ((access & IBV_ACCESS_REMOTE_WRITE) != 0 && (access & IBV_ACCESS_LOCAL_WRITE) == 0)) {
    errno = EINVAL;
    return nullptr;
  }
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  auto* mr = new FMr;
  mr->mr.context = pd->context;
  mr->mr.pd = pd;
  mr->mr.addr = addr;
  mr->mr.length = length;
  mr->mr.lkey = mr->mr.rkey = f.nextKey++;
  mr->access = access;
  f.mrs[mr->mr.lkey] = mr;
  ++f.counters.regMr;
  return &mr->mr;
}

int deregMr(ibv_mr* m) {
  Fabric& f = fabric();
  std::unique_lock<std::mutex> lock(f.mu);
  f.cv.wait(lock, [&] { return !f.copying; });
  auto it = f.mrs.find(m->lkey);
  if (it == f.mrs.end() || &it->second->mr != m) {
    violation(f, "ibv_dereg_mr of an unknown MR");
    return EINVAL;
  }
  f.mrs.erase(it);
  ++f.counters.deregMr;
  delete reinterpret_cast<FMr*>(m);
  return 0;
}

ibv_comp_channel* createCompChannel(ibv_context* ctx) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return nullptr;
  fcntl(fds[1], F_SETFL, O_NONBLOCK);
  auto* ch = new FChannel;
  ch->ch.context = ctx;
  ch->ch.fd = fds[0];
  ch->writeFd = fds[1];
  return &ch->ch;
}

int destroyCompChannel(ibv_comp_channel* c) {
  auto* ch = reinterpret_cast<FChannel*>(c);
  close(ch->ch.fd);
  close(ch->writeFd);
  delete ch;
  return 0;
}

ibv_cq* createCq(ibv_context* ctx, int cqe, void* cqContext, ibv_comp_channel* channel, int) {
  if (cqe < 1) {
    errno = EINVAL;
    return nullptr;
  }
  auto* cq = new FCq;
  cq->cq.context = ctx;
  cq->cq.channel = channel;
  cq->cq.cq_context = cqContext;
  cq->cq.cqe = cqe;
  cq->capacity = cqe;
  cq->channel = reinterpret_cast<FChannel*>(channel);
  return &cq->cq;
}

int destroyCq(ibv_cq* c) {
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  auto* cq = reinterpret_cast<FCq*>(c);
  if (cq->users > 0) return EBUSY;
  if (cq->acked != cq->delivered) {
    violation(f, "ibv_destroy_cq with " + std::to_string(cq->delivered - cq->acked) +
                     " unacknowledged events (rdma-core waits forever)");
    return EBUSY;
  }
  if (cq->channel != nullptr) {
    std::erase(cq->channel->events, cq);
  }
  delete cq;
  return 0;
}

int reqNotifyCq(ibv_cq* c, int solicitedOnly) {
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  auto* cq = reinterpret_cast<FCq*>(c);
  if (cq->channel == nullptr) return EINVAL;
  if (cq->armed != Armed::kAll) cq->armed = solicitedOnly != 0 ? Armed::kSolicited : Armed::kAll;
  return 0;
}

int getCqEvent(ibv_comp_channel* c, ibv_cq** cqOut, void** ctxOut) {
  auto* ch = reinterpret_cast<FChannel*>(c);
  char b;
  if (read(ch->ch.fd, &b, 1) != 1) return -1;  // nothing (non-blocking), as rdma-core's read of the event fd
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  if (ch->events.empty()) {
    violation(f, "a completion event without a CQ");
    return -1;
  }
  FCq* cq = ch->events.front();
  ch->events.pop_front();
  ++cq->delivered;
  *cqOut = &cq->cq;
  *ctxOut = cq->cq.cq_context;
  return 0;
}

void ackCqEvents(ibv_cq* c, unsigned n) {
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  auto* cq = reinterpret_cast<FCq*>(c);
  cq->acked += n;
  if (cq->acked > cq->delivered) violation(f, "ibv_ack_cq_events of more events than were delivered");
}

int pollCq(ibv_cq* c, int num, ibv_wc* wc) {
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  auto* cq = reinterpret_cast<FCq*>(c);
  if (cq->overrun) return -1;
  int n = 0;
  while (n < num && !cq->q.empty()) {
    const Cqe e = cq->q.front();
    cq->q.pop_front();
    wc[n++] = e.wc;
    if (!e.sendSide) continue;
    // Polling a send completion frees its QP's send-queue slots up to it.
    if (FQp* qp = find(f, e.wc.qp_num)) {
      while (!qp->executed.empty() && qp->executed.front().first <= e.seq) qp->executed.pop_front();
      qp->retired = std::max(qp->retired, e.seq + 1);
    }
  }
  return n;
}

ibv_qp* createQp(ibv_pd* pd, ibv_qp_init_attr* init) {
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  if (init->qp_type != IBV_QPT_RC || init->send_cq == nullptr || init->recv_cq == nullptr ||
      init->cap.max_send_wr > (1u << 14) || init->cap.max_recv_wr > (1u << 14) || init->cap.max_send_sge > 16 ||
      init->cap.max_recv_sge > 16 || init->cap.max_inline_data > 256) {
    errno = EINVAL;
    return nullptr;
  }
  auto* qp = new FQp;
  qp->ctx = reinterpret_cast<FContext*>(pd->context);
  qp->pd = reinterpret_cast<FPd*>(pd);
  qp->scq = reinterpret_cast<FCq*>(init->send_cq);
  qp->rcq = reinterpret_cast<FCq*>(init->recv_cq);
  ++qp->scq->users;
  ++qp->rcq->users;
  qp->cap = init->cap;
  qp->sigAll = init->sq_sig_all != 0;
  qp->qp.context = pd->context;
  qp->qp.pd = pd;
  qp->qp.send_cq = init->send_cq;
  qp->qp.recv_cq = init->recv_cq;
  qp->qp.qp_type = IBV_QPT_RC;
  qp->qp.qp_num = f.nextQpn++;
  qp->qp.state = IBV_QPS_RESET;
  qp->created = f.qpCount++;
  f.qps[qp->qp.qp_num] = qp;
  return &qp->qp;
}

bool has(int mask, int bits) {
  return (mask & bits) == bits;
}

int modifyQp(ibv_qp* q, ibv_qp_attr* attr, int mask) {
  Fabric& f = fabric();
  std::unique_lock<std::mutex> lock(f.mu);
  FQp* qp = find(f, q->qp_num);
  if (qp == nullptr || (mask & IBV_QP_STATE) == 0) return EINVAL;
  const ibv_qp_state to = attr->qp_state;
  if (to == IBV_QPS_ERR) {
    toError(f, qp);
  } else if (to == IBV_QPS_RESET) {
    f.cv.wait(lock, [&] { return !f.copying; });
    qp->sq.clear();
    qp->rq.clear();
    qp->state = IBV_QPS_RESET;
  } else if (to == IBV_QPS_INIT && qp->state == IBV_QPS_RESET) {
    if (!has(mask, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) return EINVAL;
    if (attr->port_num < 1 || attr->port_num > qp->ctx->dev->desc.ports.size()) return EINVAL;
    qp->port = attr->port_num;
    qp->access = attr->qp_access_flags;
    qp->state = IBV_QPS_INIT;
  } else if (to == IBV_QPS_RTR && qp->state == IBV_QPS_INIT) {
    if (!has(mask, IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                       IBV_QP_MIN_RNR_TIMER)) {
      return EINVAL;
    }
    const FakePort& port = portOf(qp);
    if (attr->path_mtu > port.mtu || attr->ah_attr.port_num != qp->port) return EINVAL;
    if (port.linkLayer == IBV_LINK_LAYER_ETHERNET && !attr->ah_attr.is_global) return EINVAL;  // RoCE needs a GRH
    if (attr->ah_attr.is_global) {
      const uint8_t sgid = attr->ah_attr.grh.sgid_index;
      if (sgid >= port.gids.size() || netplugin::ib::gidEmpty(port.gids[sgid].gid)) return EINVAL;
    } else if (attr->ah_attr.dlid == 0) {
      return EINVAL;
    }
    qp->ah = attr->ah_attr;
    qp->pathMtu = attr->path_mtu;
    qp->remoteQpn = attr->dest_qp_num;
    qp->state = IBV_QPS_RTR;
  } else if (to == IBV_QPS_RTS && qp->state == IBV_QPS_RTR) {
    if (!has(mask, IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)) {
      return EINVAL;
    }
    qp->state = IBV_QPS_RTS;
  } else {
    return EINVAL;
  }
  q->state = qp->state;
  kick(f);
  return 0;
}

int destroyQp(ibv_qp* q) {
  Fabric& f = fabric();
  std::unique_lock<std::mutex> lock(f.mu);
  f.cv.wait(lock, [&] { return !f.copying; });
  FQp* qp = find(f, q->qp_num);
  if (qp == nullptr) return EINVAL;
  f.qps.erase(q->qp_num);
  --qp->scq->users;
  --qp->rcq->users;
  delete qp;
  kick(f);  // requesters that target it now fail
  return 0;
}

int postSend(ibv_qp* q, ibv_send_wr* wr, ibv_send_wr** bad) {
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  FQp* qp = find(f, q->qp_num);
  for (; wr != nullptr; wr = wr->next) {
    *bad = wr;
    if (qp == nullptr || qp->state < IBV_QPS_RTS) return EINVAL;
    const ibv_wr_opcode op = wr->opcode;
    if (op != IBV_WR_SEND && op != IBV_WR_RDMA_WRITE && op != IBV_WR_RDMA_WRITE_WITH_IMM && op != IBV_WR_RDMA_READ) {
      return EINVAL;
    }
    if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > qp->cap.max_send_sge) return EINVAL;
    if (qp->occupied() >= qp->cap.max_send_wr) return ENOMEM;
    SendWr w;
    w.wr = *wr;
    w.wr.next = nullptr;
    w.sges.assign(wr->sg_list, wr->sg_list + wr->num_sge);
    w.wr.sg_list = nullptr;
    if ((wr->send_flags & IBV_SEND_INLINE) != 0) {
      if (op == IBV_WR_RDMA_READ || total(w.sges) > qp->cap.max_inline_data) return EINVAL;
      w.isInline = true;
      for (const ibv_sge& s : w.sges) {
        const auto* p = reinterpret_cast<const uint8_t*>(s.addr);
        w.inlineData.insert(w.inlineData.end(), p, p + s.length);
      }
    }
    w.seq = qp->nextSeq++;
    if (qp->state == IBV_QPS_ERR) {
      sendCompletion(f, qp, w, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, 0, true);
      continue;
    }
    qp->sq.push_back(std::move(w));
  }
  *bad = nullptr;
  kick(f);
  return 0;
}

int postRecv(ibv_qp* q, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  FQp* qp = find(f, q->qp_num);
  for (; wr != nullptr; wr = wr->next) {
    *bad = wr;
    if (qp == nullptr || qp->state == IBV_QPS_RESET) return EINVAL;
    if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > qp->cap.max_recv_sge) return EINVAL;
    if (qp->rq.size() >= qp->cap.max_recv_wr) return ENOMEM;
    RecvWr r;
    r.wrId = wr->wr_id;
    r.sges.assign(wr->sg_list, wr->sg_list + wr->num_sge);
    if (qp->state == IBV_QPS_ERR) {
      recvCompletion(f, qp, r.wrId, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, 0, nullptr, false);
      continue;
    }
    qp->rq.push_back(std::move(r));
  }
  *bad = nullptr;
  kick(f);
  return 0;
}

const char* wcStatusStr(ibv_wc_status s) {
  switch (s) {
    case IBV_WC_SUCCESS: return "success";
    case IBV_WC_LOC_LEN_ERR: return "local length error";
    case IBV_WC_LOC_PROT_ERR: return "local protection error";
    case IBV_WC_WR_FLUSH_ERR: return "Work Request Flushed Error";
    case IBV_WC_REM_INV_REQ_ERR: return "remote invalid request error";
    case IBV_WC_REM_ACCESS_ERR: return "remote access error";
    case IBV_WC_REM_OP_ERR: return "remote operation error";
    case IBV_WC_RETRY_EXC_ERR: return "transport retry counter exceeded";
    default: return "unknown";
  }
}

bool peermemLoaded() {
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  return f.peermem;
}

ibv_gid_entry gidEntry(const char* text, uint32_t type) {
  ibv_gid_entry e{};
  inet_pton(AF_INET6, text, e.gid.raw);
  e.gid_type = type;
  return e;
}

}  // namespace

const netplugin::ib::IbVerbs& fakeVerbs() {
  static const netplugin::ib::IbVerbs table = [] {
    netplugin::ib::IbVerbs v{};
    v.getDeviceList = getDeviceList;
    v.freeDeviceList = freeDeviceList;
    v.getDeviceName = getDeviceName;
    v.openDevice = openDevice;
    v.closeDevice = closeDevice;
    v.queryDevice = queryDevice;
    v.queryPort = queryPort;
    v.queryGidEntry = queryGidEntry;
    v.allocPd = allocPd;
    v.deallocPd = deallocPd;
    v.regMr = regMr;
    v.regDmabufMr = nullptr;  // no dma-buf: GPU memory only through the peer-memory path (setPeermem)
    v.deregMr = deregMr;
    v.createCompChannel = createCompChannel;
    v.destroyCompChannel = destroyCompChannel;
    v.createCq = createCq;
    v.destroyCq = destroyCq;
    v.reqNotifyCq = reqNotifyCq;
    v.getCqEvent = getCqEvent;
    v.ackCqEvents = ackCqEvents;
    v.pollCq = pollCq;
    v.createQp = createQp;
    v.modifyQp = modifyQp;
    v.destroyQp = destroyQp;
    v.postSend = postSend;
    v.postRecv = postRecv;
    v.wcStatusStr = wcStatusStr;
    v.peermemLoaded = peermemLoaded;
    v.provider = "fake verbs (tests/net/ib)";
    return v;
  }();
  return table;
}

std::vector<FakeDevice> defaultDevices() {
  FakeDevice roce{"fake_0", {}};
  FakePort p;
  p.linkLayer = IBV_LINK_LAYER_ETHERNET;
  p.gids = {gidEntry("fe80::2:c9ff:fe00:1", IBV_GID_TYPE_ROCE_V1),
            gidEntry("fe80::2:c9ff:fe00:1", IBV_GID_TYPE_ROCE_V2), gidEntry("::ffff:10.0.0.1", IBV_GID_TYPE_ROCE_V1),
            gidEntry("::ffff:10.0.0.1", IBV_GID_TYPE_ROCE_V2)};
  roce.ports.push_back(p);
  FakeDevice ib{"fake_1", {}};
  FakePort up;
  up.linkLayer = IBV_LINK_LAYER_INFINIBAND;
  up.lid = 7;
  up.gids = {gidEntry("fe80::2:c9ff:fe00:7", IBV_GID_TYPE_IB)};
  FakePort down = up;
  down.state = IBV_PORT_DOWN;
  down.lid = 0;
  ib.ports = {up, down};
  return {roce, ib};
}

void setDevices(const std::vector<FakeDevice>& devices) {
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  f.devices = devices;
}

void setDeviceListErrno(int err) {
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  f.listErrno = err;
}

void setPeermem(bool loaded) {
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  f.peermem = loaded;
}

Counters counters() {
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  return f.counters;
}

std::vector<uint32_t> liveQps() {
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  std::vector<std::pair<uint64_t, uint32_t>> byAge;
  for (auto& [qpn, qp] : f.qps) byAge.emplace_back(qp->created, qpn);
  std::sort(byAge.begin(), byAge.end());
  std::vector<uint32_t> out;
  for (auto& [age, qpn] : byAge) out.push_back(qpn);
  return out;
}

uint32_t remoteOf(uint32_t qpn) {
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  FQp* qp = find(f, qpn);
  return qp == nullptr ? 0 : qp->remoteQpn;
}

uint64_t bytesWritten(uint32_t qpn) {
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  FQp* qp = find(f, qpn);
  return qp == nullptr ? 0 : qp->bytesWritten;
}

void moveToError(uint32_t qpn) {
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  if (FQp* qp = find(f, qpn)) {
    toError(f, qp);
    qp->qp.state = IBV_QPS_ERR;
  }
  kick(f);
}

std::vector<std::string> violations() {
  Fabric& f = fabric();
  std::lock_guard<std::mutex> lock(f.mu);
  return f.violations;
}

}  // namespace chorus::ibfake
