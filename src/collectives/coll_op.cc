#include "collectives/coll_op.h"

namespace chorus::coll {

const char* collName(CollType t) {
  switch (t) {
    case CollType::kAllReduce: return "AllReduce";
    case CollType::kBroadcast: return "Broadcast";
    case CollType::kReduce: return "Reduce";
    case CollType::kAllGather: return "AllGather";
    case CollType::kReduceScatter: return "ReduceScatter";
    case CollType::kAllToAll: return "AlltoAll";
    case CollType::kGather: return "Gather";
    case CollType::kScatter: return "Scatter";
    case CollType::kSend: return "Send";
    case CollType::kRecv: return "Recv";
  }
  return "?";
}

const char* algoName(Algo a) {
  switch (a) {
    case Algo::kRing: return "Ring";
    case Algo::kTree: return "Tree";
    case Algo::kDirect: return "Direct";
  }
  return "?";
}

size_t collBytes(const CollOp& op, int nranks) {
  const size_t elt = reduce::dtypeSize(op.dtype);
  const size_t n = static_cast<size_t>(nranks);
  switch (op.type) {
    case CollType::kAllGather:
    case CollType::kReduceScatter:
    case CollType::kAllToAll:
    case CollType::kGather:
    case CollType::kScatter: return op.count * n * elt;
    default: return op.count * elt;
  }
}

}  // namespace chorus::coll
