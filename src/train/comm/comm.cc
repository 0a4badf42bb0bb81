#include "comm/comm.h"

#include <chrono>

#include "tensor/device.h"

namespace chorus::train {

size_t dtypeSize(DType t) {
  switch (t) {
    case DType::kFloat32: return 4;
    case DType::kBfloat16: return 2;
    case DType::kFloat64: return 8;
    case DType::kInt64: return 8;
  }
  return 0;
}

const char* collKindName(CollKind k) {
  switch (k) {
    case CollKind::kAllReduce: return "all-reduce";
    case CollKind::kReduceScatter: return "reduce-scatter";
    case CollKind::kAllGather: return "all-gather";
    case CollKind::kBroadcast: return "broadcast";
    case CollKind::kReduce: return "reduce";
    case CollKind::kSendRecv: return "send/recv";
    case CollKind::kCount: break;
  }
  return "?";
}

void CommStats::add(CollKind k, int64_t message, int64_t sent) {
  Row& r = rows[static_cast<int>(k)];
  r.calls += 1;
  r.messageBytes += message;
  r.sentBytes += sent;
}

void Comm::recordCollective(CollKind k, int64_t messageBytes) {
  const int64_t n = size();
  int64_t sent = 0;
  if (n > 1) {
    switch (k) {
      case CollKind::kAllReduce: sent = 2 * messageBytes * (n - 1) / n; break;
      case CollKind::kReduceScatter:
      case CollKind::kAllGather: sent = messageBytes * (n - 1) / n; break;
      default: sent = messageBytes; break;
    }
  }
  stats_.add(k, messageBytes, sent);
}

void Work::wait() {
  if (!impl_) return;
  auto t0 = std::chrono::steady_clock::now();
  impl_->wait();
  if (stats_) stats_->waitSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  impl_.reset();
}

bool Work::test() {
  if (impl_ && impl_->test()) impl_.reset();
  return !impl_;
}

std::unique_ptr<Comm> Comm::splitOnDevice(int color, int key, Device& device) {
  if (device.cudaIndex() >= 0)
    throw CommError(std::string("the ") + backendName() + " backend has no communicators on a GPU (" + device.name() +
                    ")");
  return split(color, key);
}

std::vector<std::string> availableBackends() {
#ifdef CHORUS_TRAIN_HAVE_MPI
  return {"chorus", "mpi"};
#else
  return {"chorus"};
#endif
}

}  // namespace chorus::train
