#include "mpi_backend.h"

#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <cstring>

namespace chorus::perf {
namespace {

// half, bfloat16 and the float8 types are opaque to MPI: contiguous bytes with user-defined reductions that
// decode each element, combine in double (exact for the checker's inputs) and encode back.
MPI_Datatype gHalf = MPI_DATATYPE_NULL;
MPI_Datatype gBf16 = MPI_DATATYPE_NULL;
MPI_Datatype gE4m3 = MPI_DATATYPE_NULL;
MPI_Datatype gE5m2 = MPI_DATATYPE_NULL;
MPI_Op gOps[4] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};  // sum, prod, max, min

chorusDataType_t customType(MPI_Datatype dt) {
  if (dt == gHalf) return chorusFloat16;
  if (dt == gBf16) return chorusBfloat16;
  if (dt == gE4m3) return chorusFloat8e4m3;
  return chorusFloat8e5m2;
}

template <chorusRedOp_t Op>
void customReduce(void* in, void* inout, int* len, MPI_Datatype* dt) {
  const chorusDataType_t type = customType(*dt);
  const size_t size = typeSize(type);
  char* a = static_cast<char*>(in);
  char* b = static_cast<char*>(inout);
  for (int i = 0; i < *len; ++i) {
    const double x = loadFloat(a + i * size, type);
    const double y = loadFloat(b + i * size, type);
    double r = x + y;
    if (Op == chorusProd) r = x * y;
    if (Op == chorusMax) r = x > y ? x : y;
    if (Op == chorusMin) r = x < y ? x : y;
    storeFloat(b + i * size, type, r);
  }
}

MPI_Datatype mpiType(chorusDataType_t type) {
  switch (type) {
    case chorusInt8: return MPI_INT8_T;
    case chorusUint8: return MPI_UINT8_T;
    case chorusInt32: return MPI_INT32_T;
    case chorusUint32: return MPI_UINT32_T;
    case chorusInt64: return MPI_INT64_T;
    case chorusUint64: return MPI_UINT64_T;
    case chorusFloat32: return MPI_FLOAT;
    case chorusFloat64: return MPI_DOUBLE;
    case chorusFloat16: return gHalf;
    case chorusBfloat16: return gBf16;
    case chorusFloat8e4m3: return gE4m3;
    default: return gE5m2;
  }
}

bool isCustom(chorusDataType_t type) {
  return type == chorusFloat16 || type == chorusBfloat16 || type == chorusFloat8e4m3 || type == chorusFloat8e5m2;
}

MPI_Op mpiOp(chorusDataType_t type, chorusRedOp_t op) {
  const int index = op == chorusAvg ? 0 : static_cast<int>(op);  // avg: a sum, divided afterwards
  if (isCustom(type)) return gOps[index];
  static const MPI_Op kBuiltin[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
  return kBuiltin[index];
}

void divideBy(void* buf, size_t count, chorusDataType_t type, int n) {
  const size_t size = typeSize(type);
  char* p = static_cast<char*>(buf);
  for (size_t i = 0; i < count; ++i) {
    if (isFloatType(type)) {
      storeFloat(p + i * size, type, loadFloat(p + i * size, type) / n);
    } else {
      storeInt(p + i * size, type, loadInt(p + i * size, type) / n);
    }
  }
}

MPI_Datatype makeBytes(int n) {
  MPI_Datatype t;
  MPI_Type_contiguous(n, MPI_BYTE, &t);
  MPI_Type_commit(&t);
  return t;
}

// The hypercube all-gather of nccl-tests' hypercube_perf over MPI_Sendrecv: at step `mask` each rank swaps
// the mask blocks it holds with rank ^ mask.
int hyperCube(const CallArgs& c, MPI_Datatype dt) {
  const size_t rankBytes = c.count * typeSize(c.type);
  char* rbuf = static_cast<char*>(c.recv);
  if (rbuf + c.rank * rankBytes != c.send) std::memcpy(rbuf + c.rank * rankBytes, c.send, rankBytes);
  for (int mask = 1; mask < c.nranks; mask <<= 1) {
    const int s = c.rank & ~(mask - 1);
    const int r = s ^ mask;
    const int n = static_cast<int>(c.count) * mask;
    int err = MPI_Sendrecv(rbuf + s * rankBytes, n, dt, c.rank ^ mask, 0, rbuf + r * rankBytes, n, dt, c.rank ^ mask, 0,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (err != MPI_SUCCESS) return err;
  }
  return MPI_SUCCESS;
}

}  // namespace

bool launchedByMpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

void mpiInit(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
  gHalf = makeBytes(2);
  gBf16 = makeBytes(2);
  gE4m3 = makeBytes(1);
  gE5m2 = makeBytes(1);
  MPI_Op_create(&customReduce<chorusSum>, 1, &gOps[0]);
  MPI_Op_create(&customReduce<chorusProd>, 1, &gOps[1]);
  MPI_Op_create(&customReduce<chorusMax>, 1, &gOps[2]);
  MPI_Op_create(&customReduce<chorusMin>, 1, &gOps[3]);
}

void mpiFinalize() {
  for (MPI_Op& op : gOps) MPI_Op_free(&op);
  for (MPI_Datatype* t : {&gHalf, &gBf16, &gE4m3, &gE5m2}) MPI_Type_free(t);
  MPI_Finalize();
}

std::string mpiLibraryVersion() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, static_cast<size_t>(len));
  const size_t cut = s.find_first_of(",\n");
  return cut == std::string::npos ? s : s.substr(0, cut);
}

MpiProcessGroup::MpiProcessGroup() {
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
}

void MpiProcessGroup::barrier() {
  MPI_Barrier(MPI_COMM_WORLD);
}

void MpiProcessGroup::allreduce(double* value, ReduceMode mode) {
  if (mode == ReduceMode::kRank0) {
    MPI_Bcast(value, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return;
  }
  MPI_Op op = mode == ReduceMode::kMin ? MPI_MIN : mode == ReduceMode::kMax ? MPI_MAX : MPI_SUM;
  MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_DOUBLE, op, MPI_COMM_WORLD);
}

void MpiProcessGroup::allreduce(int64_t* value, ReduceMode mode) {
  if (mode == ReduceMode::kRank0) {
    MPI_Bcast(value, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    return;
  }
  MPI_Op op = mode == ReduceMode::kMin ? MPI_MIN : mode == ReduceMode::kMax ? MPI_MAX : MPI_SUM;
  MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_INT64_T, op, MPI_COMM_WORLD);
}

void mpiBroadcastId(chorusUniqueId* id) {
  MPI_Bcast(id, sizeof(*id), MPI_BYTE, 0, MPI_COMM_WORLD);
}

std::vector<std::string> mpiGatherText(const std::string& local) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int len = static_cast<int>(local.size());
  std::vector<int> lens(static_cast<size_t>(size));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> displs(static_cast<size_t>(size), 0);
  int total = 0;
  for (int p = 0; p < size; ++p) {
    displs[p] = total;
    total += lens[p];
  }
  std::string all(static_cast<size_t>(rank == 0 ? total : 0), '\0');
  MPI_Gatherv(local.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (rank == 0) {
    for (int p = 0; p < size; ++p)
      out.push_back(all.substr(static_cast<size_t>(displs[p]), static_cast<size_t>(lens[p])));
  }
  return out;
}

int mpiMaxStatus(int status) {
  MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return status;
}

int mpiRunCollective(CollKind kind, const CallArgs& c, std::string* error) {
  if (c.count * static_cast<size_t>(c.nranks) > static_cast<size_t>(INT_MAX)) {
    *error = "count too large for MPI's int counts";
    return MPI_ERR_COUNT;
  }
  const MPI_Datatype dt = mpiType(c.type);
  const MPI_Op op = mpiOp(c.type, c.op);
  const int n = static_cast<int>(c.count);
  const MPI_Comm w = MPI_COMM_WORLD;
  void* send = const_cast<void*>(c.send);
  const bool isRoot = c.rank == c.root;
  int err = MPI_SUCCESS;
  switch (kind) {
    case CollKind::kAllReduce:
      err = MPI_Allreduce(c.inPlace ? MPI_IN_PLACE : send, c.recv, n, dt, op, w);
      if (err == MPI_SUCCESS && c.op == chorusAvg) divideBy(c.recv, c.count, c.type, c.nranks);
      break;
    case CollKind::kAllGather: err = MPI_Allgather(c.inPlace ? MPI_IN_PLACE : send, n, dt, c.recv, n, dt, w); break;
    case CollKind::kReduceScatter: {
      // In place, MPI takes the input from the receive buffer and leaves block `rank` at its start.
      void* out = c.inPlace ? send : c.recv;
      err = MPI_Reduce_scatter_block(c.inPlace ? MPI_IN_PLACE : send, out, n, dt, op, w);
      if (err == MPI_SUCCESS && c.op == chorusAvg) divideBy(out, c.count, c.type, c.nranks);
      break;
    }
    case CollKind::kBroadcast:
      if (isRoot && c.recv != c.send) std::memcpy(c.recv, c.send, c.count * typeSize(c.type));
      err = MPI_Bcast(c.recv, n, dt, c.root, w);
      break;
    case CollKind::kReduce:
      err = MPI_Reduce(c.inPlace && isRoot ? MPI_IN_PLACE : send, c.recv, n, dt, op, c.root, w);
      if (err == MPI_SUCCESS && isRoot && c.op == chorusAvg) divideBy(c.recv, c.count, c.type, c.nranks);
      break;
    case CollKind::kAlltoAll: err = MPI_Alltoall(c.inPlace ? MPI_IN_PLACE : send, n, dt, c.recv, n, dt, w); break;
    case CollKind::kGather:
      err = MPI_Gather(c.inPlace && isRoot ? MPI_IN_PLACE : send, n, dt, c.recv, n, dt, c.root, w);
      break;
    case CollKind::kScatter:
      err = MPI_Scatter(send, n, dt, c.inPlace && isRoot ? MPI_IN_PLACE : c.recv, n, dt, c.root, w);
      break;
    case CollKind::kSendRecv: {
      const int next = (c.rank + 1) % c.nranks;
      const int prev = (c.rank - 1 + c.nranks) % c.nranks;
      if (c.inPlace) {
        err = MPI_Sendrecv_replace(c.recv, n, dt, next, 0, prev, 0, w, MPI_STATUS_IGNORE);
      } else {
        err = MPI_Sendrecv(send, n, dt, next, 0, c.recv, n, dt, prev, 0, w, MPI_STATUS_IGNORE);
      }
      break;
    }
    case CollKind::kHyperCube: err = hyperCube(c, dt); break;
  }
  if (err != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, text, &len);
    *error = std::string(text, static_cast<size_t>(len));
  }
  return err;
}

const void* mpiResult(CollKind kind, const CallArgs& call) {
  return kind == CollKind::kReduceScatter && call.inPlace ? call.send : call.recv;
}

}  // namespace chorus::perf
