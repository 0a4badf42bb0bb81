// Under mpirun: every collective through Chorus and through Open MPI on the same random float32, float64 and
// int32 data; the results must agree (exactly for integers and for max/min and data movement; within a
// relative tolerance for floating sums and products, whose order of operations differs between libraries).
// The unique id travels by MPI_Bcast, as nccl-tests does. Exit status 0 when every rank agrees.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "chorus/chorus.h"

namespace {

int rank = 0, nranks = 1;
int failures = 0;

void fail(const std::string& what) {
  fprintf(stderr, "rank %d: MISMATCH %s\n", rank, what.c_str());
  ++failures;
}

// A Chorus call that failed counts as a mismatch of its own, with its error (its output is then unwritten,
// which must not read as wrong data).
void called(chorusResult_t rc, const std::string& what, chorusComm_t comm) {
  if (rc != chorusSuccess) fail(what + " failed: " + chorusGetErrorString(rc) + ": " + chorusGetLastError(comm));
}

template <typename T>
MPI_Datatype mpiType();
template <>
MPI_Datatype mpiType<float>() {
  return MPI_FLOAT;
}
template <>
MPI_Datatype mpiType<double>() {
  return MPI_DOUBLE;
}
template <>
MPI_Datatype mpiType<int32_t>() {
  return MPI_INT32_T;
}

template <typename T>
chorusDataType_t chorusType();
template <>
chorusDataType_t chorusType<float>() {
  return chorusFloat32;
}
template <>
chorusDataType_t chorusType<double>() {
  return chorusFloat64;
}
template <>
chorusDataType_t chorusType<int32_t>() {
  return chorusInt32;
}

template <typename T>
std::vector<T> randomData(size_t n, uint64_t seed, bool forProd) {
  std::mt19937_64 g(seed * 1000003 + rank);
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_integral_v<T>) {
      x = forProd ? static_cast<T>(g() % 3 + 1) : static_cast<T>(g() % 2000001) - 1000000;
    } else {
      std::uniform_real_distribution<double> d(forProd ? 0.5 : -100.0, forProd ? 1.5 : 100.0);
      x = static_cast<T>(d(g));
    }
  }
  return v;
}

template <typename T>
void compare(const std::string& what, const std::vector<T>& got, const std::vector<T>& want, bool exact) {
  const double tol = std::is_same_v<T, float> ? 1e-4 : 1e-10;
  for (size_t i = 0; i < got.size(); ++i) {
    double g = got[i], w = want[i];
    bool ok = exact ? g == w : std::fabs(g - w) <= tol * std::max(1.0, std::fabs(w)) * nranks;
    if (!ok) {
      fail(what + " element " + std::to_string(i) + ": chorus " + std::to_string(g) + ", MPI " + std::to_string(w));
      return;
    }
  }
}

template <typename T>
void runAll(chorusComm_t comm, size_t count, uint64_t seed) {
  const std::string tname = std::is_same_v<T, float> ? "float32" : std::is_same_v<T, double> ? "float64" : "int32";
  const MPI_Datatype mt = mpiType<T>();
  const chorusDataType_t ct = chorusType<T>();
  const bool isInt = std::is_integral_v<T>;
  struct OpPair {
    chorusRedOp_t c;
    MPI_Op m;
    const char* name;
  };
  const OpPair ops[] = {{chorusSum, MPI_SUM, "sum"},
                        {chorusProd, MPI_PROD, "prod"},
                        {chorusMax, MPI_MAX, "max"},
                        {chorusMin, MPI_MIN, "min"},
                        {chorusAvg, MPI_SUM, "avg"}};
  for (const OpPair& op : ops) {
    const bool exact = isInt || op.c == chorusMax || op.c == chorusMin;
    std::vector<T> in = randomData<T>(count, seed, op.c == chorusProd);
    std::vector<T> c(count), m(count);
    std::string tag = tname + " " + op.name + " count " + std::to_string(count);
    // All-reduce.
    called(chorusAllReduce(in.data(), c.data(), count, ct, op.c, comm, nullptr), "AllReduce " + tag, comm);
    MPI_Allreduce(in.data(), m.data(), static_cast<int>(count), mt, op.m, MPI_COMM_WORLD);
    if (op.c == chorusAvg) {
      for (auto& x : m) x = isInt ? static_cast<T>(static_cast<int64_t>(x) / nranks) : static_cast<T>(x / nranks);
    }
    compare("AllReduce " + tag, c, m, exact);
    // Reduce to the last rank.
    const int root = nranks - 1;
    std::fill(c.begin(), c.end(), T(0));
    called(chorusReduce(in.data(), c.data(), count, ct, op.c, root, comm, nullptr), "Reduce " + tag, comm);
    MPI_Reduce(in.data(), m.data(), static_cast<int>(count), mt, op.m, root, MPI_COMM_WORLD);
    if (op.c == chorusAvg && rank == root) {
      for (auto& x : m) x = isInt ? static_cast<T>(static_cast<int64_t>(x) / nranks) : static_cast<T>(x / nranks);
    }
    if (rank == root) compare("Reduce " + tag, c, m, exact);
    // Reduce-scatter.
    std::vector<T> big = randomData<T>(count * nranks, seed + 7, op.c == chorusProd);
    std::vector<T> cs(count), ms(count);
    called(chorusReduceScatter(big.data(), cs.data(), count, ct, op.c, comm, nullptr), "ReduceScatter " + tag, comm);
    MPI_Reduce_scatter_block(big.data(), ms.data(), static_cast<int>(count), mt, op.m, MPI_COMM_WORLD);
    if (op.c == chorusAvg) {
      for (auto& x : ms) x = isInt ? static_cast<T>(static_cast<int64_t>(x) / nranks) : static_cast<T>(x / nranks);
    }
    compare("ReduceScatter " + tag, cs, ms, exact);
  }
  // Data movement: exact.
  std::vector<T> in = randomData<T>(count * nranks, seed + 11, false);
  std::vector<T> c(count * nranks), m(count * nranks);
  std::string tag = tname + " count " + std::to_string(count);
  called(chorusAllGather(in.data(), c.data(), count, ct, comm, nullptr), "AllGather " + tag, comm);
  MPI_Allgather(in.data(), static_cast<int>(count), mt, m.data(), static_cast<int>(count), mt, MPI_COMM_WORLD);
  compare("AllGather " + tag, c, m, true);
  called(chorusAlltoAll(in.data(), c.data(), count, ct, comm, nullptr), "AlltoAll " + tag, comm);
  MPI_Alltoall(in.data(), static_cast<int>(count), mt, m.data(), static_cast<int>(count), mt, MPI_COMM_WORLD);
  compare("AlltoAll " + tag, c, m, true);
  for (int root = 0; root < nranks; ++root) {
    std::vector<T> cb(in.begin(), in.begin() + count), mb(cb);
    if (rank != root) std::fill(cb.begin(), cb.end(), T(0));
    called(chorusBroadcast(cb.data(), cb.data(), count, ct, root, comm, nullptr), "Broadcast " + tag, comm);
    MPI_Bcast(mb.data(), static_cast<int>(count), mt, root, MPI_COMM_WORLD);
    compare("Broadcast root " + std::to_string(root) + " " + tag, cb, mb, true);
    std::fill(c.begin(), c.end(), T(0));
    std::fill(m.begin(), m.end(), T(0));
    called(chorusGather(in.data(), c.data(), count, ct, root, comm, nullptr), "Gather " + tag, comm);
    MPI_Gather(in.data(), static_cast<int>(count), mt, m.data(), static_cast<int>(count), mt, root, MPI_COMM_WORLD);
    if (rank == root) compare("Gather root " + std::to_string(root) + " " + tag, c, m, true);
    std::vector<T> cr(count), mr(count);
    called(chorusScatter(in.data(), cr.data(), count, ct, root, comm, nullptr), "Scatter " + tag, comm);
    MPI_Scatter(in.data(), static_cast<int>(count), mt, mr.data(), static_cast<int>(count), mt, root, MPI_COMM_WORLD);
    compare("Scatter root " + std::to_string(root) + " " + tag, cr, mr, true);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  chorusUniqueId id;
  if (rank == 0 && chorusGetUniqueId(&id) != chorusSuccess) MPI_Abort(MPI_COMM_WORLD, 2);
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  chorusComm_t comm;
  if (chorusCommInitRank(&comm, nranks, id, rank) != chorusSuccess) {
    fprintf(stderr, "rank %d: init failed: %s\n", rank, chorusGetLastError(nullptr));
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  for (size_t count : {size_t(1), size_t(1000), size_t(262147)}) {
    runAll<float>(comm, count, 1);
    runAll<double>(comm, count, 2);
    runAll<int32_t>(comm, count, 3);
  }
  called(chorusCommFinalize(comm), "CommFinalize", comm);
  called(chorusCommDestroy(comm), "CommDestroy", nullptr);
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("mpi_compare: %d ranks, %d mismatches\n", nranks, total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
