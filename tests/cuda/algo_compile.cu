// Compile check: every algorithm of src/collectives/algo instantiated in a __global__ kernel with a minimal
// __device__ Primitives type, so that nvcc proves the one-source headers are device code (no exceptions,
// allocation, virtual calls, std containers or host-only std:: functions). Built, never run.
#include <cstddef>

#include "collectives/algo/ring_allgather.h"
#include "collectives/algo/ring_allreduce.h"
#include "collectives/algo/ring_broadcast.h"
#include "collectives/algo/ring_reduce.h"
#include "collectives/algo/ring_reducescatter.h"
#include "collectives/algo/tree_allreduce.h"
#include "collectives/algo/tree_broadcast.h"
#include "collectives/algo/tree_reduce.h"
#include "collectives/primitives.h"

namespace chorus::coll {
namespace {

// Moves data between two plain buffers and a one-slot "FIFO": enough for every call to touch memory, so
// nothing is optimized away, without being a real executor.
struct CheckPrims {
  const float* in;
  float* out;
  float* fifo;

  __device__ void send(size_t inOff, size_t n) { move(fifo, in + inOff, n); }
  __device__ void sendFromOutput(size_t outOff, size_t n) { move(fifo, out + outOff, n); }
  __device__ void recv(size_t outOff, size_t n) { move(out + outOff, fifo, n); }
  __device__ void recvReduceSend(size_t inOff, size_t n) { reduce(fifo, in + inOff, fifo, n); }
  __device__ void recvReduceCopy(size_t inOff, size_t outOff, size_t n, bool postOp) {
    reduce(out + outOff, in + inOff, fifo, n);
    if (postOp) scale(out + outOff, n);
  }
  __device__ void recvReduceCopySend(size_t inOff, size_t outOff, size_t n, bool postOp) {
    recvReduceCopy(inOff, outOff, n, postOp);
    move(fifo, out + outOff, n);
  }
  __device__ void recvCopySend(size_t outOff, size_t n) { move(out + outOff, fifo, n); }
  __device__ void copySend(size_t inOff, size_t outOff, size_t n, bool postOp) {
    localCopy(inOff, outOff, n, postOp);
    move(fifo, out + outOff, n);
  }
  __device__ void localCopy(size_t inOff, size_t outOff, size_t n, bool postOp) {
    move(out + outOff, in + inOff, n);
    if (postOp) scale(out + outOff, n);
  }

 private:
  __device__ static void move(float* dst, const float* src, size_t n) {
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];
  }
  __device__ static void reduce(float* dst, const float* a, const float* b, size_t n) {
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) dst[i] = a[i] + b[i];
  }
  __device__ static void scale(float* p, size_t n) {
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) p[i] *= 0.5f;
  }
};

}  // namespace

// One kernel runs every algorithm, chosen by `which`, with the arguments as given.
__global__ void algoCompileCheckKernel(int which, CollArgs args, const float* in, float* out, float* fifo) {
  CheckPrims p{in, out, fifo};
  CheckPrims down{in, out, fifo};
  switch (which) {
    case 0: runRingAllReduce(p, args); break;
    case 1: runRingAllGather(p, args); break;
    case 2: runRingReduceScatter(p, args); break;
    case 3: runRingBroadcast(p, args); break;
    case 4: runRingReduce(p, args); break;
    case 5: runTreeAllReduce(p, down, args); break;
    case 6: runTreeBroadcast(down, args); break;
    case 7: runTreeReduce(p, args); break;
    default: break;
  }
}

}  // namespace chorus::coll
