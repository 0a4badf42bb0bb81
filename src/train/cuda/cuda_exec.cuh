// The CUDA executor of KernelDevice (device/kernel_device.h): device memory from a BlockCache (no device-wide
// synchronization when a tensor is freed: block_cache.cuh), one compute stream per
// rank on which every kernel, GEMM and copy is issued in order, kernels launched one thread per index, GEMMs through
// cuBLAS with TF32 off. Communicators get streams of their own; an operation on one first waits (an event) for the
// compute stream's work issued so far. Compiled by nvcc only (cuda_device.cu).
//
// Run on an H100 and an H200 (docs/training.md).
#ifndef CHORUS_TRAIN_CUDA_CUDA_EXEC_CUH_
#define CHORUS_TRAIN_CUDA_CUDA_EXEC_CUH_

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/block_cache.cuh"
#include "device/gemm_args.h"

namespace chorus::train {

[[noreturn]] inline void cudaFailed(const char* call, const std::string& why) {
  throw std::runtime_error(std::string(call) + " failed: " + why);
}
inline void checkCuda(cudaError_t e, const char* call) {
  if (e != cudaSuccess) cudaFailed(call, cudaGetErrorString(e));
}
inline void checkCublas(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS) cudaFailed(call, "cuBLAS status " + std::to_string(static_cast<int>(s)));
}

// One thread per index, grid-stride so any n fits the grid.
template <typename Fn>
__global__ void forEachKernel(int64_t n, Fn fn) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    fn(i);
}

class CudaExec {
 public:
  explicit CudaExec(int device) : device_(device) {
    checkCuda(cudaSetDevice(device_), "cudaSetDevice");
    checkCuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    checkCuda(cudaEventCreateWithFlags(&issued_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    checkCublas(cublasCreate(&blas_), "cublasCreate");
    checkCublas(cublasSetStream(blas_, stream_), "cublasSetStream");
    // FP32 products in FP32: TF32 tensor cores only with CUBLAS_TF32_TENSOR_OP_MATH, which is never set; the default
    // math mode also keeps the GEMMs deterministic on one stream.
    checkCublas(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    blocks_ = std::make_unique<BlockCache>(stream_);
  }
  ~CudaExec() {
    cudaStreamSynchronize(stream_);
    blocks_.reset();
    cublasDestroy(blas_);
    cudaEventDestroy(issued_);
    cudaStreamDestroy(stream_);
  }
  CudaExec(const CudaExec&) = delete;
  CudaExec& operator=(const CudaExec&) = delete;

  std::string name() const { return "cuda:" + std::to_string(device_); }
  int cudaIndex() const { return device_; }

  void* allocate(size_t bytes) { return blocks_->allocate(bytes); }
  // Work issued so far on the compute stream or a communicator's may still use p: the block is reused after it.
  void release(void* p) { blocks_->release(p, commStreams_); }
  void fillZero(void* p, size_t bytes) { checkCuda(cudaMemsetAsync(p, 0, bytes, stream_), "cudaMemsetAsync"); }
  void copy(void* dst, const void* src, size_t bytes) {
    checkCuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_), "cudaMemcpyAsync (device)");
  }
  void toHost(void* dst, const void* src, size_t bytes) {
    checkCuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync (to host)");
    synchronize();
  }
  void fromHost(void* dst, const void* src, size_t bytes) {
    checkCuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync (from host)");
    synchronize();  // the caller may reuse src at once
  }

  template <typename Fn>
  void forEach(int64_t n, const Fn& fn) {
    if (n <= 0) return;
    const int threads = 256;
    const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 8192);
    forEachKernel<<<static_cast<unsigned>(blocks), threads, 0, stream_>>>(n, fn);
    checkCuda(cudaGetLastError(), "kernel launch");
  }

  void gemm(const ColMajorGemm& g) {
    const cublasOperation_t ta = g.transA ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (g.batch == 1) {
      checkCublas(cublasSgemm(blas_, ta, tb, g.m, g.n, g.k, &g.alpha, g.a, g.lda, g.b, g.ldb, &g.beta, g.c, g.ldc),
                  "cublasSgemm");
    } else {
      checkCublas(cublasSgemmStridedBatched(blas_, ta, tb, g.m, g.n, g.k, &g.alpha, g.a, g.lda, g.strideA, g.b, g.ldb,
                                            g.strideB, &g.beta, g.c, g.ldc, g.strideC, g.batch),
                  "cublasSgemmStridedBatched");
    }
  }
  void synchronize() { checkCuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (compute)"); }

  void* createStream() {
    cudaStream_t s = nullptr;
    checkCuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    commStreams_.push_back(s);
    return s;
  }
  void destroyStream(void* s) {
    std::erase(commStreams_, static_cast<cudaStream_t>(s));
    cudaStreamDestroy(static_cast<cudaStream_t>(s));
  }
  void streamWaitsForWork(void* s) {
    checkCuda(cudaEventRecord(issued_, stream_), "cudaEventRecord");
    checkCuda(cudaStreamWaitEvent(static_cast<cudaStream_t>(s), issued_, 0), "cudaStreamWaitEvent");
  }
  void synchronizeStream(void* s) {
    checkCuda(cudaStreamSynchronize(static_cast<cudaStream_t>(s)), "cudaStreamSynchronize (communicator)");
  }
  bool streamIdle(void* s) {
    cudaError_t e = cudaStreamQuery(static_cast<cudaStream_t>(s));
    if (e == cudaErrorNotReady) return false;
    checkCuda(e, "cudaStreamQuery");
    return true;
  }

 private:
  int device_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t issued_ = nullptr;  // recorded on the compute stream whenever a communicator must wait for it
  cublasHandle_t blas_ = nullptr;
  std::vector<cudaStream_t> commStreams_;  // the communicators' (createStream): a released block may be in their work
  std::unique_ptr<BlockCache> blocks_;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_CUDA_CUDA_EXEC_CUH_
