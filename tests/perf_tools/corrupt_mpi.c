/* An MPI profiling-interface shim for the checker's own test: MPI_Allreduce calls of 2 or more elements get
 * their first result byte flipped, so all_reduce_perf --backend mpi -c 1 must report #wrong > 0 and fail.
 * (The benchmark's own one-element reductions of times and error counts are left alone.) */
#include <mpi.h>

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  int err = PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
  if (err == MPI_SUCCESS && count >= 2) ((unsigned char*)recvbuf)[0] ^= 0xFF;
  return err;
}
