#include "collectives/host/host_executor.h"

#include "collectives/slot_tag.h"

#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

#include "base/byte_range.h"
#include "base/error.h"
#include "base/shared_alloc.h"
#include "collectives/algo/direct.h"
#include "collectives/algo/ring_allgather.h"
#include "collectives/algo/ring_allreduce.h"
#include "collectives/algo/ring_broadcast.h"
#include "collectives/algo/ring_reduce.h"
#include "collectives/algo/ring_reducescatter.h"
#include "collectives/algo/tree_allreduce.h"
#include "collectives/algo/tree_broadcast.h"
#include "collectives/algo/tree_reduce.h"
#include "collectives/host/host_prims.h"
#include "collectives/host/p2p_engine.h"
#include "collectives/host/ref_ledger.h"
#include "collectives/host/slot_store_choice.h"
#include "collectives/tuning.h"

namespace chorus::coll {

namespace {

// The peers of `s` on `lane`, for elements of `eltSize` bytes.
PrimsPeers lookUp(const PeerSet& s, int lane, ConnectionProvider* conns, size_t eltSize) {
  transport::RecvConnection* recv[kMaxRecvPeers] = {};
  transport::SendConnection* send[kMaxSendPeers] = {};
  for (int i = 0; i < s.nrecv; ++i) recv[i] = conns->recvConn(s.recv[i], lane);
  for (int i = 0; i < s.nsend; ++i) send[i] = conns->sendConn(s.send[i], lane);
  return PrimsPeers::over(recv, s.nrecv, send, s.nsend, eltSize);
}

// The direct algorithms' peer set (primitives.h): rank r's Primitives on lane 0, with the directions to and from
// r that the operation carries data in (directCarries, plan.h: only those are connected). Each is made on first
// use and kept for the rest of the operation (a direct algorithm asks for most peers twice: to send, then to fold
// in what arrives), in storage that is not initialized until then.
class HostDirectPeers {
 public:
  HostDirectPeers(const CollOp& op, const HostPrimsConfig& cfg, const HostPrimsConfig& own, const ExecEnv& env)
      : op_(op), cfg_(cfg), own_(own), env_(env) {}
  HostDirectPeers(const HostDirectPeers&) = delete;
  HostDirectPeers& operator=(const HostDirectPeers&) = delete;

  HostPrims& peer(int r) {
    auto* p = reinterpret_cast<HostPrims*>(storage_[r]);
    if ((made_ >> r & 1) == 0) {
      auto* peers = reinterpret_cast<PrimsPeers*>(peerStorage_[r]);
      if (r == env_.rank) {
        new (peers) PrimsPeers();
        new (p) HostPrims(own_, *peers);
      } else {
        const bool in = directCarries(op_.type, op_.root, r, env_.rank);
        const bool out = directCarries(op_.type, op_.root, env_.rank, r);
        transport::RecvConnection* recv = in ? env_.conns->recvConn(r, 0) : nullptr;
        transport::SendConnection* send = out ? env_.conns->sendConn(r, 0) : nullptr;
        new (peers) PrimsPeers(PrimsPeers::over(&recv, in ? 1 : 0, &send, out ? 1 : 0, cfg_.eltSize));
        new (p) HostPrims(cfg_, *peers);
      }
      made_ |= uint64_t{1} << r;
    }
    return *p;
  }

 private:
  static_assert(std::is_trivially_destructible_v<HostPrims> && std::is_trivially_destructible_v<PrimsPeers>,
                "kept HostPrims and their peers are never destroyed");
  static_assert(kMaxDirectRanks <= 64, "one bit of made_ per rank");
  const CollOp& op_;
  const HostPrimsConfig& cfg_;
  const HostPrimsConfig& own_;
  const ExecEnv& env_;
  uint64_t made_ = 0;
  alignas(HostPrims) unsigned char storage_[kMaxDirectRanks][sizeof(HostPrims)];
  alignas(PrimsPeers) unsigned char peerStorage_[kMaxDirectRanks][sizeof(PrimsPeers)];
};

// The bytes of this rank's input and output for the operation.
size_t inputBytes(const CollPlan& c, int nranks) {
  const size_t block = c.op.count * c.eltSize;
  return c.op.type == CollType::kReduceScatter ? block * static_cast<size_t>(nranks) : block;
}
size_t outputBytes(const CollPlan& c, int nranks) {
  const size_t block = c.op.count * c.eltSize;
  return c.op.type == CollType::kAllGather ? block * static_cast<size_t>(nranks) : block;
}

// Whether the operation's input and output regions overlap (nccl-tests' and NCCL's in place).
bool inPlace(const CollPlan& c, int nranks) {
  return overlaps(c.op.sendbuff, inputBytes(c, nranks), c.op.recvbuff, outputBytes(c, nranks));
}

// Whether the input or the output begins in a chorusMemAlloc allocation (one atomic load when there is none); which
// references may go by mapping is decided per call of the primitives (host_prims.h, mappedRefsOnly).
bool touchesSharedAlloc(const CollPlan& c) {
  return findSharedAlloc(c.op.sendbuff, 1) || findSharedAlloc(c.op.recvbuff, 1);
}

// Whether `c` writes memory its input occupies before the peers it sent that input to are known to have read it:
// a direct reduction folds what arrives into its output while its peers may not have folded in its own input yet.
// (Ring and tree algorithms write an input region they sent only after a result that depends on it came back; a
// direct reduce's root sends nothing and its other ranks write nothing.) Such an input must not be sent as a remote
// reference. `inPlaceOp`: inPlace(c, nranks).
bool writesInputEarly(const CollPlan& c, bool inPlaceOp) {
  const CollOp& op = c.op;
  return op.algo == Algo::kDirect && (op.type == CollType::kAllReduce || op.type == CollType::kReduceScatter) &&
         inPlaceOp;
}

// The setup of `c` on this rank (host_executor.h).
CollSetup setUp(const CollPlan& c, const ExecEnv& env) {
  const CollOp& op = c.op;
  CollSetup s;
  s.tagBase = slotTag(op, 0);
  // A broadcast or an all-gather only copies: its primitives never reduce or scale (compute, host_prims.cc).
  if (isReduction(op.type) || c.premul != 1.0 || c.postDiv != 1) s.kernels = &reduce::kernels(op.dtype, op.op);
  // A broadcast's input is read on its root alone, and a reduce's output written there alone.
  const bool root = env.rank == op.root;
  const size_t in = op.type == CollType::kBroadcast && !root ? 0 : inputBytes(c, env.nranks);
  const size_t out = op.type == CollType::kReduce && !root ? 0 : outputBytes(c, env.nranks);
  const bool inPlaceOp = inPlace(c, env.nranks);
  s.footprint = footprintBytes(in, out, inPlaceOp);
  s.nonTemporalOutput = streamsOutput(s.footprint, env.topo->streamMinBytes);
  const bool toPeers = env.nranks > 1;
  s.singleCopy = toPeers && useSingleCopy(op.type, c.bytes);
  s.mappedRefsIfShared = toPeers && !s.singleCopy && useMappedRefs(op.type, c.bytes, inPlaceOp);
  s.inputRefs = !writesInputEarly(c, inPlaceOp);
  if (op.algo != Algo::kDirect) {
    for (int ch = 0; ch < op.nChannels; ++ch) {
      s.up.push_back(lookUp(c.channels[ch].up, ch, env.conns, c.eltSize));
      if (op.algo == Algo::kTree) s.down.push_back(lookUp(c.channels[ch].down, ch, env.conns, c.eltSize));
    }
  }
  return s;
}

void runAlgorithm(const CollPlan& c, const CollSetup& s, const std::vector<const void*>& copies, const ExecEnv& env,
                  const HostPrimsConfig& cfg) {
  const CollOp& op = c.op;
  CollArgs a = c.args;
  if (op.algo == Algo::kDirect) {
    HostPrimsConfig own = cfg;
    if (c.ownInputCopy >= 0) own.input = copies[static_cast<size_t>(c.ownInputCopy)];
    HostDirectPeers d(op, cfg, own, env);
    switch (op.type) {
      case CollType::kAllReduce: runDirectAllReduce(d, a); break;
      case CollType::kReduceScatter: runDirectReduceScatter(d, a); break;
      case CollType::kAllGather: runDirectAllGather(d, a); break;
      case CollType::kBroadcast: runDirectBroadcast(d, a); break;
      case CollType::kReduce: runDirectReduce(d, a); break;
      default: CHORUS_THROW(Status::kInternalError, "no direct algorithm for ", collName(op.type));
    }
    return;
  }
  for (int ch = 0; ch < op.nChannels; ++ch) {
    const ChannelPlan& w = c.channels[ch];
    a.channel = ch;
    if (op.algo == Algo::kTree) {
      a.treeParent = w.treeParent;
      a.treeNChildren = w.treeNChildren;
      HostPrims up(cfg, s.up[ch]);
      HostPrims down(cfg, s.down[ch]);
      switch (op.type) {
        case CollType::kAllReduce: runTreeAllReduce(up, down, a); break;
        case CollType::kBroadcast: runTreeBroadcast(down, a); break;
        case CollType::kReduce: runTreeReduce(up, a); break;
        default: CHORUS_THROW(Status::kInternalError, "no tree algorithm for ", collName(op.type));
      }
      continue;
    }
    a.ring = env.topo->rings[ch].data();
    a.ringIndex = w.ringIndex;
    HostPrims p(cfg, s.up[ch]);
    switch (op.type) {
      case CollType::kAllReduce: runRingAllReduce(p, a); break;
      case CollType::kBroadcast: runRingBroadcast(p, a); break;
      case CollType::kReduce: runRingReduce(p, a); break;
      case CollType::kAllGather: runRingAllGather(p, a); break;
      case CollType::kReduceScatter: runRingReduceScatter(p, a); break;
      default: CHORUS_THROW(Status::kInternalError, "no ring algorithm for ", collName(op.type));
    }
  }
}

// runCollective's single-copy case: references go out, and the operation ends when the receivers have freed them.
void runWithRefs(const CollPlan& c, const std::vector<const void*>& copies, const ExecEnv& env, const CollSetup& s,
                 HostPrimsConfig& cfg) {
  thread_local RefLedger ledger;
  RefLedger::Scope scope(ledger);
  cfg.inputRefs = s.inputRefs;
  cfg.ledger = &ledger;
  runAlgorithm(c, s, copies, env, cfg);
  // Receivers read this rank's buffers until they free the references: the operation ends after that.
  if (!ledger.empty()) ledger.drain(*env.ctx);
}

void runCollective(const CollPlan& c, const CollSetup& s, const std::vector<const void*>& copies, const ExecEnv& env,
                   uint32_t seq) {
  const CollOp& op = c.op;
  HostPrimsConfig cfg;
  cfg.slotTag = slotTagOfCall(s.tagBase, seq);
  cfg.input = op.sendbuff;
  cfg.output = op.recvbuff;
  cfg.eltSize = c.eltSize;
  cfg.kernels = s.kernels;
  cfg.premul.premul = c.premul;
  cfg.postDiv = c.postDiv;
  cfg.nonTemporalOutput = s.nonTemporalOutput;
  cfg.ctx = env.ctx;
  // The registry is looked up last: with allocations registered it takes a lock, which small operations must not pay.
  cfg.singleCopy = s.singleCopy || (s.mappedRefsIfShared && touchesSharedAlloc(c));
  cfg.mappedRefsOnly = cfg.singleCopy && !s.singleCopy;
  SlotStoreDecision slots(*env.topo, env.nranks > 1, op.type, s.footprint);
  cfg.nonTemporalSlots = slots.streamed();
  if (cfg.singleCopy) {
    runWithRefs(c, copies, env, s, cfg);
  } else {
    runAlgorithm(c, s, copies, env, cfg);
  }
  slots.finish();
}

}  // namespace

void runPlan(const Plan& plan, const ExecEnv& env, PlanSetup* setup) {
  if (!setup->made) {
    setup->colls.clear();
    for (const CollPlan& c : plan.colls) setup->colls.push_back(setUp(c, env));
    setup->made = true;
  }
  const std::vector<CollSetup>& setups = setup->colls;
  if (plan.staging.empty()) {  // the common case: nothing to copy first
    static const std::vector<const void*> none;
    for (size_t i = 0; i < plan.colls.size(); ++i) runCollective(plan.colls[i], setups[i], none, env, env.firstSeq + i);
    if (plan.hasP2p()) runP2p(plan, none, env);
    return;
  }
  // Staging copies, kept per thread with their capacity: a fresh buffer per call would fault in every page of
  // it each time (a 128 MiB in-place all-to-all ran at a third of the out-of-place speed). The memory stays with
  // the thread, up to the largest copies it made.
  thread_local std::vector<std::vector<char>> scratch;
  thread_local std::vector<const void*> copies;
  if (scratch.size() < plan.staging.size()) scratch.resize(plan.staging.size());
  copies.assign(plan.staging.size(), nullptr);
  size_t staged = 0;
  auto stageUpTo = [&](size_t before) {
    for (; staged < plan.staging.size() && plan.staging[staged].before <= before; ++staged) {
      const Staging& s = plan.staging[staged];
      std::vector<char>& buf = scratch[staged];
      if (buf.size() < s.size) buf.resize(s.size);
      memcpy(buf.data() + s.offset, static_cast<const char*>(s.base) + s.offset, s.bytes);
      copies[staged] = buf.data();
    }
  };
  for (size_t i = 0; i < plan.colls.size(); ++i) {
    stageUpTo(i);
    runCollective(plan.colls[i], setups[i], copies, env, env.firstSeq + i);
  }
  stageUpTo(plan.colls.size());
  if (plan.hasP2p()) runP2p(plan, copies, env);
}

}  // namespace chorus::coll
