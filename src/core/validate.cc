#include "core/validate.h"

#include <cstdint>

#include "base/byte_range.h"
#include "base/error.h"
#include "chorus_build_config.h"
#include "core/comm.h"
#if CHORUS_BUILD_CUDA
#include "transport/cuda/cuda_util.h"
#endif

namespace chorus::core {

void throwBadDType(int t) {
  CHORUS_THROW(Status::kInvalidArgument, "datatype ", t, " is not a chorusDataType_t (0..", chorusNumTypes - 1, ")");
}

reduce::Op toOp(int op) {
  CHORUS_CHECK_ARG(op >= 0 && op < chorusNumOps, "op ", op, " is not a chorusRedOp_t (0..", chorusNumOps - 1, ")");
  return static_cast<reduce::Op>(op);
}

namespace {

// Rejects buffers that overlap unless they are exactly NCCL's in-place layout (input at `inPlaceInput`).
void checkOverlap(const coll::CollOp& op, size_t inBytes, size_t outBytes, const void* inPlaceInput) {
  if (op.sendbuff == inPlaceInput) return;
  CHORUS_CHECK_ARG(!overlaps(op.sendbuff, inBytes, op.recvbuff, outBytes), coll::collName(op.type),
                   ": sendbuff and recvbuff overlap but are not the in-place layout (",
                   op.type == coll::CollType::kAllGather       ? "sendbuff == recvbuff + rank*sendcount"
                   : op.type == coll::CollType::kReduceScatter ? "recvbuff == sendbuff + rank*recvcount"
                   : op.type == coll::CollType::kGather        ? "sendbuff == recvbuff + root*sendcount"
                   : op.type == coll::CollType::kScatter       ? "recvbuff == sendbuff + root*recvcount"
                                                               : "sendbuff == recvbuff",
                   ")");
}

}  // namespace

void validateOp(const Comm& comm, const coll::CollOp& op) {
  const int n = comm.nranks();
  const int me = comm.rank();
  const size_t elt = reduce::dtypeSize(op.dtype);
  // Multiplications that report overflow, not divisions: two divisions were most of this function, 8 % of a
  // one-rank 8-byte all-reduce (perf).
  size_t bytes = 0;
  size_t allRanks = 0;
  CHORUS_CHECK_ARG(!__builtin_mul_overflow(op.count, elt, &bytes) &&
                       !__builtin_mul_overflow(bytes, static_cast<size_t>(n), &allRanks),
                   coll::collName(op.type), ": count ", op.count, " is too large (its size in bytes overflows)");
  if (coll::isRooted(op.type)) {
    CHORUS_CHECK_ARG(op.root >= 0 && op.root < n, coll::collName(op.type), ": root ", op.root,
                     " is outside [0, nranks=", n, ")");
  }
  if (coll::isSendRecv(op.type)) {
    CHORUS_CHECK_ARG(op.peer >= 0 && op.peer < n, coll::collName(op.type), ": peer ", op.peer,
                     " is outside [0, nranks=", n, ")");
  }
  // Which buffers this rank reads and writes, and how many bytes of each.
  size_t in = 0, out = 0;
  const char* inPlace = static_cast<const char*>(op.recvbuff);
  switch (op.type) {
    case coll::CollType::kAllReduce: in = out = bytes; break;
    case coll::CollType::kBroadcast:
      in = me == op.root ? bytes : 0;
      out = bytes;
      break;
    case coll::CollType::kReduce:
      in = bytes;
      out = me == op.root ? bytes : 0;
      break;
    case coll::CollType::kAllGather:
      in = bytes;
      out = bytes * n;
      inPlace = static_cast<const char*>(op.recvbuff) + me * bytes;
      break;
    case coll::CollType::kReduceScatter:
      in = bytes * n;
      out = bytes;
      // In place when recvbuff == sendbuff + rank*recvcount, i.e. sendbuff == recvbuff - rank*recvcount.
      inPlace = static_cast<const char*>(op.recvbuff) - me * bytes;
      break;
    case coll::CollType::kAllToAll: in = out = bytes * n; break;
    case coll::CollType::kGather:
      in = bytes;
      out = me == op.root ? bytes * n : 0;
      inPlace = static_cast<const char*>(op.recvbuff) + op.root * bytes;
      break;
    case coll::CollType::kScatter:
      in = me == op.root ? bytes * n : 0;
      out = bytes;
      inPlace = static_cast<const char*>(op.recvbuff) - op.root * bytes;
      break;
    case coll::CollType::kSend: in = bytes; break;
    case coll::CollType::kRecv: out = bytes; break;
  }
  CHORUS_CHECK_ARG(in == 0 || op.sendbuff != nullptr, coll::collName(op.type), ": sendbuff is NULL but count is ",
                   op.count);
  CHORUS_CHECK_ARG(out == 0 || op.recvbuff != nullptr, coll::collName(op.type), ": recvbuff is NULL but count is ",
                   op.count);
  if (in > 0 && out > 0) checkOverlap(op, in, out, inPlace);
#if CHORUS_BUILD_CUDA  // device buffers on CUDA comms, host buffers on host comms
  if (comm.device() >= 0 || transport::cuda::visibleDevices() > 0) {
    const std::string what = std::string(coll::collName(op.type)) + ": ";
    transport::cuda::checkBufferPlacement(op.sendbuff, in, comm.device(), (what + "sendbuff").c_str());
    transport::cuda::checkBufferPlacement(op.recvbuff, out, comm.device(), (what + "recvbuff").c_str());
  }
#endif
}

}  // namespace chorus::core
