// MPI: the launcher's rendezvous (rank 0's unique id broadcast to every process), the process group under
// mpirun, and the MPI side of --backend mpi and --compare mpi (the collective that matches each benchmark).
// Built only when CMake found MPI (CHORUS_PERF_HAVE_MPI).
#ifndef CHORUS_PERF_NCCL_MPI_BACKEND_H_
#define CHORUS_PERF_NCCL_MPI_BACKEND_H_

#include <string>
#include <vector>

#include "perf_test.h"
#include "team.h"

namespace chorus::perf {

// True when an MPI launcher (mpirun, mpiexec, srun with PMI) started this process.
bool launchedByMpi();
// MPI_Init_thread with MPI_THREAD_SERIALIZED; creates the datatypes and operations of the narrow float types.
void mpiInit(int* argc, char*** argv);
void mpiFinalize();
// The MPI library's name and version, first line of MPI_Get_library_version.
std::string mpiLibraryVersion();

class MpiProcessGroup : public ProcessGroup {
 public:
  MpiProcessGroup();
  int size() const override { return size_; }
  int rank() const override { return rank_; }
  void barrier() override;
  void allreduce(double* value, ReduceMode mode) override;
  void allreduce(int64_t* value, ReduceMode mode) override;

 private:
  int size_ = 1;
  int rank_ = 0;
};

// Rank 0's id, broadcast through MPI_Bcast.
void mpiBroadcastId(chorusUniqueId* id);
// Every process's text, in process order, on process 0 (empty elsewhere).
std::vector<std::string> mpiGatherText(const std::string& local);
// Exit status agreed by all processes: the largest.
int mpiMaxStatus(int status);

// Runs the MPI collective that matches `kind` on MPI_COMM_WORLD (blocking). avg is a sum followed by a division
// on the ranks that receive a result. Returns MPI_SUCCESS or an MPI error code, with a message in *error.
int mpiRunCollective(CollKind kind, const CallArgs& call, std::string* error);
// Where the result of mpiRunCollective lies (in place, MPI_Reduce_scatter_block leaves it at the buffer's start).
const void* mpiResult(CollKind kind, const CallArgs& call);

}  // namespace chorus::perf

#endif  // CHORUS_PERF_NCCL_MPI_BACKEND_H_
