// The one small interface the trainer communicates through: the collectives and point-to-point transfers a
// data-, tensor- and pipeline-parallel trainer needs, asynchronous, over a group of ranks. Two backends
// implement it, Chorus (host streams) and Open MPI (non-blocking MPI calls), so the same training step runs
// over either and the two can be compared on the same machine (--backend chorus|mpi).
#ifndef CHORUS_TRAIN_COMM_COMM_H_
#define CHORUS_TRAIN_COMM_COMM_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace chorus::train {

class Device;

enum class DType { kFloat32, kBfloat16, kFloat64, kInt64 };
enum class RedOp { kSum, kMax };
size_t dtypeSize(DType t);

// A failure reported by a backend; what() carries the library's own message.
class CommError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One operation in flight. wait() blocks until it has completed (and throws CommError when it failed);
// a default-constructed Work is complete.
class Work {
 public:
  class Impl {
   public:
    virtual ~Impl() = default;
    virtual void wait() = 0;
    virtual bool test() = 0;
  };
  Work() = default;
  // `stats` (may be null) collects the time callers spend blocked in wait().
  Work(std::shared_ptr<Impl> impl, struct CommStats* stats) : impl_(std::move(impl)), stats_(stats) {}
  void wait();
  bool test();

 private:
  std::shared_ptr<Impl> impl_;
  struct CommStats* stats_ = nullptr;
};

enum class CollKind { kAllReduce, kReduceScatter, kAllGather, kBroadcast, kReduce, kSendRecv, kCount };
const char* collKindName(CollKind k);

// What one rank moved through one communicator: per kind of operation, the calls, the bytes of the messages
// (nccl-tests' "size": the larger of input and output) and the bytes this rank sent on the wire by the
// bandwidth-optimal algorithm (all-reduce 2(n-1)/n of the message, all-gather and reduce-scatter (n-1)/n,
// broadcast and reduce 1x, point-to-point what was sent); and the time the caller spent blocked in waits.
struct CommStats {
  struct Row {
    int64_t calls = 0;
    int64_t messageBytes = 0;
    int64_t sentBytes = 0;
  };
  std::array<Row, static_cast<int>(CollKind::kCount)> rows{};
  double waitSeconds = 0;
  void add(CollKind k, int64_t message, int64_t sent);
  void reset() { *this = CommStats(); }
};

struct P2pOp {
  bool send = true;
  void* buf = nullptr;  // read when sending, written when receiving
  size_t count = 0;
  DType dtype = DType::kFloat32;
  int peer = 0;  // rank in this communicator
};

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const char* backendName() const = 0;

  // As NCCL's calls (counts in elements). Buffers must stay valid and unmodified until the Work completes.
  // Operations on one Comm run in the order they were issued; use duplicate() for an independent order.
  virtual Work allReduce(const void* send, void* recv, size_t count, DType t, RedOp op) = 0;
  virtual Work reduceScatter(const void* send, void* recv, size_t recvCount, DType t, RedOp op) = 0;
  virtual Work allGather(const void* send, void* recv, size_t sendCount, DType t) = 0;
  virtual Work broadcast(void* buf, size_t count, DType t, int root) = 0;
  virtual Work reduce(const void* send, void* recv, size_t count, DType t, RedOp op, int root) = 0;
  // Sends and receives issued together: no order of them deadlocks.
  virtual Work sendRecv(const std::vector<P2pOp>& ops) = 0;
  // Blocks until every rank of the group has called it (and this rank's issued operations have completed).
  virtual void barrier() = 0;

  // A communicator over the same ranks whose operations are ordered independently of this one's (a second
  // stream): ZeRO-3 gathers parameters on one while gradients are reduced on another.
  virtual std::unique_ptr<Comm> duplicate() = 0;
  // Ranks passing the same color form a new communicator ordered by key; a negative color returns null.
  // Collective over this communicator.
  virtual std::unique_ptr<Comm> split(int color, int key) = 0;
  // As split, for buffers in `device`'s memory: on a GPU, a communicator on that GPU whose operations wait for
  // the device's computation issued before them (Device::streamWaitsForWork). Backends without communicators on
  // a GPU throw CommError for one; host memory gives split's communicator.
  virtual std::unique_ptr<Comm> splitOnDevice(int color, int key, Device& device);
  // Lets a backend with no progress thread of its own advance pending operations (MPI); cheap to call.
  virtual void poll() {}
  // After a failure somewhere in the job: destroying this communicator must not wait for its peers (Chorus
  // aborts it instead of finalizing).
  virtual void abandon() {}
  // Elastic training. The ranks of this communicator known to have failed, the same list on every survivor;
  // then a communicator of the survivors (collective over them, in rank order). Backends that cannot
  // recover from a lost rank throw CommError.
  virtual std::vector<int> failedRanks() {
    throw CommError(std::string(backendName()) + " cannot tell which ranks failed");
  }
  virtual std::unique_ptr<Comm> shrink(const std::vector<int>& /*failed*/) {
    throw CommError(std::string(backendName()) + " cannot continue without a lost rank");
  }

  CommStats& stats() { return stats_; }

 protected:
  // Records a collective whose message is `messageBytes` (nccl-tests' size), with the bytes a bandwidth-optimal
  // algorithm makes each rank send; and a batch of point-to-point transfers.
  void recordCollective(CollKind k, int64_t messageBytes);
  void recordSendRecv(int64_t messageBytes, int64_t sentBytes) {
    stats_.add(CollKind::kSendRecv, messageBytes, sentBytes);
  }

 private:
  CommStats stats_;
};

// The backends this build has ("chorus", and "mpi" when built with MPI).
std::vector<std::string> availableBackends();

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_COMM_COMM_H_
