// One collective or point-to-point operation as the API received it, plus the executor's decisions.
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

enum class Algo : int { kRing = 0, kTree = 1, kDirect = 2 };
const char* algoName(Algo a);

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
};

// Bytes that cross the busiest link per rank, for logs and tuning.
size_t collBytes(const CollOp& op, int nranks);

}  // namespace chorus::coll
