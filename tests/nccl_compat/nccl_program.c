/* A program written for NCCL: it includes the CUDA toolkit's own nccl.h, links -lnccl, and knows nothing of
 * Chorus. Run against Chorus's libnccl.so.2 on CPU ranks (host buffers, the NULL stream), it checks every
 * element of every result of NCCL's API:
 *   nccl_program threads N     ncclCommInitAll(NULL devlist) and one thread per rank
 *   nccl_program ids N         ncclGetUniqueId + non-blocking ncclCommInitRankConfig, one thread per rank
 *   nccl_program group N       one thread creates every rank with ncclCommInitRank between ncclGroupStart and
 *                              ncclGroupEnd (NCCL's "several devices per thread"), then one thread per rank
 *   nccl_program timeout       a receive nobody answers ends with an NCCL code (ncclRemoteError)
 *   nccl_program mpi           (built with NCCL_PROGRAM_MPI, under mpirun) the id travels by MPI_Bcast
 * Exit status 0 when everything matched; the first mismatch is printed. */
#define _GNU_SOURCE /* dladdr: which libnccl.so.2 was loaded */
#include <dlfcn.h>
#include <nccl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef NCCL_PROGRAM_MPI
#include <mpi.h>
#endif

#define CHECK(cond, ...)                                             \
  do {                                                               \
    if (!(cond)) {                                                   \
      fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                  \
      fprintf(stderr, "\n");                                         \
      return 1;                                                      \
    }                                                                \
  } while (0)
#define NCCL(call)                                                                                                 \
  do {                                                                                                             \
    ncclResult_t r_ = (call);                                                                                      \
    CHECK(r_ == ncclSuccess, "%s -> %d (%s): %s", #call, (int)r_, ncclGetErrorString(r_), ncclGetLastError(comm)); \
  } while (0)

enum { kCount = 1000 };

/* Every collective of nccl.h on `comm` (rank `rank` of `n`), checked element by element. */
static int battery(ncclComm_t comm, int rank, int n) {
  int count = -1, me = -1, dev = -99;
  NCCL(ncclCommCount(comm, &count));
  NCCL(ncclCommUserRank(comm, &me));
  NCCL(ncclCommCuDevice(comm, &dev));
  CHECK(count == n && me == rank, "count %d rank %d", count, me);
  CHECK(dev == -1, "a host rank's device is -1, not %d", dev);

  /* All-reduce: every built-in op on int32, avg on float, sum on double and on wrapping uint8. */
  int32_t in[kCount], out[kCount];
  for (int i = 0; i < kCount; ++i) in[i] = (rank + 1) * (i % 7 + 1);
  const ncclRedOp_t ops[4] = {ncclSum, ncclProd, ncclMax, ncclMin};
  for (int o = 0; o < 4; ++o) {
    NCCL(ncclAllReduce(in, out, kCount, ncclInt32, ops[o], comm, NULL));
    for (int i = 0; i < kCount; ++i) {
      int32_t want = o == 1 ? 1 : o == 3 ? INT32_MAX : o == 2 ? INT32_MIN : 0;
      for (int r = 0; r < n; ++r) {
        int32_t v = (r + 1) * (i % 7 + 1);
        want = o == 0 ? want + v : o == 1 ? want * v : o == 2 ? (v > want ? v : want) : (v < want ? v : want);
      }
      CHECK(out[i] == want, "allreduce op %d element %d: %d, expected %d", o, i, out[i], want);
    }
  }
  float fin[kCount], fout[kCount];
  for (int i = 0; i < kCount; ++i) fin[i] = (float)(n * (i % 5));
  NCCL(ncclAllReduce(fin, fout, kCount, ncclFloat32, ncclAvg, comm, NULL));
  for (int i = 0; i < kCount; ++i) CHECK(fout[i] == (float)(n * (i % 5)), "avg element %d: %g", i, fout[i]);
  uint8_t bin[kCount];
  for (int i = 0; i < kCount; ++i) bin[i] = (uint8_t)(200 + rank + i);
  NCCL(ncclAllReduce(bin, bin, kCount, ncclUint8, ncclSum, comm, NULL)); /* in place */
  for (int i = 0; i < kCount; ++i) {
    unsigned want = 0;
    for (int r = 0; r < n; ++r) want += (uint8_t)(200 + r + i);
    CHECK(bin[i] == (uint8_t)want, "uint8 sum element %d", i);
  }

  /* PreMulSum: a host scalar, applied before summing. */
  double scalar = 0.5, din[kCount], dout[kCount];
  ncclRedOp_t premul;
  NCCL(ncclRedOpCreatePreMulSum(&premul, &scalar, ncclFloat64, ncclScalarHostImmediate, comm));
  for (int i = 0; i < kCount; ++i) din[i] = (double)(rank + 1) * i;
  NCCL(ncclAllReduce(din, dout, kCount, ncclFloat64, premul, comm, NULL));
  for (int i = 0; i < kCount; ++i) CHECK(dout[i] == 0.5 * i * n * (n + 1) / 2, "premulsum element %d: %g", i, dout[i]);
  NCCL(ncclRedOpDestroy(premul, comm));

  /* Broadcast (out of place, last root), Bcast (in place, root 0), Reduce (to root 1 % n). */
  for (int i = 0; i < kCount; ++i) in[i] = rank == n - 1 ? i * 3 : -1;
  NCCL(ncclBroadcast(in, out, kCount, ncclInt32, n - 1, comm, NULL));
  for (int i = 0; i < kCount; ++i) CHECK(out[i] == i * 3, "broadcast element %d", i);
  for (int i = 0; i < kCount; ++i) out[i] = rank == 0 ? i + 5 : 0;
  NCCL(ncclBcast(out, kCount, ncclInt32, 0, comm, NULL));
  for (int i = 0; i < kCount; ++i) CHECK(out[i] == i + 5, "bcast element %d", i);
  for (int i = 0; i < kCount; ++i) in[i] = rank * kCount + i;
  NCCL(ncclReduce(in, out, kCount, ncclInt32, ncclMax, 1 % n, comm, NULL));
  if (rank == 1 % n) {
    for (int i = 0; i < kCount; ++i) CHECK(out[i] == (n - 1) * kCount + i, "reduce element %d", i);
  }

  /* All-gather, reduce-scatter (out of place and in place), all-to-all, gather, scatter. */
  int64_t* big = malloc(sizeof(int64_t) * kCount * n);
  int64_t* big2 = malloc(sizeof(int64_t) * kCount * n);
  int64_t small[kCount];
  for (int i = 0; i < kCount; ++i) small[i] = (int64_t)rank * 100000 + i;
  NCCL(ncclAllGather(small, big, kCount, ncclInt64, comm, NULL));
  for (int r = 0; r < n; ++r)
    for (int i = 0; i < kCount; ++i) CHECK(big[r * kCount + i] == (int64_t)r * 100000 + i, "allgather %d,%d", r, i);
  for (int j = 0; j < n * kCount; ++j) big[j] = j + rank;
  NCCL(ncclReduceScatter(big, small, kCount, ncclInt64, ncclSum, comm, NULL));
  for (int i = 0; i < kCount; ++i) {
    const int64_t j = (int64_t)rank * kCount + i;
    CHECK(small[i] == n * j + (int64_t)n * (n - 1) / 2, "reducescatter element %d", i);
  }
  NCCL(ncclReduceScatter(big, big + (size_t)rank * kCount, kCount, ncclInt64, ncclSum, comm, NULL));
  for (int i = 0; i < kCount; ++i) CHECK(big[(size_t)rank * kCount + i] == small[i], "in-place reducescatter %d", i);
  for (int j = 0; j < n * kCount; ++j) big[j] = (int64_t)rank * 1000000 + j;
  NCCL(ncclAlltoAll(big, big2, kCount, ncclInt64, comm, NULL));
  for (int r = 0; r < n; ++r)
    for (int i = 0; i < kCount; ++i)
      CHECK(big2[r * kCount + i] == (int64_t)r * 1000000 + rank * kCount + i, "alltoall %d,%d", r, i);
  for (int i = 0; i < kCount; ++i) small[i] = (int64_t)rank * 7 + i;
  NCCL(ncclGather(small, big2, kCount, ncclInt64, n - 1, comm, NULL));
  if (rank == n - 1) {
    for (int r = 0; r < n; ++r)
      for (int i = 0; i < kCount; ++i) CHECK(big2[r * kCount + i] == (int64_t)r * 7 + i, "gather %d,%d", r, i);
  }
  for (int j = 0; j < n * kCount; ++j) big[j] = rank == 0 ? j * 2 : -1;
  NCCL(ncclScatter(big, small, kCount, ncclInt64, 0, comm, NULL));
  for (int i = 0; i < kCount; ++i) CHECK(small[i] == 2 * ((int64_t)rank * kCount + i), "scatter element %d", i);
  free(big);
  free(big2);

  /* Send/receive around the ring, in a group; then a group whose end is only simulated. */
  for (int i = 0; i < kCount; ++i) in[i] = rank * 10 + i;
  NCCL(ncclGroupStart());
  NCCL(ncclSend(in, kCount, ncclInt32, (rank + 1) % n, comm, NULL));
  NCCL(ncclRecv(out, kCount, ncclInt32, (rank + n - 1) % n, comm, NULL));
  NCCL(ncclGroupEnd());
  for (int i = 0; i < kCount; ++i) CHECK(out[i] == ((rank + n - 1) % n) * 10 + i, "sendrecv element %d", i);
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  NCCL(ncclGroupStart());
  NCCL(ncclAllReduce(fin, fout, kCount, ncclFloat32, ncclSum, comm, NULL));
  NCCL(ncclGroupSimulateEnd(&sim));
  CHECK(sim.estimatedTime > 0, "simulated time %g", sim.estimatedTime);

  /* ncclMemAlloc'd buffers, a registration and a window. */
  void* mem = NULL;
  NCCL(ncclMemAlloc(&mem, kCount * sizeof(int32_t)));
  void* handle = NULL;
  NCCL(ncclCommRegister(comm, mem, kCount * sizeof(int32_t), &handle));
  ncclWindow_t win;
  NCCL(ncclCommWindowRegister(comm, mem, kCount * sizeof(int32_t), &win, NCCL_WIN_COLL_SYMMETRIC));
  for (int i = 0; i < kCount; ++i) ((int32_t*)mem)[i] = i;
  NCCL(ncclAllReduce(mem, mem, kCount, ncclInt32, ncclSum, comm, NULL));
  for (int i = 0; i < kCount; ++i) CHECK(((int32_t*)mem)[i] == n * i, "registered buffer element %d", i);
  NCCL(ncclCommWindowDeregister(comm, win));
  NCCL(ncclCommDeregister(comm, handle));
  NCCL(ncclMemFree(mem));

  /* Split with an NCCL config, as NCCL's documentation shows. */
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.commName = "halves";
  ncclComm_t half = NULL;
  NCCL(ncclCommSplit(comm, rank % 2, rank, &half, &config));
  int32_t one = 1, members = 0;
  ncclResult_t hr = ncclAllReduce(&one, &members, 1, ncclInt32, ncclSum, half, NULL);
  CHECK(hr == ncclSuccess && members == (n - rank % 2 + 1) / 2, "split: %d members", members);
  NCCL(ncclCommDestroy(half));

  /* A config that was not initialized: rejected, the message naming the caller's struct (NCCL's 80 bytes). */
  ncclConfig_t uninit = NCCL_CONFIG_INITIALIZER;
  uninit.magic = 0;
  ncclComm_t none = NULL;
  ncclResult_t ur = ncclCommSplit(comm, 0, rank, &none, &uninit);
  CHECK(ur == ncclInvalidArgument && none == NULL, "a split with an uninitialized config gives %d", (int)ur);
  CHECK(strstr(ncclGetLastError(NULL), "size 80, magic 0x0") != NULL, "last error: %s", ncclGetLastError(NULL));

  /* Errors: NCCL's codes, and a message naming the argument. */
  ncclResult_t bad = ncclAllReduce(in, out, kCount, ncclNumTypes, ncclSum, comm, NULL);
  CHECK(bad == ncclInvalidArgument, "a bad datatype gives %d", (int)bad);
  CHECK(strstr(ncclGetLastError(comm), "datatype") != NULL, "last error: %s", ncclGetLastError(comm));
  ncclResult_t async = ncclInternalError;
  NCCL(ncclCommGetAsyncError(comm, &async));
  CHECK(async == ncclSuccess, "async error %d", (int)async);
  return 0;
}

struct Rank {
  ncclComm_t comm;
  ncclUniqueId id;
  int rank, n, nonblocking, status;
};

static void* runRank(void* arg) {
  struct Rank* r = arg;
  int rank = r->rank;
  ncclComm_t comm = r->comm;
  if (r->nonblocking) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclResult_t rc = ncclCommInitRankConfig(&comm, r->n, r->id, rank, &config);
    if (rc != ncclSuccess && rc != ncclInProgress) {
      fprintf(stderr, "rank %d: ncclCommInitRankConfig -> %d: %s\n", rank, (int)rc, ncclGetLastError(NULL));
      r->status = 1;
      return NULL;
    }
    ncclResult_t state = ncclInProgress;
    while (state == ncclInProgress) {
      if (ncclCommGetAsyncError(comm, &state) != ncclSuccess) break;
      usleep(1000);
    }
    if (state != ncclSuccess) {
      r->status = 2;
      return NULL;
    }
  }
  r->status = battery(comm, rank, r->n);
  if (ncclCommFinalize(comm) != ncclSuccess || ncclCommDestroy(comm) != ncclSuccess) r->status = 3;
  return NULL;
}

enum Init { kInitAll, kIds, kGroup };

static int runThreads(int n, enum Init how) {
  const int withIds = how == kIds;
  int rank = -1;
  struct Rank ranks[64];
  pthread_t threads[64];
  CHECK(n >= 1 && n <= 64, "1..64 ranks");
  ncclComm_t comms[64];
  ncclComm_t comm = NULL;
  ncclUniqueId id;
  memset(&id, 0, sizeof(id));
  if (how == kIds) {
    NCCL(ncclGetUniqueId(&id));
  } else if (how == kGroup) {
    NCCL(ncclGetUniqueId(&id));
    NCCL(ncclGroupStart());
    for (int r = 0; r < n; ++r) NCCL(ncclCommInitRank(&comms[r], n, id, r));
    NCCL(ncclGroupEnd());
  } else {
    NCCL(ncclCommInitAll(comms, n, NULL)); /* NULL devlist: NCCL's devices 0..n-1; host ranks here */
  }
  for (int r = 0; r < n; ++r) {
    ranks[r].comm = withIds ? NULL : comms[r];
    ranks[r].id = id;
    ranks[r].rank = r;
    ranks[r].n = n;
    ranks[r].nonblocking = withIds;
    ranks[r].status = -1;
    pthread_create(&threads[r], NULL, runRank, &ranks[r]);
  }
  int failed = 0;
  for (int r = 0; r < n; ++r) {
    pthread_join(threads[r], NULL);
    failed |= ranks[r].status != 0;
  }
  return failed;
}

/* CHORUS_TIMEOUT_MS is short: rank 0's receive from rank 1, who sends nothing, must end with an NCCL 2.28 code. */
static int runTimeout(void) {
  int rank = 0;
  setenv("CHORUS_TIMEOUT_MS", "300", 1);
  ncclComm_t comms[2], comm = NULL;
  NCCL(ncclCommInitAll(comms, 2, NULL));
  comm = comms[0];
  float x = 0;
  ncclResult_t rc = ncclRecv(&x, 1, ncclFloat32, 1, comms[0], NULL);
  CHECK(rc == ncclRemoteError, "a receive past the deadline gives %d, expected ncclRemoteError", (int)rc);
  CHECK(strstr(ncclGetLastError(comms[0]), "deadline") != NULL, "last error: %s", ncclGetLastError(comms[0]));
  ncclCommAbort(comms[0]);
  ncclCommAbort(comms[1]);
  return 0;
}

int main(int argc, char** argv) {
  int rank = -1;
  ncclComm_t comm = NULL;
  int version = 0;
  NCCL(ncclGetVersion(&version));
  CHECK(version == NCCL_VERSION_CODE, "ncclGetVersion %d, nccl.h says %d", version, NCCL_VERSION_CODE);
  Dl_info where;
  CHECK(dladdr((void*)ncclGetVersion, &where) && where.dli_fname, "dladdr");
  CHECK(strlen(ncclGetErrorString(ncclInvalidUsage)) > 0, "error string");
  const char* mode = argc > 1 ? argv[1] : "threads";
  int status = 1;
  if (strcmp(mode, "threads") == 0 || strcmp(mode, "ids") == 0 || strcmp(mode, "group") == 0) {
    const enum Init how = strcmp(mode, "ids") == 0 ? kIds : strcmp(mode, "group") == 0 ? kGroup : kInitAll;
    status = runThreads(argc > 2 ? atoi(argv[2]) : 2, how);
  } else if (strcmp(mode, "timeout") == 0) {
    status = runTimeout();
#ifdef NCCL_PROGRAM_MPI
  } else if (strcmp(mode, "mpi") == 0) {
    int n = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    ncclUniqueId id;
    if (rank == 0) NCCL(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
    NCCL(ncclCommInitRank(&comm, n, id, rank));
    status = battery(comm, rank, n);
    NCCL(ncclCommFinalize(comm));
    NCCL(ncclCommDestroy(comm));
    int all = 0;
    MPI_Allreduce(&status, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    status = all;
#endif
  }
  if (status == 0 && rank <= 0)
    printf("nccl_program %s: every result matched, NCCL %d from %s\n", mode, version, where.dli_fname);
  return status;
}
