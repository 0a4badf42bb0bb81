#include "coll/sweep.h"

#include <cstring>
#include <memory>
#include <mutex>

#include "common/test_data.h"

namespace chorus::test {

namespace {

constexpr size_t kGuard = 64;
constexpr unsigned char kGuardByte = 0xA5;

bool reduces(Coll c) {
  return c == Coll::kAllReduce || c == Coll::kReduce || c == Coll::kReduceScatter;
}
bool rooted(Coll c) {
  return c == Coll::kBroadcast || c == Coll::kReduce || c == Coll::kGather || c == Coll::kScatter;
}

// A buffer with guard bytes after its end.
struct Buffer {
  std::unique_ptr<char[]> mem;
  size_t bytes = 0;
  explicit Buffer(size_t n) : mem(new char[n + kGuard + 64]), bytes(n) {
    memset(mem.get(), 0, n);
    memset(mem.get() + n, kGuardByte, kGuard);
  }
  char* data() { return mem.get(); }
  bool guardIntact() const {
    for (size_t i = 0; i < kGuard; ++i) {
      if (static_cast<unsigned char>(mem[bytes + i]) != kGuardByte) return false;
    }
    return true;
  }
};

struct Case {
  Coll coll;
  chorusDataType_t type;
  chorusRedOp_t op;
  size_t count;
  bool inPlace;
  int root;
  uint64_t seed;
  bool onStream;
};

// The expected reductions of the case being run, computed once per process and shared by the thread ranks
// (which run the same case at about the same time): computing them costs nranks input evaluations per
// element, the most expensive part of the sweep.
std::shared_ptr<const std::vector<double>> expectedReductions(const Case& c, int n, size_t elems) {
  struct Entry {
    std::string key;
    std::shared_ptr<const std::vector<double>> values;
  };
  static std::mutex mu;
  static Entry cache;
  std::string key = std::to_string(c.type) + "/" + std::to_string(c.op) + "/" + std::to_string(n) + "/" +
                    std::to_string(c.seed) + "/" + std::to_string(elems);
  std::lock_guard<std::mutex> lock(mu);
  if (cache.key != key) {
    auto v = std::make_shared<std::vector<double>>(elems);
    for (size_t i = 0; i < elems; ++i) (*v)[i] = expectedReduce(c.type, c.op, n, i, c.seed);
    cache = Entry{key, v};
  }
  return cache.values;
}

std::string describe(const Case& c, int rank) {
  return std::string(collName(c.coll)) + " " + typeName(c.type) + " " + opName(c.op) + " count " +
         std::to_string(c.count) + (c.inPlace ? " in-place" : " out-of-place") + " root " + std::to_string(c.root) +
         (c.onStream ? " stream" : " blocking") + " on rank " + std::to_string(rank);
}

// Runs one case; returns "" or a failure description.
std::string runCase(chorusComm_t comm, chorusStream_t stream, const Case& c, int rank, int n) {
  const size_t elt = typeSize(c.type);
  const size_t cnt = c.count;
  const size_t block = cnt * elt;
  chorusStream_t s = c.onStream ? stream : nullptr;
  // Sizes of the send and receive buffers on this rank.
  size_t inElems = cnt, outElems = cnt;
  switch (c.coll) {
    case Coll::kAllGather: outElems = cnt * n; break;
    case Coll::kReduceScatter: inElems = cnt * n; break;
    case Coll::kAllToAll: inElems = outElems = cnt * n; break;
    case Coll::kGather: outElems = cnt * n; break;
    case Coll::kScatter: inElems = cnt * n; break;
    default: break;
  }
  Buffer sendBuf(inElems * elt);
  Buffer recvBuf(outElems * elt);
  char* send = sendBuf.data();
  char* recv = recvBuf.data();
  // The input this rank contributes, written where the in-place layout wants it.
  const chorusRedOp_t fillOp = reduces(c.coll) ? c.op : chorusSum;
  if (c.inPlace) {
    switch (c.coll) {
      case Coll::kAllGather: send = recv + rank * block; break;
      case Coll::kReduceScatter: recv = send + rank * block; break;
      case Coll::kGather:
        if (rank == c.root) send = recv + c.root * block;
        break;
      case Coll::kScatter:
        if (rank == c.root) recv = send + c.root * block;
        break;
      default: send = recv; break;
    }
  }
  fillInput(send, c.type, fillOp, rank, inElems, c.seed);
  if (c.coll == Coll::kAllToAll && c.inPlace) fillInput(recv, c.type, fillOp, rank, inElems, c.seed);

  chorusResult_t rc = chorusSuccess;
  switch (c.coll) {
    case Coll::kAllReduce: rc = chorusAllReduce(send, recv, cnt, c.type, c.op, comm, s); break;
    case Coll::kBroadcast: rc = chorusBroadcast(send, recv, cnt, c.type, c.root, comm, s); break;
    case Coll::kReduce: rc = chorusReduce(send, recv, cnt, c.type, c.op, c.root, comm, s); break;
    case Coll::kAllGather: rc = chorusAllGather(send, recv, cnt, c.type, comm, s); break;
    case Coll::kReduceScatter: rc = chorusReduceScatter(send, recv, cnt, c.type, c.op, comm, s); break;
    case Coll::kAllToAll: rc = chorusAlltoAll(send, recv, cnt, c.type, comm, s); break;
    case Coll::kGather: rc = chorusGather(send, recv, cnt, c.type, c.root, comm, s); break;
    case Coll::kScatter: rc = chorusScatter(send, recv, cnt, c.type, c.root, comm, s); break;
  }
  if (rc == chorusSuccess && s != nullptr) rc = chorusStreamSynchronize(s);
  if (rc != chorusSuccess) {
    return describe(c, rank) + ": returned " + chorusGetErrorString(rc) + ": " + chorusGetLastError(comm);
  }
  if (!sendBuf.guardIntact() || !recvBuf.guardIntact()) return describe(c, rank) + ": wrote past a buffer's end";

  std::string first;
  size_t wrong = 0;
  auto value = [&](int r, size_t i) { return inputValue(c.type, fillOp, r, i, c.seed); };
  std::shared_ptr<const std::vector<double>> expected;
  if (reduces(c.coll) && (c.coll != Coll::kReduce || rank == c.root)) {
    expected = expectedReductions(c, n, c.coll == Coll::kReduceScatter ? cnt * n : cnt);
  }
  auto red = [&](size_t i) { return (*expected)[i]; };
  switch (c.coll) {
    case Coll::kAllReduce: wrong = countWrong(recv, c.type, c.op, n, cnt, red, &first); break;
    case Coll::kReduce:
      if (rank == c.root) wrong = countWrong(recv, c.type, c.op, n, cnt, red, &first);
      break;
    case Coll::kReduceScatter:
      wrong = countWrong(
          recv, c.type, c.op, n, cnt, [&](size_t i) { return red(rank * cnt + i); }, &first);
      break;
    case Coll::kBroadcast:
      wrong = countWrong(
          recv, c.type, chorusSum, n, cnt, [&](size_t i) { return value(c.root, i); }, &first);
      break;
    case Coll::kAllGather:
      wrong = countWrong(
          recv, c.type, chorusSum, n, cnt * n, [&](size_t i) { return value(i / cnt, i % cnt); }, &first);
      break;
    case Coll::kAllToAll:
      // Block j of this rank's output is block `rank` of rank j's input.
      wrong = countWrong(
          recv, c.type, chorusSum, n, cnt * n, [&](size_t i) { return value(i / cnt, rank * cnt + i % cnt); }, &first);
      break;
    case Coll::kGather:
      if (rank == c.root) {
        wrong = countWrong(
            recv, c.type, chorusSum, n, cnt * n, [&](size_t i) { return value(i / cnt, i % cnt); }, &first);
      }
      break;
    case Coll::kScatter:
      wrong = countWrong(
          recv, c.type, chorusSum, n, cnt, [&](size_t i) { return value(c.root, rank * cnt + i); }, &first);
      break;
  }
  if (wrong != 0) return describe(c, rank) + ": " + std::to_string(wrong) + " wrong elements, first " + first;
  return "";
}

}  // namespace

const char* collName(Coll c) {
  static const char* names[] = {"AllReduce",     "Broadcast", "Reduce", "AllGather",
                                "ReduceScatter", "AlltoAll",  "Gather", "Scatter"};
  return names[static_cast<int>(c)];
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

std::vector<std::string> runSweep(chorusComm_t comm, const SweepConfig& cfg) {
  int rank = 0, n = 1;
  chorusCommUserRank(comm, &rank);
  chorusCommCount(comm, &n);
  chorusStream_t stream = nullptr;
  if (cfg.useStream && chorusStreamCreate(&stream) != chorusSuccess) return {"chorusStreamCreate failed"};
  std::vector<std::string> failures;
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
              roots = {0};
              if (n > 1) roots.push_back(n - 1);
            } else {
              for (int r = 0; r < n; ++r) roots.push_back(r);
            }
          }
          for (int root : roots) {
            for (bool inPlace : {false, true}) {
              Case c{coll, type, op, count, inPlace, root, cfg.seed + caseIndex, cfg.useStream && caseIndex % 2 == 0};
              ++caseIndex;
              std::string f = runCase(comm, stream, c, rank, n);
              if (!f.empty()) failures.push_back(f);
              if (failures.size() > 20) {
                if (stream != nullptr) chorusStreamDestroy(stream);
                return failures;
              }
            }
          }
        }
      }
    }
  }
  if (stream != nullptr) chorusStreamDestroy(stream);
  return failures;
}

}  // namespace chorus::test
