// Reliable-connected queue pairs of the ib plugin: creation and the state changes RESET -> INIT -> RTR -> RTS
// with the peer's address (wire.h's ConnInfo). InfiniBand ports are addressed by LID; RoCE ports by GID, in a
// global route header built from the chosen GID index (CHORUS_IB_GID_INDEX).
#pragma once

#include <string>

#include "transport/net/ib/devices.h"
#include "transport/net/ib/verbs.h"
#include "transport/net/ib/wire.h"

namespace chorus::netplugin::ib {

// The retransmission settings of every QP (CHORUS_IB_TIMEOUT, CHORUS_IB_RETRY_CNT).
struct QpTiming {
  int timeout = 20;  // 4.096 us * 2^timeout per try
  int retryCnt = 7;
};

// A new RC QP on `port`'s protection domain whose sends and receives complete on `cq`, moved to INIT with
// remote read and write allowed. Asks for kCtsInline bytes of inline data and falls back to none when the
// device refuses; *inlineOk says which. nullptr with *why on failure.
ibv_qp* createRcQp(const IbPort& port, ibv_cq* cq, int sendDepth, int recvDepth, bool* inlineOk, std::string* why);

// Moves `qp` to RTR then RTS, connected to QP number `remoteQpn` of the peer described by `remote` (whose
// packets start at remote.psn), sending from `localPsn`. false with *why on failure.
bool connectRcQp(const IbPort& port, ibv_qp* qp, const ConnInfo& remote, uint32_t remoteQpn, uint32_t localPsn,
                 const QpTiming& timing, std::string* why);

}  // namespace chorus::netplugin::ib
