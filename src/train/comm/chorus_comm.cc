#include "comm/chorus_comm.h"

#include <cstdlib>
#include <string>

#include "tensor/device.h"

namespace chorus::train {
namespace {

chorusDataType_t toChorus(DType t) {
  switch (t) {
    case DType::kFloat32: return chorusFloat32;
    case DType::kBfloat16: return chorusBfloat16;
    case DType::kFloat64: return chorusFloat64;
    case DType::kInt64: return chorusInt64;
  }
  return chorusFloat32;
}

chorusRedOp_t toChorus(RedOp op) {
  return op == RedOp::kMax ? chorusMax : chorusSum;
}

void throwIf(chorusResult_t r, const char* call, chorusComm_t comm) {
  if (r == chorusSuccess) return;
  std::string msg = chorusGetLastError(comm);
  throw CommError(std::string(call) + " failed: " + chorusGetErrorString(r) + (msg.empty() ? "" : ": " + msg));
}

}  // namespace

class ChorusComm::Pending : public Work::Impl {
 public:
  Pending(ChorusComm* owner, uint64_t ticket) : owner_(owner), ticket_(ticket) {}
  void wait() override {
    if (owner_->completed_ < ticket_) owner_->synchronize();
  }
  bool test() override {
    if (owner_->completed_ >= ticket_) return true;
    uint64_t issued = owner_->issued_;
    if (owner_->onGpu()) {
      if (!owner_->device_->streamIdle(owner_->stream_)) return false;
      owner_->synchronize();  // checks the communicator's asynchronous error
      return true;
    }
    chorusResult_t r = chorusStreamQuery(owner_->stream_);
    if (r == chorusInProgress) return false;
    owner_->check(r, "chorusStreamQuery");
    owner_->completed_ = issued;
    return true;
  }

 private:
  ChorusComm* owner_;
  uint64_t ticket_;
};

ChorusComm::ChorusComm(chorusComm_t comm, Device* device) : comm_(comm) {
  throwIf(chorusCommUserRank(comm_, &rank_), "chorusCommUserRank", comm_);
  throwIf(chorusCommCount(comm_, &size_), "chorusCommCount", comm_);
  if (device && device->cudaIndex() >= 0) {
    device_ = device;
    stream_ = device_->createStream();
    scratch_ = device_->allocate(sizeof(int64_t));
    return;
  }
  throwIf(chorusStreamCreate(&stream_), "chorusStreamCreate", comm_);
}

ChorusComm::~ChorusComm() {
  if (failed_) {
    // A failed communicator cannot flush: abort it so nothing waits on peers that may be gone.
    chorusCommAbort(comm_);
  } else {
    if (onGpu()) {
      device_->synchronizeStream(stream_);
    } else {
      chorusStreamSynchronize(stream_);
    }
    chorusCommFinalize(comm_);
    chorusCommDestroy(comm_);
  }
  if (onGpu()) {
    device_->destroyStream(stream_);
    device_->release(scratch_);
  } else {
    chorusStreamDestroy(stream_);
  }
}

void ChorusComm::check(chorusResult_t r, const char* call) {
  if (r == chorusSuccess) return;
  failed_ = true;
  throwIf(r, call, comm_);
}

Work ChorusComm::issued() {
  return Work(std::make_shared<Pending>(this, ++issued_), &stats());
}

void ChorusComm::beforeIssue() {
  if (onGpu()) device_->streamWaitsForWork(stream_);
}

void ChorusComm::synchronize() {
  uint64_t issued = issued_;
  if (onGpu()) {
    device_->synchronizeStream(stream_);
    // A collective's kernel reports its failure to the communicator, not to the stream (chorusInProgress: work
    // of another thread's stream is still pending).
    chorusResult_t async = chorusSuccess;
    check(chorusCommGetAsyncError(comm_, &async), "chorusCommGetAsyncError");
    if (async != chorusInProgress) check(async, "a collective on the GPU");
  } else {
    check(chorusStreamSynchronize(stream_), "chorusStreamSynchronize");
  }
  completed_ = issued;
}

Work ChorusComm::allReduce(const void* send, void* recv, size_t count, DType t, RedOp op) {
  int64_t bytes = static_cast<int64_t>(count * dtypeSize(t));
  recordCollective(CollKind::kAllReduce, bytes);
  beforeIssue();
  check(chorusAllReduce(send, recv, count, toChorus(t), toChorus(op), comm_, stream_), "chorusAllReduce");
  return issued();
}

Work ChorusComm::reduceScatter(const void* send, void* recv, size_t recvCount, DType t, RedOp op) {
  int64_t bytes = static_cast<int64_t>(recvCount * dtypeSize(t)) * size_;
  recordCollective(CollKind::kReduceScatter, bytes);
  beforeIssue();
  check(chorusReduceScatter(send, recv, recvCount, toChorus(t), toChorus(op), comm_, stream_), "chorusReduceScatter");
  return issued();
}

Work ChorusComm::allGather(const void* send, void* recv, size_t sendCount, DType t) {
  int64_t bytes = static_cast<int64_t>(sendCount * dtypeSize(t)) * size_;
  recordCollective(CollKind::kAllGather, bytes);
  beforeIssue();
  check(chorusAllGather(send, recv, sendCount, toChorus(t), comm_, stream_), "chorusAllGather");
  return issued();
}

Work ChorusComm::broadcast(void* buf, size_t count, DType t, int root) {
  int64_t bytes = static_cast<int64_t>(count * dtypeSize(t));
  recordCollective(CollKind::kBroadcast, bytes);
  beforeIssue();
  check(chorusBroadcast(buf, buf, count, toChorus(t), root, comm_, stream_), "chorusBroadcast");
  return issued();
}

Work ChorusComm::reduce(const void* send, void* recv, size_t count, DType t, RedOp op, int root) {
  int64_t bytes = static_cast<int64_t>(count * dtypeSize(t));
  recordCollective(CollKind::kReduce, bytes);
  beforeIssue();
  check(chorusReduce(send, recv, count, toChorus(t), toChorus(op), root, comm_, stream_), "chorusReduce");
  return issued();
}

Work ChorusComm::sendRecv(const std::vector<P2pOp>& ops) {
  int64_t sent = 0, message = 0;
  beforeIssue();
  check(chorusGroupStart(), "chorusGroupStart");
  chorusResult_t first = chorusSuccess;
  for (const P2pOp& o : ops) {
    int64_t bytes = static_cast<int64_t>(o.count * dtypeSize(o.dtype));
    message += bytes;
    if (o.send) sent += bytes;
    chorusResult_t r = o.send ? chorusSend(o.buf, o.count, toChorus(o.dtype), o.peer, comm_, stream_)
                              : chorusRecv(o.buf, o.count, toChorus(o.dtype), o.peer, comm_, stream_);
    if (first == chorusSuccess) first = r;
  }
  chorusResult_t end = chorusGroupEnd();
  check(first, "chorusSend/chorusRecv");
  check(end, "chorusGroupEnd");
  recordSendRecv(message, sent);
  return issued();
}

void ChorusComm::barrier() {
  // Chorus, like NCCL, has no barrier: a one-element all-reduce that every rank must join serves as one (on a
  // GPU, of device memory).
  int64_t one = 1, sum = 0;
  void* in = &one;
  void* out = &sum;
  if (onGpu()) {
    beforeIssue();
    in = out = scratch_;
  }
  check(chorusAllReduce(in, out, 1, chorusInt64, chorusSum, comm_, stream_), "chorusAllReduce (barrier)");
  issued_++;
  synchronize();
}

std::unique_ptr<Comm> ChorusComm::duplicate() {
  return splitWith(0, rank_, device_);
}

std::unique_ptr<Comm> ChorusComm::split(int color, int key) {
  return splitWith(color, key, device_);
}

std::unique_ptr<Comm> ChorusComm::splitOnDevice(int color, int key, Device& device) {
  return splitWith(color, key, device.cudaIndex() >= 0 ? &device : nullptr);
}

std::unique_ptr<Comm> ChorusComm::splitWith(int color, int key, Device* device) {
  synchronize();  // the split must not overtake operations still queued on the stream
  // A child on a GPU says so (its parent may be a host communicator); otherwise it inherits the parent's options.
  chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
  if (device) config.device = device->cudaIndex();
  chorusComm_t out = nullptr;
  check(chorusCommSplit(comm_, color < 0 ? CHORUS_SPLIT_NOCOLOR : color, key, &out, device ? &config : nullptr),
        "chorusCommSplit");
  if (!out) return nullptr;
  return std::make_unique<ChorusComm>(out, device);
}

void ChorusComm::abandon() {
  if (!failed_) chorusCommRevoke(comm_, CHORUS_REVOKE_DEFAULT);  // local: never waits for the peers
  failed_ = true;
}

std::vector<int> ChorusComm::failedRanks() {
  abandon();
  // Collective over the survivors: each gets the same list, in increasing order.
  std::vector<int> ranks(static_cast<size_t>(size_));
  int n = 0;
  throwIf(chorusCommGetFailedRanks(comm_, ranks.data(), &n), "chorusCommGetFailedRanks", comm_);
  ranks.resize(static_cast<size_t>(n));
  return ranks;
}

std::unique_ptr<Comm> ChorusComm::shrink(const std::vector<int>& failed) {
  std::vector<int> excluded(failed);
  chorusComm_t out = nullptr;
  // The survivors build the new communicator among themselves; their ranks keep their old order.
  throwIf(
      chorusCommShrink(comm_, excluded.data(), static_cast<int>(excluded.size()), &out, nullptr, CHORUS_SHRINK_DEFAULT),
      "chorusCommShrink", comm_);
  return std::make_unique<ChorusComm>(out);
}

std::vector<std::unique_ptr<Comm>> ChorusComm::initThreads(int n) {
  std::vector<chorusComm_t> comms(n);
  throwIf(chorusCommInitAll(comms.data(), n, nullptr), "chorusCommInitAll", nullptr);
  std::vector<std::unique_ptr<Comm>> out;
  for (chorusComm_t c : comms) out.push_back(std::make_unique<ChorusComm>(c));
  return out;
}

std::unique_ptr<Comm> ChorusComm::initFromEnv() {
  bool launched = false;
  for (const char* v : {"CHORUS_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"})
    launched = launched || std::getenv(v) != nullptr;
  if (!launched) return std::move(initThreads(1)[0]);
  chorusComm_t comm = nullptr;
  throwIf(chorusCommInitFromEnv(&comm, nullptr), "chorusCommInitFromEnv", nullptr);
  return std::make_unique<ChorusComm>(comm);
}

}  // namespace chorus::train
