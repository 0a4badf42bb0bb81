// Times collectives of `ranks` threads on device 0 (one communicator and one non-blocking stream each) and, at
// each size, a device-to-device copy of the same bytes on the same GPU: the copy is the memory bound the
// collective is read against (ranks sharing one GPU share its memory bandwidth).
//
//   device_coll_bench [-n ranks] [-b min_bytes] [-e max_bytes] [-f factor] [-w warmup] [-i iters]
//                     [-c allreduce|allgather|reducescatter|broadcast|alltoall|sendrecv] [-t float32|bfloat16|...]
//
// sendrecv: every rank sends to the next and receives from the previous one, in a group.
//
// One row per size: bytes (nccl-tests' size: the output buffer of all-gather, the input of the others), time per
// call in us (wall time of `iters` calls enqueued back to back by every rank, after a barrier, to the last
// stream's end), algbw and busbw in GB/s (nccl-tests' factors), and the copy's GB/s (bytes / time; it moves each
// byte once in and once out, as a collective's output must be written).
#include <cuda_runtime.h>

#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "chorus/chorus.h"

namespace {

struct Options {
  int ranks = 2;
  size_t minBytes = 1 << 20;
  size_t maxBytes = size_t(256) << 20;
  int factor = 4;
  int warmup = 5;
  int iters = 20;
  std::string coll = "allreduce";
  chorusDataType_t type = chorusFloat32;
  size_t typeSize = 4;
};

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "device_coll_bench: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

void check(chorusResult_t r, const char* what) {
  if (r != chorusSuccess) {
    std::fprintf(stderr, "device_coll_bench: %s: %s\n", what, chorusGetErrorString(r));
    std::exit(1);
  }
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "-n")
      o.ranks = std::atoi(v.c_str());
    else if (k == "-b")
      o.minBytes = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "-e")
      o.maxBytes = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "-f")
      o.factor = std::atoi(v.c_str());
    else if (k == "-w")
      o.warmup = std::atoi(v.c_str());
    else if (k == "-i")
      o.iters = std::atoi(v.c_str());
    else if (k == "-c")
      o.coll = v;
    else if (k == "-t") {
      if (v == "float32")
        o.type = chorusFloat32, o.typeSize = 4;
      else if (v == "bfloat16")
        o.type = chorusBfloat16, o.typeSize = 2;
      else if (v == "float16")
        o.type = chorusFloat16, o.typeSize = 2;
      else if (v == "float64")
        o.type = chorusFloat64, o.typeSize = 8;
      else if (v == "int8")
        o.type = chorusInt8, o.typeSize = 1;
      else {
        std::fprintf(stderr, "device_coll_bench: unknown type %s\n", v.c_str());
        std::exit(2);
      }
    } else {
      std::fprintf(stderr, "device_coll_bench: unknown option %s\n", k.c_str());
      std::exit(2);
    }
  }
  if (o.ranks < 1 || o.factor < 2 || o.iters < 1 || o.minBytes < o.typeSize) {
    std::fprintf(stderr, "device_coll_bench: bad -n, -f, -i or -b\n");
    std::exit(2);
  }
  return o;
}

// nccl-tests' busbw factor for n ranks.
double busFactor(const std::string& coll, int n) {
  if (coll == "allreduce") return 2.0 * (n - 1) / n;
  if (coll == "broadcast" || coll == "sendrecv") return 1.0;
  return double(n - 1) / n;
}

// Sizes of rank buffers for `bytes` (nccl-tests' size) and the count argument.
void geometry(const Options& o, size_t bytes, size_t* sendBytes, size_t* recvBytes, size_t* count) {
  const size_t n = static_cast<size_t>(o.ranks);
  size_t elems = bytes / o.typeSize;
  if (o.coll == "allgather" || o.coll == "reducescatter" || o.coll == "alltoall") elems -= elems % n;
  *sendBytes = *recvBytes = elems * o.typeSize;
  *count = elems;
  if (o.coll == "allgather") *sendBytes /= n, *count /= n;
  if (o.coll == "reducescatter") *recvBytes /= n, *count /= n;
  if (o.coll == "alltoall") *count /= n;
}

chorusResult_t call(const Options& o, const void* send, void* recv, size_t count, chorusComm_t comm, cudaStream_t s) {
  if (o.coll == "allreduce") return chorusAllReduce(send, recv, count, o.type, chorusSum, comm, s);
  if (o.coll == "allgather") return chorusAllGather(send, recv, count, o.type, comm, s);
  if (o.coll == "reducescatter") return chorusReduceScatter(send, recv, count, o.type, chorusSum, comm, s);
  if (o.coll == "broadcast") return chorusBroadcast(send, recv, count, o.type, 0, comm, s);
  if (o.coll == "alltoall") return chorusAlltoAll(send, recv, count, o.type, comm, s);
  if (o.coll == "sendrecv") {
    int rank = 0, n = 1;
    chorusCommUserRank(comm, &rank);
    chorusCommCount(comm, &n);
    chorusGroupStart();
    chorusSend(send, count, o.type, (rank + 1) % n, comm, s);
    chorusRecv(recv, count, o.type, (rank + n - 1) % n, comm, s);
    return chorusGroupEnd();
  }
  std::fprintf(stderr, "device_coll_bench: unknown collective %s\n", o.coll.c_str());
  std::exit(2);
}

// us per device-to-device copy of `bytes` (the mean of iters copies after warmup).
double copyUs(const Options& o, size_t bytes, void* dst, const void* src, cudaStream_t s) {
  for (int i = 0; i < o.warmup; ++i) check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s), "copy");
  check(cudaStreamSynchronize(s), "copy sync");
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < o.iters; ++i) check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s), "copy");
  check(cudaStreamSynchronize(s), "copy sync");
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / o.iters;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const int n = o.ranks;
  check(cudaSetDevice(0), "cudaSetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("# device_coll_bench %s, %d ranks as threads on %s, type size %zu, %d warm-up + %d timed calls\n",
              o.coll.c_str(), n, prop.name, o.typeSize, o.warmup, o.iters);

  chorusUniqueId id;
  check(chorusGetUniqueId(&id), "chorusGetUniqueId");
  std::vector<chorusComm_t> comms(n);
  std::vector<cudaStream_t> streams(n);
  std::vector<void*> sendBufs(n), recvBufs(n);
  const size_t maxBuf = o.maxBytes + 4096;
  {
    std::vector<std::thread> ts;
    for (int r = 0; r < n; ++r) {
      ts.emplace_back([&, r] {
        check(cudaSetDevice(0), "cudaSetDevice");
        chorusConfig_t cfg = CHORUS_CONFIG_INITIALIZER;
        cfg.device = 0;
        check(chorusCommInitRankConfig(&comms[r], n, id, r, &cfg), "chorusCommInitRankConfig");
        check(cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking), "cudaStreamCreate");
        check(cudaMalloc(&sendBufs[r], maxBuf), "cudaMalloc");
        check(cudaMalloc(&recvBufs[r], maxBuf), "cudaMalloc");
        check(cudaMemset(sendBufs[r], 0, maxBuf), "cudaMemset");
        check(cudaMemset(recvBufs[r], 0, maxBuf), "cudaMemset");
      });
    }
    for (auto& t : ts) t.join();
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

  std::printf("#%12s %12s %10s %10s %10s %10s %8s\n", "bytes", "count", "time(us)", "algbw", "busbw", "copyGB/s",
              "bus/copy");
  for (size_t bytes = o.minBytes; bytes <= o.maxBytes; bytes *= static_cast<size_t>(o.factor)) {
    size_t sendBytes = 0, recvBytes = 0, count = 0;
    geometry(o, bytes, &sendBytes, &recvBytes, &count);
    std::barrier sync(n + 1);
    std::vector<std::thread> ts;
    for (int r = 0; r < n; ++r) {
      ts.emplace_back([&, r] {
        check(cudaSetDevice(0), "cudaSetDevice");
        for (int i = 0; i < o.warmup; ++i)
          check(call(o, sendBufs[r], recvBufs[r], count, comms[r], streams[r]), "warm-up");
        check(cudaStreamSynchronize(streams[r]), "warm-up sync");
        sync.arrive_and_wait();  // all warm
        sync.arrive_and_wait();  // the clock starts
        for (int i = 0; i < o.iters; ++i) check(call(o, sendBufs[r], recvBufs[r], count, comms[r], streams[r]), "call");
        check(cudaStreamSynchronize(streams[r]), "sync");
        sync.arrive_and_wait();  // the clock stops
      });
    }
    sync.arrive_and_wait();
    auto t0 = std::chrono::steady_clock::now();
    sync.arrive_and_wait();
    sync.arrive_and_wait();
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / o.iters;
    for (auto& t : ts) t.join();
    const size_t reported = std::max(sendBytes, recvBytes);
    const double algbw = reported / us / 1e3;
    const double busbw = algbw * busFactor(o.coll, n);
    const double copy = reported / copyUs(o, reported, recvBufs[0], sendBufs[0], streams[0]) / 1e3;
    std::printf(" %12zu %12zu %10.1f %10.2f %10.2f %10.2f %8.2f\n", reported, count, us, algbw, busbw, copy,
                busbw / copy);
    std::fflush(stdout);
  }
  for (int r = 0; r < n; ++r) {
    cudaFree(sendBufs[r]);
    cudaFree(recvBufs[r]);
    cudaStreamDestroy(streams[r]);
    chorusCommDestroy(comms[r]);
  }
  return 0;
}
