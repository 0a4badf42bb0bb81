#include "coll/sweep.h"

#include <cstring>
#include <memory>
#include <mutex>

#include "common/test_data.h"

namespace chorus::test {

namespace {

// A buffer with guard bytes after its end, from the heap or from chorusMemAlloc.
class Buffer {
 public:
  Buffer(size_t n, bool shared) : bytes_(n), shared_(shared) {
    const size_t total = n + kGuardBytes + 64;
    if (shared_) {
      if (chorusMemAlloc(reinterpret_cast<void**>(&mem_), total) != chorusSuccess) mem_ = nullptr;
    } else {
      mem_ = new char[total];
    }
    if (mem_ == nullptr) return;
    memset(mem_, 0, n);
    writeGuard(mem_ + n);
  }
  ~Buffer() {
    if (shared_) {
      chorusMemFree(mem_);
    } else {
      delete[] mem_;
    }
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  char* data() { return mem_; }
  bool guarded() const { return guardIntact(mem_ + bytes_); }

 private:
  char* mem_ = nullptr;
  size_t bytes_;
  bool shared_;
};

// The expected reductions of elements [begin, begin + elems) of the case being run.
std::shared_ptr<const std::vector<double>> computeReductions(const CollCase& c, int n, size_t begin, size_t elems) {
  auto v = std::make_shared<std::vector<double>>(elems);
  double* out = v->data();
  dispatchType(c.type, [&](auto type) {
    dispatchOp(c.op, [&](auto op) {
      for (size_t i = 0; i < elems; ++i) out[i] = expectedReduce(type, op, n, begin + i, c.seed);
    });
  });
  return v;
}

// The expected reductions of elements [0, elems), computed once per process and shared by the thread ranks (which
// run the same case at about the same time): all-reduce and reduce ranks check the same elements, and computing
// them costs nranks input evaluations per element.
std::shared_ptr<const std::vector<double>> sharedReductions(const CollCase& c, int n, size_t elems) {
  struct Entry {
    std::string key;
    std::shared_ptr<const std::vector<double>> values;
  };
  static std::mutex mu;
  static Entry cache;
  std::string key = std::to_string(c.type) + "/" + std::to_string(c.op) + "/" + std::to_string(n) + "/" +
                    std::to_string(c.seed) + "/" + std::to_string(elems);
  std::lock_guard<std::mutex> lock(mu);
  if (cache.key != key) cache = Entry{key, computeReductions(c, n, 0, elems)};
  return cache.values;
}

// Runs one case on host buffers (case number `index` of the sweep); returns "" or a failure description.
// `*callFailed` is set where the call itself returned an error (not where it computed a wrong result).
std::string runCase(chorusComm_t comm, chorusStream_t stream, const CollCase& c, int rank, int n, bool onStream,
                    SharedBuffers shared, uint64_t index, bool* callFailed) {
  const size_t elt = typeSize(c.type);
  chorusStream_t s = onStream ? stream : nullptr;
  size_t sendElems = 0, recvElems = 0;
  bufferElems(c, n, &sendElems, &recvElems);
  const bool sharedSend =
      shared == SharedBuffers::kBoth || (shared == SharedBuffers::kOne && (index / 2 + rank) % 2 == 0);
  const bool sharedRecv =
      shared == SharedBuffers::kBoth || (shared == SharedBuffers::kOne && (index / 2 + rank) % 2 == 1);
  Buffer sendBuf(sendElems * elt, sharedSend);
  Buffer recvBuf(recvElems * elt, sharedRecv);
  const std::string what = describeCase(c, rank) + (onStream ? " stream" : " blocking") +
                           (sharedSend ? " send chorusMemAlloc" : "") + (sharedRecv ? " recv chorusMemAlloc" : "");
  if (sendBuf.data() == nullptr || recvBuf.data() == nullptr) return what + ": chorusMemAlloc failed";
  char* send = sendBuf.data();
  char* recv = recvBuf.data();
  placeInPlace(c, rank, &send, &recv);
  fillCaseInput(c, rank, n, send);
  chorusResult_t rc = callCollective(c, send, recv, comm, s);
  if (rc == chorusSuccess && s != nullptr) rc = chorusStreamSynchronize(s);
  if (rc != chorusSuccess) {
    *callFailed = true;
    return what + ": returned " + chorusGetErrorString(rc) + ": " + chorusGetLastError(comm);
  }
  if (!sendBuf.guarded() || !recvBuf.guarded()) return what + ": wrote past a buffer's end";
  std::string first;
  size_t wrong = countWrongResult(c, rank, n, recv, &first);
  if (wrong != 0) return what + ": " + std::to_string(wrong) + " wrong elements, first " + first;
  return "";
}

}  // namespace

const char* collName(Coll c) {
  static const char* names[] = {"AllReduce",     "Broadcast", "Reduce", "AllGather",
                                "ReduceScatter", "AlltoAll",  "Gather", "Scatter"};
  return names[static_cast<int>(c)];
}

bool reduces(Coll c) {
  return c == Coll::kAllReduce || c == Coll::kReduce || c == Coll::kReduceScatter;
}

bool rooted(Coll c) {
  return c == Coll::kBroadcast || c == Coll::kReduce || c == Coll::kGather || c == Coll::kScatter;
}

void bufferElems(const CollCase& c, int n, size_t* sendElems, size_t* recvElems) {
  const size_t cnt = c.count, all = c.count * static_cast<size_t>(n);
  *sendElems = cnt;
  *recvElems = cnt;
  switch (c.coll) {
    case Coll::kAllGather: *recvElems = all; break;
    case Coll::kReduceScatter: *sendElems = all; break;
    case Coll::kAllToAll: *sendElems = *recvElems = all; break;
    case Coll::kGather: *recvElems = all; break;
    case Coll::kScatter: *sendElems = all; break;
    default: break;
  }
}

void placeInPlace(const CollCase& c, int rank, char** send, char** recv) {
  if (!c.inPlace) return;
  const size_t block = c.count * typeSize(c.type);
  switch (c.coll) {
    case Coll::kAllGather: *send = *recv + rank * block; break;
    case Coll::kReduceScatter: *recv = *send + rank * block; break;
    case Coll::kGather:
      if (rank == c.root) *send = *recv + c.root * block;
      break;
    case Coll::kScatter:
      if (rank == c.root) *recv = *send + c.root * block;
      break;
    default: *send = *recv; break;
  }
}

void fillCaseInput(const CollCase& c, int rank, int n, void* send) {
  size_t sendElems = 0, recvElems = 0;
  bufferElems(c, n, &sendElems, &recvElems);
  fillInput(send, c.type, c.op, rank, sendElems, c.seed);
}

chorusResult_t callCollective(const CollCase& c, const void* send, void* recv, chorusComm_t comm, chorusStream_t s) {
  const size_t cnt = c.count;
  switch (c.coll) {
    case Coll::kAllReduce: return chorusAllReduce(send, recv, cnt, c.type, c.op, comm, s);
    case Coll::kBroadcast: return chorusBroadcast(send, recv, cnt, c.type, c.root, comm, s);
    case Coll::kReduce: return chorusReduce(send, recv, cnt, c.type, c.op, c.root, comm, s);
    case Coll::kAllGather: return chorusAllGather(send, recv, cnt, c.type, comm, s);
    case Coll::kReduceScatter: return chorusReduceScatter(send, recv, cnt, c.type, c.op, comm, s);
    case Coll::kAllToAll: return chorusAlltoAll(send, recv, cnt, c.type, comm, s);
    case Coll::kGather: return chorusGather(send, recv, cnt, c.type, c.root, comm, s);
    case Coll::kScatter: return chorusScatter(send, recv, cnt, c.type, c.root, comm, s);
  }
  return chorusInternalError;
}

size_t countWrongResult(const CollCase& c, int rank, int n, const void* recv, std::string* first) {
  const size_t cnt = c.count;
  std::shared_ptr<const std::vector<double>> expected;
  if (c.coll == Coll::kReduceScatter) {
    // Each rank checks its own block only: computed by each rank (thread ranks in parallel), not shared.
    expected = computeReductions(c, n, rank * cnt, cnt);
  } else if (reduces(c.coll) && (c.coll != Coll::kReduce || rank == c.root)) {
    expected = sharedReductions(c, n, cnt);
  }
  size_t wrong = 0;
  // The loops are compiled per type (common/test_data.h): tens of millions of elements per case at 8 ranks.
  dispatchType(c.type, [&](auto type) {
    auto value = [&](int r, size_t i) { return inputValue(type, c.op, r, i, c.seed); };
    auto red = [&](size_t i) { return (*expected)[i]; };
    auto check = [&](chorusRedOp_t op, size_t count, auto expect) {
      wrong = countWrongOf(recv, type, op, n, count, expect, first);
    };
    switch (c.coll) {
      case Coll::kAllReduce:
      case Coll::kReduceScatter: check(c.op, cnt, red); break;
      case Coll::kReduce:
        if (rank == c.root) check(c.op, cnt, red);
        break;
      case Coll::kBroadcast: check(chorusSum, cnt, [&](size_t i) { return value(c.root, i); }); break;
      case Coll::kAllGather: check(chorusSum, cnt * n, [&](size_t i) { return value(i / cnt, i % cnt); }); break;
      case Coll::kAllToAll:
        // Block j of this rank's output is block `rank` of rank j's input.
        check(chorusSum, cnt * n, [&](size_t i) { return value(i / cnt, rank * cnt + i % cnt); });
        break;
      case Coll::kGather:
        if (rank == c.root) check(chorusSum, cnt * n, [&](size_t i) { return value(i / cnt, i % cnt); });
        break;
      case Coll::kScatter: check(chorusSum, cnt, [&](size_t i) { return value(c.root, rank * cnt + i); }); break;
    }
  });
  return wrong;
}

void writeGuard(char* end) {
  memset(end, kGuardByte, kGuardBytes);
}

bool guardIntact(const char* end) {
  for (size_t i = 0; i < kGuardBytes; ++i) {
    if (static_cast<unsigned char>(end[i]) != kGuardByte) return false;
  }
  return true;
}

std::string describeCase(const CollCase& c, int rank) {
  return std::string(collName(c.coll)) + " " + typeName(c.type) + " " + opName(c.op) + " count " +
         std::to_string(c.count) + (c.inPlace ? " in-place" : " out-of-place") + " root " + std::to_string(c.root) +
         " on rank " + std::to_string(rank);
}

SweepConfig fullSweep() {
  SweepConfig c;
  c.colls = {Coll::kAllReduce,     Coll::kBroadcast, Coll::kReduce, Coll::kAllGather,
             Coll::kReduceScatter, Coll::kAllToAll,  Coll::kGather, Coll::kScatter};
  for (int t = 0; t < chorusNumTypes; ++t) c.types.push_back(static_cast<chorusDataType_t>(t));
  c.ops = {chorusSum, chorusProd, chorusMax, chorusMin, chorusAvg};
  c.counts = {0, 1, 7, 1021, 65537, 1048583};
  return c;
}

SweepConfig quickSweep() {
  SweepConfig c = fullSweep();
  c.types = {chorusInt8, chorusUint32, chorusFloat32, chorusFloat64, chorusBfloat16, chorusFloat8e4m3};
  c.counts = {0, 1, 1021, 65537};
  return c;
}

SweepConfig sharedBuffersSweep() {
  SweepConfig c;
  c.colls = {Coll::kBroadcast, Coll::kAllGather, Coll::kAllReduce};
  c.types = {chorusInt8, chorusFloat32, chorusFloat64, chorusBfloat16};
  c.ops = {chorusSum, chorusProd, chorusMax, chorusAvg};
  // 131072 float32 is one 128 KiB slot (transport/fifo_geometry.h); 300007 crosses slots and references unevenly.
  c.counts = {1, 1021, 32768, 131072, 300007};
  return c;
}

SweepConfig largeSweep() {
  SweepConfig c;
  c.colls = {Coll::kAllReduce, Coll::kBroadcast, Coll::kReduce, Coll::kAllGather, Coll::kReduceScatter};
  c.types = {chorusFloat32};
  c.ops = {chorusSum};
  c.counts = {(size_t{4} << 20) / 4 + 5};  // 4 MiB and 20 bytes per rank's block
  return c;
}

SweepConfig streamedSweep() {
  SweepConfig c = largeSweep();
  c.ops = {chorusSum, chorusAvg};           // avg: a post-divisor on the way to the streamed output
  c.counts = {(size_t{16} << 20) / 4 + 5};  // 16 MiB and 20 bytes per rank's block
  return c;
}

std::vector<std::string> runSweep(chorusComm_t comm, const SweepConfig& cfg) {
  int rank = 0, n = 1;
  chorusCommUserRank(comm, &rank);
  chorusCommCount(comm, &n);
  chorusStream_t stream = nullptr;
  if (cfg.useStream && chorusStreamCreate(&stream) != chorusSuccess) return {"chorusStreamCreate failed"};
  std::vector<std::string> failures;
  constexpr size_t kMaxReported = 20;
  size_t failed = 0;
  auto finish = [&] {
    if (stream != nullptr) chorusStreamDestroy(stream);
    if (failed > failures.size()) failures.push_back("and " + std::to_string(failed - failures.size()) + " more");
    return failures;
  };
  uint64_t caseIndex = 0;
  for (Coll coll : cfg.colls) {
    for (chorusDataType_t type : cfg.types) {
      std::vector<chorusRedOp_t> ops = reduces(coll) ? cfg.ops : std::vector<chorusRedOp_t>{chorusSum};
      for (chorusRedOp_t op : ops) {
        for (size_t count : cfg.counts) {
          std::vector<int> roots = {0};
          if (rooted(coll)) {
            roots.clear();
            if (count > 100000 && !cfg.allRootsForLargeCounts) {
              roots = n > 1 ? std::vector<int>{0, n - 1} : std::vector<int>{0};
            } else {
              for (int r = 0; r < n; ++r) roots.push_back(r);
            }
          }
          for (int root : roots) {
            for (bool inPlace : {false, true}) {
              CollCase c{coll, type, op, count, inPlace, root, cfg.seed + caseIndex};
              const bool onStream = cfg.useStream && caseIndex % 2 == 0;
              ++caseIndex;
              bool callFailed = false;
              std::string f = runCase(comm, stream, c, rank, n, onStream, cfg.shared, caseIndex - 1, &callFailed);
              if (!f.empty() && failures.size() < kMaxReported) failures.push_back(f);
              if (!f.empty()) ++failed;
              // Wrong results leave every rank in step (each made the same calls), so the sweep goes on: a rank that
              // stopped alone would leave its peers waiting for it until the deadline. A call that failed may have
              // broken the communicator: the sweep stops there.
              if (callFailed) return finish();
            }
          }
        }
      }
    }
  }
  return finish();
}

}  // namespace chorus::test
