// NCCL's collectives, point-to-point calls, groups and run-time reduction operations, forwarded to Chorus.
// Streams pass through: a cudaStream_t on a CUDA rank, NULL (blocking) or a host stream on a host rank.
#include "nccl_abi.h"

using chorus::nccl::toNccl;

NCCL_COMPAT_API(ncclResult_t, ncclRedOpCreatePreMulSum, ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                ncclScalarResidence_t residence, ncclComm_t comm);
ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
  return toNccl(chorusRedOpCreatePreMulSum(op, scalar, datatype, residence, comm));
}

NCCL_COMPAT_API(ncclResult_t, ncclRedOpDestroy, ncclRedOp_t op, ncclComm_t comm);
ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  return toNccl(chorusRedOpDestroy(op, comm));
}

NCCL_COMPAT_API(ncclResult_t, ncclReduce, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream) {
  return toNccl(chorusReduce(sendbuff, recvbuff, count, datatype, op, root, comm, stream));
}

NCCL_COMPAT_API(ncclResult_t, ncclBcast, void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                cudaStream_t stream);
ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  return toNccl(chorusBcast(buff, count, datatype, root, comm, stream));
}

NCCL_COMPAT_API(ncclResult_t, ncclBroadcast, const void* sendbuff, void* recvbuff, size_t count,
                ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  return toNccl(chorusBroadcast(sendbuff, recvbuff, count, datatype, root, comm, stream));
}

NCCL_COMPAT_API(ncclResult_t, ncclAllReduce, const void* sendbuff, void* recvbuff, size_t count,
                ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  return toNccl(chorusAllReduce(sendbuff, recvbuff, count, datatype, op, comm, stream));
}

NCCL_COMPAT_API(ncclResult_t, ncclReduceScatter, const void* sendbuff, void* recvbuff, size_t recvcount,
                ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return toNccl(chorusReduceScatter(sendbuff, recvbuff, recvcount, datatype, op, comm, stream));
}

NCCL_COMPAT_API(ncclResult_t, ncclAllGather, const void* sendbuff, void* recvbuff, size_t sendcount,
                ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  return toNccl(chorusAllGather(sendbuff, recvbuff, sendcount, datatype, comm, stream));
}

NCCL_COMPAT_API(ncclResult_t, ncclAlltoAll, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                          cudaStream_t stream) {
  return toNccl(chorusAlltoAll(sendbuff, recvbuff, count, datatype, comm, stream));
}

NCCL_COMPAT_API(ncclResult_t, ncclGather, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  return toNccl(chorusGather(sendbuff, recvbuff, count, datatype, root, comm, stream));
}

NCCL_COMPAT_API(ncclResult_t, ncclScatter, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream) {
  return toNccl(chorusScatter(sendbuff, recvbuff, count, datatype, root, comm, stream));
}

NCCL_COMPAT_API(ncclResult_t, ncclSend, const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return toNccl(chorusSend(sendbuff, count, datatype, peer, comm, stream));
}

NCCL_COMPAT_API(ncclResult_t, ncclRecv, void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return toNccl(chorusRecv(recvbuff, count, datatype, peer, comm, stream));
}

NCCL_COMPAT_API(ncclResult_t, ncclGroupStart);
ncclResult_t ncclGroupStart() {
  return toNccl(chorusGroupStart());
}

NCCL_COMPAT_API(ncclResult_t, ncclGroupEnd);
ncclResult_t ncclGroupEnd() {
  return toNccl(chorusGroupEnd());
}

NCCL_COMPAT_API(ncclResult_t, ncclGroupSimulateEnd, ncclSimInfo_t* simInfo);
ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  return toNccl(chorusGroupSimulateEnd(simInfo));
}
