#include "transport/net/ib/comm.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace chorus::netplugin::ib {
namespace {

uint32_t randomPsn() {
  uint32_t r = 0;
  if (getrandom(&r, sizeof(r), 0) != static_cast<ssize_t>(sizeof(r))) r = static_cast<uint32_t>(getpid()) * 2654435761u;
  return r & 0xffffff;
}

}  // namespace

chorusNetResult_t Comm::breakWith(chorusNetResult_t code, const std::string& why) {
  if (broken == chorusNetSuccess) {
    broken = code;
    brokenWhy = why;
  }
  return code;
}

bool createResources(Comm* c, const IbPort* port, int nqps, std::string* why) {
  c->port = port;
  c->v = port->dev->verbs;
  const IbVerbs& v = *c->v;
  ibv_context* ctx = port->dev->ctx;
  c->wakeFd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (c->wakeFd < 0) {
    *why = std::string("eventfd: ") + strerror(errno);
    return false;
  }
  c->channel = v.createCompChannel(ctx);
  if (c->channel == nullptr) {
    *why = std::string("ibv_create_comp_channel: ") + strerror(errno);
    return false;
  }
  // test() drains the channel without waiting.
  fcntl(c->channel->fd, F_SETFL, fcntl(c->channel->fd, F_GETFL) | O_NONBLOCK);
  // Every request has at most one completion per QP; Cts receives (sender) or signaled Cts sends (receiver)
  // add at most one ring's worth.
  int cqe = 2 * kMaxRequests * nqps + 2 * kMaxRequests + 16;
  if (port->dev->attr.max_cqe > 0) cqe = std::min(cqe, port->dev->attr.max_cqe);
  c->cq = v.createCq(ctx, cqe, c, c->channel, 0);
  if (c->cq == nullptr) {
    *why = std::string("ibv_create_cq: ") + strerror(errno);
    return false;
  }
  c->psn = randomPsn();
  c->inlineCts = true;
  for (int i = 0; i < nqps; ++i) {
    bool inlineOk = false;
    ibv_qp* qp = createRcQp(*port, c->cq, 2 * kMaxRequests, kMaxRequests, &inlineOk, why);
    if (qp == nullptr) return false;
    c->qps.push_back(qp);
    c->inlineCts = c->inlineCts && inlineOk;
  }
  c->cts = std::make_unique<Cts[]>(kMaxRequests);
  c->ctsMr = v.regMr(port->dev->pd, c->cts.get(), sizeof(Cts) * kMaxRequests, IBV_ACCESS_LOCAL_WRITE);
  if (c->ctsMr == nullptr) {
    *why = std::string("ibv_reg_mr (Cts ring): ") + strerror(errno);
    return false;
  }
  return true;
}

void describe(const Comm& c, uint64_t token, ConnInfo* info) {
  *info = {};
  info->magic = kInfoMagic;
  info->nqps = static_cast<uint32_t>(c.qps.size());
  info->token = token;
  info->linkLayer = c.port->linkLayer;
  info->mtu = c.port->mtu;
  info->lid = c.port->lid;
  info->psn = c.psn;
  memcpy(info->gid, c.port->gid.raw, sizeof(info->gid));
  for (size_t i = 0; i < c.qps.size(); ++i) info->qpn[i] = c.qps[i]->qp_num;
}

bool connectQps(Comm* c, const ConnInfo& remote, const QpTiming& timing, std::string* why) {
  for (size_t i = 0; i < c->qps.size(); ++i) {
    if (!connectRcQp(*c->port, c->qps[i], remote, remote.qpn[i], c->psn, timing, why)) return false;
  }
  return true;
}

bool postCtsRecv(Comm* c, uint64_t index, std::string* why) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uintptr_t>(&c->cts[index]);
  sge.length = sizeof(Cts);
  sge.lkey = c->ctsMr->lkey;
  ibv_recv_wr wr{};
  wr.wr_id = wrId(WrKind::kCtsRecv, index);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  int err = c->v->postRecv(c->qps[0], &wr, &bad);
  if (err != 0) *why = std::string("ibv_post_recv (Cts): ") + strerror(err);
  return err == 0;
}

bool createFlushQp(Comm* c, const QpTiming& timing, std::string* why) {
  if (!c->port->gdr) return true;
  bool inlineOk = false;
  c->flushQp = createRcQp(*c->port, c->cq, kMaxRequests, 1, &inlineOk, why);
  if (c->flushQp == nullptr) return false;
  c->flushScratch = std::make_unique<uint64_t>(0);
  c->flushMr = c->v->regMr(c->port->dev->pd, c->flushScratch.get(), sizeof(uint64_t), IBV_ACCESS_LOCAL_WRITE);
  if (c->flushMr == nullptr) {
    *why = std::string("ibv_reg_mr (flush): ") + strerror(errno);
    return false;
  }
  ConnInfo self{};
  describe(*c, 0, &self);
  return connectRcQp(*c->port, c->flushQp, self, c->flushQp->qp_num, c->psn, timing, why);
}

void destroyComm(Comm* c) {
  if (c == nullptr) return;
  const IbVerbs* v = c->v;
  if (v != nullptr) {
    for (ibv_qp* qp : c->qps) v->destroyQp(qp);
    if (c->flushQp != nullptr) v->destroyQp(c->flushQp);
    if (c->cq != nullptr) {
      // Every event must be acknowledged before the CQ goes (ibv_destroy_cq would wait for it).
      ibv_cq* cq = nullptr;
      void* ctx = nullptr;
      while (c->channel != nullptr && v->getCqEvent(c->channel, &cq, &ctx) == 0) ++c->unackedEvents;
      if (c->unackedEvents > 0) v->ackCqEvents(c->cq, c->unackedEvents);
      v->destroyCq(c->cq);
    }
    if (c->channel != nullptr) v->destroyCompChannel(c->channel);
    if (c->ctsMr != nullptr) v->deregMr(c->ctsMr);
    if (c->flushMr != nullptr) v->deregMr(c->flushMr);
  }
  closeFd(&c->fd);
  closeFd(&c->wakeFd);
  delete c;
}

}  // namespace chorus::netplugin::ib
