#include "comm/mpi_comm.h"

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>

#include "comm/bf16.h"

namespace chorus::train {
namespace {

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw CommError(std::string(call) + " failed: " + std::string(msg, len));
}

// MPI has no bfloat16: carry it as 16-bit integers and sum with a user-defined operation.
void bf16Sum(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = floatToBf16(bf16ToFloat(a[i]) + bf16ToFloat(b[i]));
}

MPI_Op bf16SumOp() {
  static MPI_Op op = [] {
    MPI_Op o;
    check(MPI_Op_create(&bf16Sum, 1, &o), "MPI_Op_create");
    return o;
  }();
  return op;
}

MPI_Datatype toMpi(DType t) {
  switch (t) {
    case DType::kFloat32: return MPI_FLOAT;
    case DType::kBfloat16: return MPI_UINT16_T;
    case DType::kFloat64: return MPI_DOUBLE;
    case DType::kInt64: return MPI_INT64_T;
  }
  return MPI_FLOAT;
}

MPI_Op toMpi(RedOp op, DType t) {
  if (t == DType::kBfloat16) {
    if (op != RedOp::kSum) throw CommError("the MPI backend reduces bfloat16 only with sum");
    return bf16SumOp();
  }
  return op == RedOp::kMax ? MPI_MAX : MPI_SUM;
}

int toCount(size_t n) {
  if (n > static_cast<size_t>(INT32_MAX)) throw CommError("MPI counts are limited to 2^31-1 elements");
  return static_cast<int>(n);
}

// Requests in flight, and what to do once they have all completed.
class Requests : public Work::Impl {
 public:
  explicit Requests(std::vector<MPI_Request> r, std::function<void()> onDone = {})
      : reqs_(std::move(r)), onDone_(std::move(onDone)) {}
  void wait() override {
    check(MPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    finish();
  }
  bool test() override {
    int done = 0;
    check(MPI_Testall(static_cast<int>(reqs_.size()), reqs_.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
    if (done) finish();
    return done != 0;
  }

 private:
  void finish() {
    if (onDone_) std::exchange(onDone_, nullptr)();
  }
  std::vector<MPI_Request> reqs_;
  std::function<void()> onDone_;
};

}  // namespace

MpiComm::MpiComm(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

MpiComm::~MpiComm() {
  if (comm_ != MPI_COMM_WORLD && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

Work MpiComm::allReduce(const void* send, void* recv, size_t count, DType t, RedOp op) {
  recordCollective(CollKind::kAllReduce, static_cast<int64_t>(count * dtypeSize(t)));
  MPI_Request r;
  check(MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send, recv, toCount(count), toMpi(t), toMpi(op, t), comm_, &r),
        "MPI_Iallreduce");
  return Work(std::make_shared<Requests>(std::vector<MPI_Request>{r}), &stats());
}

Work MpiComm::reduceScatter(const void* send, void* recv, size_t recvCount, DType t, RedOp op) {
  const size_t bytes = recvCount * dtypeSize(t);
  recordCollective(CollKind::kReduceScatter, static_cast<int64_t>(bytes) * size_);
  MPI_Request r;
  if (static_cast<const char*>(send) + rank_ * bytes == recv) {
    // In place (recv is this rank's block of send), as NCCL defines it; MPI's in-place form would leave the
    // result at the start of the buffer instead, so reduce into a temporary and copy it home on completion.
    auto tmp = std::make_shared<std::vector<char>>(bytes);
    check(MPI_Ireduce_scatter_block(send, tmp->data(), toCount(recvCount), toMpi(t), toMpi(op, t), comm_, &r),
          "MPI_Ireduce_scatter_block");
    return Work(std::make_shared<Requests>(std::vector<MPI_Request>{r},
                                           [tmp, recv, bytes] { std::memcpy(recv, tmp->data(), bytes); }),
                &stats());
  }
  check(MPI_Ireduce_scatter_block(send, recv, toCount(recvCount), toMpi(t), toMpi(op, t), comm_, &r),
        "MPI_Ireduce_scatter_block");
  return Work(std::make_shared<Requests>(std::vector<MPI_Request>{r}), &stats());
}

Work MpiComm::allGather(const void* send, void* recv, size_t sendCount, DType t) {
  recordCollective(CollKind::kAllGather, static_cast<int64_t>(sendCount * dtypeSize(t)) * size_);
  bool inPlace = static_cast<const char*>(recv) + rank_ * sendCount * dtypeSize(t) == send;
  MPI_Request r;
  check(MPI_Iallgather(inPlace ? MPI_IN_PLACE : send, toCount(sendCount), toMpi(t), recv, toCount(sendCount), toMpi(t),
                       comm_, &r),
        "MPI_Iallgather");
  return Work(std::make_shared<Requests>(std::vector<MPI_Request>{r}), &stats());
}

Work MpiComm::broadcast(void* buf, size_t count, DType t, int root) {
  recordCollective(CollKind::kBroadcast, static_cast<int64_t>(count * dtypeSize(t)));
  MPI_Request r;
  check(MPI_Ibcast(buf, toCount(count), toMpi(t), root, comm_, &r), "MPI_Ibcast");
  return Work(std::make_shared<Requests>(std::vector<MPI_Request>{r}), &stats());
}

Work MpiComm::reduce(const void* send, void* recv, size_t count, DType t, RedOp op, int root) {
  recordCollective(CollKind::kReduce, static_cast<int64_t>(count * dtypeSize(t)));
  bool inPlace = rank_ == root && send == recv;
  MPI_Request r;
  check(MPI_Ireduce(inPlace ? MPI_IN_PLACE : send, recv, toCount(count), toMpi(t), toMpi(op, t), root, comm_, &r),
        "MPI_Ireduce");
  return Work(std::make_shared<Requests>(std::vector<MPI_Request>{r}), &stats());
}

Work MpiComm::sendRecv(const std::vector<P2pOp>& ops) {
  std::vector<MPI_Request> reqs(ops.size());
  int64_t message = 0, sent = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const P2pOp& o = ops[i];
    int64_t bytes = static_cast<int64_t>(o.count * dtypeSize(o.dtype));
    message += bytes;
    if (o.send) {
      sent += bytes;
      check(MPI_Isend(o.buf, toCount(o.count), toMpi(o.dtype), o.peer, 0, comm_, &reqs[i]), "MPI_Isend");
    } else {
      check(MPI_Irecv(o.buf, toCount(o.count), toMpi(o.dtype), o.peer, 0, comm_, &reqs[i]), "MPI_Irecv");
    }
  }
  recordSendRecv(message, sent);
  return Work(std::make_shared<Requests>(std::move(reqs)), &stats());
}

void MpiComm::barrier() {
  check(MPI_Barrier(comm_), "MPI_Barrier");
}

std::unique_ptr<Comm> MpiComm::duplicate() {
  MPI_Comm out;
  check(MPI_Comm_dup(comm_, &out), "MPI_Comm_dup");
  return std::make_unique<MpiComm>(out);
}

std::unique_ptr<Comm> MpiComm::split(int color, int key) {
  MPI_Comm out;
  check(MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &out), "MPI_Comm_split");
  if (out == MPI_COMM_NULL) return nullptr;
  return std::make_unique<MpiComm>(out);
}

void MpiComm::poll() {
  // Any MPI call runs Open MPI's progress engine; a probe is the cheapest one.
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, MPI_STATUS_IGNORE);
}

std::unique_ptr<Comm> MpiComm::initWorld() {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
    std::atexit([] {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Finalize();
    });
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return std::make_unique<MpiComm>(MPI_COMM_WORLD);
}

}  // namespace chorus::train
