// The Chorus backend: a communicator and a host stream per Comm, every operation enqueued on the stream so it
// runs on the library's executor while the trainer computes. Host streams have no per-operation events, so a
// Work's wait() synchronizes the stream: it returns once its operation and every one issued before it on this
// Comm are done (it may also wait for later ones); a Comm whose waits must not cover another's operations
// uses its own duplicate().
//
// On a GPU (a communicator made by splitOnDevice with a CUDA device) the operations run on a CUDA stream of the
// communicator's own, each after the device's computation issued before it, and a Work's wait() synchronizes
// that stream: the same contract, so the parallel code above is the same on both. (Not yet run on a GPU.)
#ifndef CHORUS_TRAIN_COMM_CHORUS_COMM_H_
#define CHORUS_TRAIN_COMM_CHORUS_COMM_H_

#include <chorus/chorus.h>

#include <memory>
#include <vector>

#include "comm/comm.h"

namespace chorus::train {

class ChorusComm : public Comm {
 public:
  // Takes ownership of `comm`; `device` (may be null: host memory) is the device whose memory its buffers are in.
  explicit ChorusComm(chorusComm_t comm, Device* device = nullptr);
  ~ChorusComm() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* backendName() const override { return "chorus"; }

  Work allReduce(const void* send, void* recv, size_t count, DType t, RedOp op) override;
  Work reduceScatter(const void* send, void* recv, size_t recvCount, DType t, RedOp op) override;
  Work allGather(const void* send, void* recv, size_t sendCount, DType t) override;
  Work broadcast(void* buf, size_t count, DType t, int root) override;
  Work reduce(const void* send, void* recv, size_t count, DType t, RedOp op, int root) override;
  Work sendRecv(const std::vector<P2pOp>& ops) override;
  void barrier() override;
  std::unique_ptr<Comm> duplicate() override;
  std::unique_ptr<Comm> split(int color, int key) override;
  std::unique_ptr<Comm> splitOnDevice(int color, int key, Device& device) override;
  // Revokes the communicator (its peers' pending and next operations on it fail at once) and marks it
  // failed, so destroying it aborts instead of flushing.
  void abandon() override;
  std::vector<int> failedRanks() override;
  std::unique_ptr<Comm> shrink(const std::vector<int>& failed) override;

  chorusComm_t handle() const { return comm_; }

  // Makes `n` ranks as threads of this process (chorusCommInitAll).
  static std::vector<std::unique_ptr<Comm>> initThreads(int n);
  // One rank per process from the launcher's variables (chorusrun, torchrun-style, Slurm, Open MPI), or a
  // single rank when no launcher variable is set.
  static std::unique_ptr<Comm> initFromEnv();

  class Pending;  // the Work of one enqueued operation

 private:
  void check(chorusResult_t r, const char* call);
  // Before an operation is enqueued: on a GPU, the stream waits for the computation issued so far.
  void beforeIssue();
  Work issued();
  void synchronize();
  bool onGpu() const { return device_ != nullptr; }
  std::unique_ptr<Comm> splitWith(int color, int key, Device* device);

  chorusComm_t comm_;
  Device* device_ = nullptr;  // set for a communicator on a GPU
  void* scratch_ = nullptr;   // its barrier's 8 bytes of device memory
  chorusStream_t stream_ = nullptr;
  int rank_ = 0, size_ = 1;
  uint64_t issued_ = 0;     // operations enqueued
  uint64_t completed_ = 0;  // operations known to have completed
  bool failed_ = false;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_COMM_CHORUS_COMM_H_
