// The Open MPI backend: the same interface over non-blocking MPI collectives (MPI_Iallreduce and friends), so
// a training step can be timed over Open MPI and over Chorus on the same machine. Open MPI progresses
// non-blocking collectives only inside MPI calls, so the trainer calls poll() between layers, as a user of
// non-blocking MPI would. One rank per process; the program calls MPI_Init through initWorld().
#ifndef CHORUS_TRAIN_COMM_MPI_COMM_H_
#define CHORUS_TRAIN_COMM_MPI_COMM_H_

#include <mpi.h>

#include <memory>
#include <vector>

#include "comm/comm.h"

namespace chorus::train {

class MpiComm : public Comm {
 public:
  // Takes ownership of `comm` (freed on destruction unless it is MPI_COMM_WORLD).
  explicit MpiComm(MPI_Comm comm);
  ~MpiComm() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* backendName() const override { return "mpi"; }

  Work allReduce(const void* send, void* recv, size_t count, DType t, RedOp op) override;
  Work reduceScatter(const void* send, void* recv, size_t recvCount, DType t, RedOp op) override;
  Work allGather(const void* send, void* recv, size_t sendCount, DType t) override;
  Work broadcast(void* buf, size_t count, DType t, int root) override;
  Work reduce(const void* send, void* recv, size_t count, DType t, RedOp op, int root) override;
  Work sendRecv(const std::vector<P2pOp>& ops) override;
  void barrier() override;
  std::unique_ptr<Comm> duplicate() override;
  std::unique_ptr<Comm> split(int color, int key) override;
  void poll() override;

  // MPI_Init (once per process) and a Comm over MPI_COMM_WORLD; MPI_Finalize runs at exit.
  static std::unique_ptr<Comm> initWorld();

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_COMM_MPI_COMM_H_
