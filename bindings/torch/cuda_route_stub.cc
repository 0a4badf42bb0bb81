// CudaRoute for a PyTorch without CUDA (Debian's python3-torch): no CUDA tensor can exist there, and one
// from elsewhere is refused by name.
#include <c10/util/Exception.h>

#include "cuda_route.h"

namespace chorus_torch {

CudaRoute::CudaRoute(int rank, std::chrono::milliseconds timeout) : rank_(rank), timeout_(timeout) {}

CudaRoute::~CudaRoute() = default;

bool CudaRoute::built() {
  return false;
}

c10::intrusive_ptr<c10d::Work> CudaRoute::run(OpPlan plan, const at::Device& device, chorusComm_t /*host*/,
                                              const std::function<void()>& /*quiesceHost*/) {
  TORCH_CHECK(false, "chorus: got a tensor on ", device,
              " but chorus_torch was built against a PyTorch without CUDA (rebuild it where PyTorch has CUDA)");
}

}  // namespace chorus_torch
