#include "transport/net/ib/qp.h"

#include <cerrno>
#include <cstring>

namespace chorus::netplugin::ib {
namespace {

bool modify(const IbVerbs& v, ibv_qp* qp, ibv_qp_attr* attr, int mask, const char* to, std::string* why) {
  int err = v.modifyQp(qp, attr, mask);
  if (err == 0) return true;
  *why = std::string("ibv_modify_qp to ") + to + ": " + strerror(err);
  return false;
}

}  // namespace

ibv_qp* createRcQp(const IbPort& port, ibv_cq* cq, int sendDepth, int recvDepth, bool* inlineOk, std::string* why) {
  const IbVerbs& v = *port.dev->verbs;
  ibv_qp_init_attr init{};
  init.send_cq = cq;
  init.recv_cq = cq;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = static_cast<uint32_t>(sendDepth);
  init.cap.max_recv_wr = static_cast<uint32_t>(recvDepth);
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = kCtsInline;
  ibv_qp* qp = v.createQp(port.dev->pd, &init);
  *inlineOk = qp != nullptr && init.cap.max_inline_data >= sizeof(Cts);
  if (qp == nullptr) {
    init.cap.max_inline_data = 0;
    qp = v.createQp(port.dev->pd, &init);
  }
  if (qp == nullptr) {
    *why = std::string("ibv_create_qp: ") + strerror(errno);
    return nullptr;
  }
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = port.port;
  attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  if (!modify(v, qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "INIT", why)) {
    v.destroyQp(qp);
    return nullptr;
  }
  return qp;
}

bool connectRcQp(const IbPort& port, ibv_qp* qp, const ConnInfo& remote, uint32_t remoteQpn, uint32_t localPsn,
                 const QpTiming& timing, std::string* why) {
  const IbVerbs& v = *port.dev->verbs;
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = static_cast<ibv_mtu>(std::min(port.mtu, remote.mtu));
  attr.dest_qp_num = remoteQpn;
  attr.rq_psn = remote.psn;
  attr.max_dest_rd_atomic = 1;  // the GPU flush reads (one outstanding)
  attr.min_rnr_timer = 12;      // 0.64 ms
  attr.ah_attr.port_num = port.port;
  attr.ah_attr.sl = 0;
  attr.ah_attr.src_path_bits = 0;
  if (port.linkLayer == IBV_LINK_LAYER_ETHERNET || port.gidIndex >= 0) {
    attr.ah_attr.is_global = 1;
    memcpy(attr.ah_attr.grh.dgid.raw, remote.gid, sizeof(remote.gid));
    attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(port.gidIndex);
    attr.ah_attr.grh.hop_limit = 255;
    attr.ah_attr.grh.flow_label = 0;
    attr.ah_attr.grh.traffic_class = 0;
  }
  attr.ah_attr.dlid = remote.lid;
  if (!modify(v, qp, &attr,
              IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                  IBV_QP_MIN_RNR_TIMER,
              "RTR", why)) {
    return false;
  }
  attr = {};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = static_cast<uint8_t>(timing.timeout);
  attr.retry_cnt = static_cast<uint8_t>(timing.retryCnt);
  attr.rnr_retry = 7;  // retry forever when a receive is not posted yet (cannot happen: Cts comes first)
  attr.sq_psn = localPsn;
  attr.max_rd_atomic = 1;
  return modify(
      v, qp, &attr,
      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
      "RTS", why);
}

}  // namespace chorus::netplugin::ib
