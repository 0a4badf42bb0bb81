#include "process_group_chorus.h"

#include <Python.h>
#include <c10/util/Exception.h>

#include <climits>
#include <cstring>
#include <random>

#include "any_source.h"
#include "chorus_error.h"
#include "cuda_route.h"

namespace chorus_torch {

namespace {

constexpr const char* kUniqueIdKey = "chorus/unique_id";
constexpr const char* kSequenceKey = "chorus/sequence_number";

// Joins the group's host communicator: rank 0 makes the unique id and publishes it in the group's store
// (a PrefixStore per group, so groups never share a key); PyTorch's timeout becomes the deadline of every
// wait of the communicator, its initialization included.
chorusComm_t createHostComm(c10d::Store& store, int rank, int size, std::chrono::milliseconds timeout) {
  chorusUniqueId id;
  if (rank == 0) {
    checkChorus(chorusGetUniqueId(&id), nullptr, "chorus: chorusGetUniqueId");
    const auto* bytes = reinterpret_cast<const uint8_t*>(id.internal);
    store.set(kUniqueIdKey, std::vector<uint8_t>(bytes, bytes + sizeof(id.internal)));
  } else {
    const std::vector<uint8_t> bytes = store.get(kUniqueIdKey);
    TORCH_CHECK(bytes.size() == sizeof(id.internal), "chorus: the store holds a unique id of ", bytes.size(),
                " bytes, expected ", sizeof(id.internal));
    std::memcpy(id.internal, bytes.data(), bytes.size());
  }
  chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
  config.device = CHORUS_DEVICE_HOST;
  config.timeoutMs = static_cast<int>(std::clamp<int64_t>(timeout.count(), 1, INT_MAX));
  chorusComm_t comm = nullptr;
  checkChorus(chorusCommInitRankConfig(&comm, size, id, rank, &config), nullptr,
              "chorus: creating the process group's communicator");
  return comm;
}

}  // namespace

ProcessGroupChorus::ProcessGroupChorus(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                       std::chrono::milliseconds timeout)
    : c10d::ProcessGroup(rank, size), store_(store), timeout_(timeout) {
  TORCH_CHECK(timeout.count() > 0, "chorus: the process group timeout must be positive, got ", timeout.count(), " ms");
  host_ = std::make_shared<OpQueue>(createHostComm(*store_, rank, size, timeout), rank, timeout.count());
  cuda_ = std::make_unique<CudaRoute>(rank, timeout);
  if (AnySourceLedger::enabled()) anySource_ = std::make_shared<AnySourceLedger>(store_, rank, size, timeout);
  init();
}

ProcessGroupChorus::~ProcessGroupChorus() {
  // Completing the queue may run future callbacks that need the GIL (Python's `then`): never hold it here.
  if (Py_IsInitialized() != 0 && PyGILState_Check() != 0) {
    PyThreadState* state = PyEval_SaveThread();
    host_->shutdown();
    PyEval_RestoreThread(state);
  } else {
    host_->shutdown();
  }
  cuda_.reset();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::run(OpPlan plan, const at::Tensor& sample) {
  ++seq_;
  if (sample.defined() && sample.is_cuda()) {
    return cuda_->run(std::move(plan), sample.device(), hostComm(), [this] { host_->drain(); });
  }
  return host_->submit(std::move(plan));
}

void ProcessGroupChorus::synchronize() {
  host_->drain();
}

void ProcessGroupChorus::startCoalescing() {
  host_->startCoalescing();
}

void ProcessGroupChorus::endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>& /*reqs*/) {
  host_->endCoalescing();
}

void ProcessGroupChorus::setSequenceNumberForGroup() {
  // As Gloo: rank 0 draws a random start and publishes it through the store.
  if (rank_ == 0) {
    std::random_device rd;
    seq_ = (static_cast<uint64_t>(rd()) << 32 | rd()) >> 1;
    const auto* bytes = reinterpret_cast<const uint8_t*>(&seq_);
    store_->set(kSequenceKey, std::vector<uint8_t>(bytes, bytes + sizeof(seq_)));
  } else {
    const std::vector<uint8_t> bytes = store_->get(kSequenceKey);
    TORCH_CHECK(bytes.size() == sizeof(seq_), "chorus: bad sequence number in the store");
    std::memcpy(&seq_, bytes.data(), sizeof(seq_));
  }
}

uint64_t ProcessGroupChorus::getSequenceNumberForGroup() {
  return seq_;
}

c10::intrusive_ptr<c10d::ProcessGroup> createProcessGroupChorus(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                                int size, std::chrono::milliseconds timeout) {
  return c10::make_intrusive<ProcessGroupChorus>(store, rank, size, timeout);
}

}  // namespace chorus_torch
