#include "cuda/device_case.h"

#include <cstring>

#include "common/test_data.h"

namespace chorus::test {

namespace {

void caseBytes(const CollCase& c, int nranks, size_t* sendBytes, size_t* recvBytes) {
  size_t sendElems = 0, recvElems = 0;
  bufferElems(c, nranks, &sendElems, &recvElems);
  *sendBytes = sendElems * typeSize(c.type);
  *recvBytes = recvElems * typeSize(c.type);
}

}  // namespace

std::string DeviceRankBuffers::allocate(size_t bytes) {
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return "cudaStreamCreate failed";
  if (cudaMalloc(&devSend, bytes + kGuardBytes) != cudaSuccess ||
      cudaMalloc(&devRecv, bytes + kGuardBytes) != cudaSuccess ||
      cudaMallocHost(&hostSend, bytes + kGuardBytes) != cudaSuccess ||
      cudaMallocHost(&hostRecv, bytes + kGuardBytes) != cudaSuccess) {
    return "allocating " + std::to_string(bytes) + " bytes failed";
  }
  return "";
}

void DeviceRankBuffers::release() {
  cudaFree(devSend);
  cudaFree(devRecv);
  cudaFreeHost(hostSend);
  cudaFreeHost(hostRecv);
  if (stream != nullptr) cudaStreamDestroy(stream);
  *this = DeviceRankBuffers{};
}

std::string fillDeviceCase(const CollCase& c, int rank, int nranks, DeviceRankBuffers& b) {
  size_t sendBytes = 0, recvBytes = 0;
  caseBytes(c, nranks, &sendBytes, &recvBytes);
  std::memset(b.hostRecv, 0, recvBytes);
  std::memset(b.hostSend, 0, sendBytes);
  writeGuard(b.hostSend + sendBytes);
  writeGuard(b.hostRecv + recvBytes);
  char* send = b.hostSend;
  char* recv = b.hostRecv;
  placeInPlace(c, rank, &send, &recv);
  fillCaseInput(c, rank, nranks, send);
  if (cudaMemcpyAsync(b.devSend, b.hostSend, sendBytes + kGuardBytes, cudaMemcpyHostToDevice, b.stream) !=
          cudaSuccess ||
      cudaMemcpyAsync(b.devRecv, b.hostRecv, recvBytes + kGuardBytes, cudaMemcpyHostToDevice, b.stream) !=
          cudaSuccess ||
      cudaStreamSynchronize(b.stream) != cudaSuccess) {
    return "copy to the device failed";
  }
  return "";
}

std::string callDeviceCase(const CollCase& c, int rank, int nranks, chorusComm_t comm, DeviceRankBuffers& b) {
  size_t sendBytes = 0, recvBytes = 0;
  caseBytes(c, nranks, &sendBytes, &recvBytes);
  char* send = b.devSend;
  char* recv = b.devRecv;
  placeInPlace(c, rank, &send, &recv);
  chorusResult_t rc = callCollective(c, send, recv, comm, b.stream);
  if (rc != chorusSuccess) return std::string("returned ") + chorusGetErrorString(rc) + ": " + chorusGetLastError(comm);
  cudaMemcpyAsync(b.hostSend, b.devSend, sendBytes + kGuardBytes, cudaMemcpyDeviceToHost, b.stream);
  cudaMemcpyAsync(b.hostRecv, b.devRecv, recvBytes + kGuardBytes, cudaMemcpyDeviceToHost, b.stream);
  cudaError_t e = cudaStreamSynchronize(b.stream);
  if (e != cudaSuccess) return std::string("stream: ") + cudaGetErrorString(e);
  chorusResult_t async = chorusSuccess;
  if (chorusCommGetAsyncError(comm, &async) == chorusSuccess && async != chorusSuccess) {
    return std::string("asynchronous error: ") + chorusGetErrorString(async) + ": " + chorusGetLastError(comm);
  }
  return "";
}

std::string checkDeviceCase(const CollCase& c, int rank, int nranks, const DeviceRankBuffers& b) {
  size_t sendBytes = 0, recvBytes = 0;
  caseBytes(c, nranks, &sendBytes, &recvBytes);
  if (!guardIntact(b.hostSend + sendBytes) || !guardIntact(b.hostRecv + recvBytes)) return "wrote past a buffer's end";
  char* send = b.hostSend;
  char* recv = b.hostRecv;
  placeInPlace(c, rank, &send, &recv);
  std::string first;
  const size_t wrong = countWrongResult(c, rank, nranks, recv, &first);
  if (wrong != 0) return std::to_string(wrong) + " wrong elements, first " + first;
  return "";
}

}  // namespace chorus::test
