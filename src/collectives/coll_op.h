// One collective or point-to-point operation as the API received it, plus the tuner's decisions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/reduce/reduce.h"

namespace chorus::coll {

enum class CollType : int {
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kGather,
  kScatter,
  kSend,
  kRecv,
};
const char* collName(CollType t);  // "AllReduce", ...
// True for the operations run as point-to-point transfers: all-to-all, gather, scatter, send and recv.
constexpr bool isP2p(CollType t) {
  return t == CollType::kAllToAll || t == CollType::kGather || t == CollType::kScatter || t == CollType::kSend ||
         t == CollType::kRecv;
}
// True for the collectives with a root: broadcast, reduce, gather, scatter.
constexpr bool isRooted(CollType t) {
  return t == CollType::kBroadcast || t == CollType::kReduce || t == CollType::kGather || t == CollType::kScatter;
}
// True for the collectives that apply a reduction operation: all-reduce, reduce, reduce-scatter.
constexpr bool isReduction(CollType t) {
  return t == CollType::kAllReduce || t == CollType::kReduce || t == CollType::kReduceScatter;
}
// True for send and recv: one peer, nothing to tune.
constexpr bool isSendRecv(CollType t) {
  return t == CollType::kSend || t == CollType::kRecv;
}

enum class Algo : int { kRing = 0, kTree = 1, kDirect = 2 };
const char* algoName(Algo a);
// True when an algorithm of collectives/algo implements `algo` for the collective `t` (ring: every ring-shaped
// collective; tree: all-reduce, broadcast, reduce; direct: all-reduce, broadcast, reduce, all-gather,
// reduce-scatter).
// False for the point-to-point operations, which are planned as transfers.
constexpr bool hasAlgorithm(CollType t, Algo algo) {
  switch (t) {
    case CollType::kAllReduce:
    case CollType::kBroadcast:
    case CollType::kReduce: return true;
    case CollType::kAllGather:
    case CollType::kReduceScatter: return algo != Algo::kTree;
    default: return false;
  }
}

struct CollOp {
  CollType type = CollType::kAllReduce;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  size_t count = 0;  // as the API call's count argument
  reduce::DType dtype = reduce::DType::kFloat32;
  reduce::Op op = reduce::Op::kSum;
  int root = 0;   // broadcast, reduce, gather, scatter
  int peer = -1;  // send, recv
  // PreMulSum (chorusRedOpCreatePreMulSum): `op` is kSum, and every rank's input is multiplied by a scalar of
  // `dtype` first: preMulBits, or the value at preMulAt (read when the operation runs) when that is set. The
  // core applies it before an executor sees the operation.
  bool preMulSum = false;
  uint64_t preMulBits = 0;
  const void* preMulAt = nullptr;
  // Decided at enqueue time (tuning):
  Algo algo = Algo::kRing;
  int nChannels = 1;
  size_t chunkBytes = 0;
  // The core's flight-recorder number of the operation (core/flight_recorder.h); executors ignore it.
  uint64_t recordSeq = 0;
};

// Bytes that cross the busiest link per rank, for logs and tuning.
size_t collBytes(const CollOp& op, int nranks);

// A field added to CollOp must be compared below (or named as ignored): this fails until it is looked at.
static_assert(sizeof(CollOp) == 96, "compare the new field of CollOp in sameButBuffers");

// True when a and b are the same operation tuned alike, on buffers that may differ: equal in every field but
// sendbuff, recvbuff and the flight recorder's number (plan/plan_reuse.h). Inline: every call on a memoised plan
// compares its operations with the plan's.
inline bool sameButBuffers(const CollOp& a, const CollOp& b) {
  return a.type == b.type && a.count == b.count && a.dtype == b.dtype && a.op == b.op && a.root == b.root &&
         a.peer == b.peer && a.preMulSum == b.preMulSum && a.preMulBits == b.preMulBits && a.preMulAt == b.preMulAt &&
         a.algo == b.algo && a.nChannels == b.nChannels && a.chunkBytes == b.chunkBytes;
}

}  // namespace chorus::coll
