// C API: the collectives, send/recv, and groups.
#include <algorithm>
#include <cstring>
#include <string>

#include "chorus/chorus.h"
#include "collectives/tuning.h"
#include "core/api_guard.h"
#include "core/comm.h"
#include "core/group.h"
#include "core/host_stream.h"
#include "core/red_ops.h"
#include "core/validate.h"

using chorus::Status;
using chorus::coll::CollOp;
using chorus::coll::CollType;
using chorus::core::Comm;

namespace {

// Validates, tunes and submits one operation: `op` as the call gave it (completed here), with the raw datatype
// and reduction arguments (converted here, once the communicator is known: an op of chorusRedOpCreatePreMulSum
// belongs to it). Inside a group, an error is also kept for chorusGroupEnd.
chorusResult_t enqueue(const char* api, chorusComm_t handle, chorusStream_t stream, CollOp& op, int datatype,
                       int redop) {
  // Checks first, while the caller's handle is certainly alive: their errors are recorded in the comm.
  Comm* comm = nullptr;
  chorus::core::CallStream s;
  chorusResult_t rc = chorus::core::apiGuard(api, nullptr, [&] {
    comm = chorus::core::checkComm(handle);
    op.dtype = chorus::core::toDType(datatype);
    chorus::core::resolveRedOp(*comm, redop, &op);
    Status init = comm->initResult();
    CHORUS_CHECK_USAGE(init != Status::kInProgress,
                       "the communicator is still being created (non-blocking init): poll chorusCommGetAsyncError");
    CHORUS_CHECK_USAGE(init == Status::kSuccess, "the communicator failed to initialize");
    CHORUS_CHECK_USAGE(!comm->revoked(),
                       "the communicator was revoked (chorusCommRevoke): shrink it (chorusCommShrink) or destroy it");
    CHORUS_CHECK_USAGE(!comm->aborted(), "the communicator was aborted");
    // A CUDA communicator's stream is a cudaStream_t, carried through to the device launch untouched; a host
    // communicator's must be a live host stream.
    if (comm->device() >= 0) {
      s.cuda = stream;
    } else {
      s.host = chorus::core::checkStream(stream);
    }
    chorus::core::validateOp(*comm, op);
    if (!chorus::coll::isSendRecv(op.type)) chorus::coll::tune(op, comm->tuning());
    return chorusSuccess;
  });
  // A collective of no elements moves nothing and every rank passes the same count: it ends here, checked, as
  // NCCL discards it (a launch would cost a few tenths of a microsecond for nothing). Send and receive of none
  // still run (they match a peer's call), and so does everything under CHORUS_CHECK, which compares the calls.
  if (rc == chorusSuccess && op.count == 0 && !chorus::coll::isSendRecv(op.type) && !comm->options().checkMode) {
    return chorusSuccess;
  }
  if (rc == chorusSuccess) {
    // The communicator is not touched after the launch: a chorusCommAbort from another thread may free it
    // as soon as the launch returns. Failures during execution were recorded in it by the launch.
    rc = chorus::core::apiGuard(api, nullptr, [&] {
      chorus::core::submit(comm, s, op);
      return chorusSuccess;
    });
  }
  if (rc != chorusSuccess) chorus::core::recordGroupError(static_cast<Status>(rc), chorus::core::threadLastError());
  return rc;
}

// Builds an operation from a call's arguments. `datatype` and `redop` are the raw integers the caller passed
// (see enumBits); operations without a reduction pass chorusSum.
chorusResult_t makeAndEnqueue(const char* api, CollType type, const void* sendbuff, void* recvbuff, size_t count,
                              int datatype, int redop, int root, int peer, chorusComm_t comm, chorusStream_t stream) {
  CollOp op;
  op.type = type;
  op.sendbuff = sendbuff;
  op.recvbuff = recvbuff;
  op.count = count;
  op.root = root;
  op.peer = peer;
  return enqueue(api, comm, stream, op, datatype, redop);
}

}  // namespace

extern "C" {

chorusResult_t chorusAllReduce(const void* sendbuff, void* recvbuff, size_t count, chorusDataType_t datatype,
                               chorusRedOp_t op, chorusComm_t comm, chorusStream_t stream) {
  return makeAndEnqueue("chorusAllReduce", CollType::kAllReduce, sendbuff, recvbuff, count,
                        chorus::core::enumBits(datatype), chorus::core::enumBits(op), 0, -1, comm, stream);
}

chorusResult_t chorusBroadcast(const void* sendbuff, void* recvbuff, size_t count, chorusDataType_t datatype, int root,
                               chorusComm_t comm, chorusStream_t stream) {
  return makeAndEnqueue("chorusBroadcast", CollType::kBroadcast, sendbuff, recvbuff, count,
                        chorus::core::enumBits(datatype), chorusSum, root, -1, comm, stream);
}

chorusResult_t chorusBcast(void* buff, size_t count, chorusDataType_t datatype, int root, chorusComm_t comm,
                           chorusStream_t stream) {
  return makeAndEnqueue("chorusBcast", CollType::kBroadcast, buff, buff, count, chorus::core::enumBits(datatype),
                        chorusSum, root, -1, comm, stream);
}

chorusResult_t chorusReduce(const void* sendbuff, void* recvbuff, size_t count, chorusDataType_t datatype,
                            chorusRedOp_t op, int root, chorusComm_t comm, chorusStream_t stream) {
  return makeAndEnqueue("chorusReduce", CollType::kReduce, sendbuff, recvbuff, count, chorus::core::enumBits(datatype),
                        chorus::core::enumBits(op), root, -1, comm, stream);
}

chorusResult_t chorusAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, chorusDataType_t datatype,
                               chorusComm_t comm, chorusStream_t stream) {
  return makeAndEnqueue("chorusAllGather", CollType::kAllGather, sendbuff, recvbuff, sendcount,
                        chorus::core::enumBits(datatype), chorusSum, 0, -1, comm, stream);
}

chorusResult_t chorusReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, chorusDataType_t datatype,
                                   chorusRedOp_t op, chorusComm_t comm, chorusStream_t stream) {
  return makeAndEnqueue("chorusReduceScatter", CollType::kReduceScatter, sendbuff, recvbuff, recvcount,
                        chorus::core::enumBits(datatype), chorus::core::enumBits(op), 0, -1, comm, stream);
}

chorusResult_t chorusAlltoAll(const void* sendbuff, void* recvbuff, size_t count, chorusDataType_t datatype,
                              chorusComm_t comm, chorusStream_t stream) {
  return makeAndEnqueue("chorusAlltoAll", CollType::kAllToAll, sendbuff, recvbuff, count,
                        chorus::core::enumBits(datatype), chorusSum, 0, -1, comm, stream);
}

chorusResult_t chorusGather(const void* sendbuff, void* recvbuff, size_t sendcount, chorusDataType_t datatype, int root,
                            chorusComm_t comm, chorusStream_t stream) {
  return makeAndEnqueue("chorusGather", CollType::kGather, sendbuff, recvbuff, sendcount,
                        chorus::core::enumBits(datatype), chorusSum, root, -1, comm, stream);
}

chorusResult_t chorusScatter(const void* sendbuff, void* recvbuff, size_t recvcount, chorusDataType_t datatype,
                             int root, chorusComm_t comm, chorusStream_t stream) {
  return makeAndEnqueue("chorusScatter", CollType::kScatter, sendbuff, recvbuff, recvcount,
                        chorus::core::enumBits(datatype), chorusSum, root, -1, comm, stream);
}

chorusResult_t chorusSend(const void* sendbuff, size_t count, chorusDataType_t datatype, int peer, chorusComm_t comm,
                          chorusStream_t stream) {
  return makeAndEnqueue("chorusSend", CollType::kSend, sendbuff, nullptr, count, chorus::core::enumBits(datatype),
                        chorusSum, 0, peer, comm, stream);
}

chorusResult_t chorusRecv(void* recvbuff, size_t count, chorusDataType_t datatype, int peer, chorusComm_t comm,
                          chorusStream_t stream) {
  return makeAndEnqueue("chorusRecv", CollType::kRecv, nullptr, recvbuff, count, chorus::core::enumBits(datatype),
                        chorusSum, 0, peer, comm, stream);
}

chorusResult_t chorusGroupStart(void) {
  return chorus::core::apiGuard("chorusGroupStart", nullptr, [] {
    chorus::core::groupStart();
    return chorusSuccess;
  });
}

chorusResult_t chorusGroupEnd(void) {
  return chorus::core::apiGuard("chorusGroupEnd", nullptr, [] {
    // A non-blocking communicator created in the group is still being made: poll chorusCommGetAsyncError.
    if (chorus::core::groupEnd() == Status::kInProgress) return chorusInProgress;
    return chorusSuccess;
  });
}

chorusResult_t chorusGroupSimulateEnd(chorusSimInfo_t* simInfo) {
  return chorus::core::apiGuard("chorusGroupSimulateEnd", nullptr, [&] {
    // Only the caller's `size` bytes are read and written (an older, smaller struct stays valid), as NCCL does.
    chorusSimInfo_t info = CHORUS_SIM_INFO_INITIALIZER;
    size_t size = 0;
    if (simInfo != nullptr) {
      std::memcpy(&size, &simInfo->size, sizeof(size));
      size = std::min(size, sizeof(info));
      std::memcpy(static_cast<void*>(&info), simInfo, size);
    }
    // The group ends whatever the argument: a bad simInfo must not leave the thread inside it.
    double us = 0;
    Status first = Status::kSuccess;
    std::string error;
    const bool simulated = chorus::core::groupSimulateEnd(&us, &first, &error);
    CHORUS_CHECK_ARG(simInfo != nullptr, "simInfo is NULL");
    CHORUS_CHECK_ARG(
        size >= offsetof(chorusSimInfo_t, magic) + sizeof(info.magic) && info.magic == CHORUS_SIM_INFO_MAGIC,
        "simInfo was not initialized with CHORUS_SIM_INFO_INITIALIZER (NCCL_SIM_INFO_INITIALIZER)");
    if (first != Status::kSuccess) CHORUS_THROW(first, error);
    if (simulated) {
      info.estimatedTime = static_cast<float>(us);
      std::memcpy(static_cast<void*>(simInfo), &info, size);
    }
    return chorusSuccess;
  });
}

}  // extern "C"
