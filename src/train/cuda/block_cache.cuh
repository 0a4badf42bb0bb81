// Device memory for one rank's tensors, handed out and taken back without blocking the calling thread on the GPU.
//
// Why: the executor used cudaMalloc and, on release, cudaStreamSynchronize then cudaFree, which waits for every
// stream of the device. So each temporary freed in the backward pass stalled the host until the GPU was idle,
// including collectives that wait for other ranks (with ranks as threads on one GPU, for another thread's kernel).
// Here blocks come from CUDA's stream-ordered pool (cudaMallocAsync on the compute stream) and a released block is
// kept, with an event recorded after the work issued so far on the compute stream and on every stream that may
// still read it (the communicators'); it is handed out again, for an allocation of the same rounded size, once that
// event has completed. Memory goes back to the pool only under pressure (trim) and at the end, as in PyTorch's
// caching allocator. Run on an H200 (docs/training.md); it did not cure the hang of several gradient buckets with
// ranks as threads, which this was first suspected of causing. Compiled by nvcc only.
#ifndef CHORUS_TRAIN_CUDA_BLOCK_CACHE_CUH_
#define CHORUS_TRAIN_CUDA_BLOCK_CACHE_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace chorus::train {

class BlockCache {
 public:
  // Blocks are ordered on `compute`, the stream on which the rank's kernels run.
  explicit BlockCache(cudaStream_t compute) : compute_(compute) {
    check(cudaStreamCreateWithFlags(&fence_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags (block cache)");
    check(cudaEventCreateWithFlags(&mark_, cudaEventDisableTiming), "cudaEventCreateWithFlags (block cache)");
  }
  // The owner has synchronized its streams: every block goes back to the pool.
  ~BlockCache() {
    cudaStreamSynchronize(fence_);
    for (auto& [bytes, b] : free_) {
      cudaFreeAsync(b.p, compute_);
      cudaEventDestroy(b.ready);
    }
    for (auto& [p, b] : live_) {
      cudaFreeAsync(p, compute_);
      if (b.ready != nullptr) cudaEventDestroy(b.ready);
    }
    cudaStreamSynchronize(compute_);
    cudaEventDestroy(mark_);
    cudaStreamDestroy(fence_);
  }
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // At least `bytes` of device memory, usable by work issued on the compute stream from now on (and by other streams
  // ordered after it).
  void* allocate(size_t bytes) {
    const size_t size = roundUp(bytes);
    auto [first, last] = free_.equal_range(size);
    for (auto it = first; it != last; ++it) {
      const cudaError_t e = cudaEventQuery(it->second.ready);
      if (e == cudaErrorNotReady) {
        (void)cudaGetLastError();  // not an error: leave nothing for the next launch's check to find
        continue;
      }
      check(e, "cudaEventQuery (block cache)");
      Block b = it->second;
      free_.erase(it);
      live_.emplace(b.p, b);
      return b.p;
    }
    void* p = nullptr;
    cudaError_t e = cudaMallocAsync(&p, size, compute_);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // the failed allocation stays the last error until read
      trim();
      e = cudaMallocAsync(&p, size, compute_);
    }
    check(e, "cudaMallocAsync");
    live_.emplace(p, Block{p, size, nullptr});
    return p;
  }

  // Takes back a block of allocate's; work already issued on the compute stream or on `readers` may still use it.
  void release(void* p, const std::vector<cudaStream_t>& readers) {
    auto it = live_.find(p);
    if (it == live_.end()) throw std::invalid_argument("BlockCache::release: not a block of this cache");
    Block b = it->second;
    live_.erase(it);
    if (b.ready == nullptr) check(cudaEventCreateWithFlags(&b.ready, cudaEventDisableTiming), "cudaEventCreate");
    // The fence stream waits for each user's work so far; its event then marks the block free. cudaStreamWaitEvent
    // takes the event's state when called, so one `mark_` serves every stream.
    waitOn(compute_);
    for (cudaStream_t s : readers) waitOn(s);
    check(cudaEventRecord(b.ready, fence_), "cudaEventRecord (block cache)");
    free_.emplace(b.bytes, b);
  }

 private:
  struct Block {
    void* p;
    size_t bytes;
    cudaEvent_t ready;  // recorded on the fence stream when the block was released; null until its first release
  };

  static void check(cudaError_t e, const char* call) {
    if (e != cudaSuccess) throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorString(e));
  }
  // Sizes in steps of 512 bytes (and at least one step), so that tensors of nearly the same size share blocks.
  static size_t roundUp(size_t bytes) { return bytes == 0 ? 512 : (bytes + 511) / 512 * 512; }

  void waitOn(cudaStream_t s) {
    check(cudaEventRecord(mark_, s), "cudaEventRecord (block cache)");
    check(cudaStreamWaitEvent(fence_, mark_, 0), "cudaStreamWaitEvent (block cache)");
  }
  // Under memory pressure: the blocks nothing uses any more go back to the pool.
  void trim() {
    for (auto it = free_.begin(); it != free_.end();) {
      if (cudaEventQuery(it->second.ready) != cudaSuccess) {
        ++it;
        continue;
      }
      cudaFreeAsync(it->second.p, compute_);
      cudaEventDestroy(it->second.ready);
      it = free_.erase(it);
    }
    (void)cudaGetLastError();
  }

  cudaStream_t compute_;
  cudaStream_t fence_ = nullptr;  // waits for a released block's users; never runs a kernel
  cudaEvent_t mark_ = nullptr;
  std::unordered_map<void*, Block> live_;  // handed out
  std::multimap<size_t, Block> free_;      // released, by size; reusable once `ready` has completed
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_CUDA_BLOCK_CACHE_CUH_
