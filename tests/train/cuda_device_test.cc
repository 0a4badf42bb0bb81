// The trainer's CUDA device on a GPU (label gpu): every layer, the engines' element-wise work and a whole model against
// the host layers. Skips, saying why, without a GPU; fails when the operating system shows an NVIDIA GPU (or
// CHORUS_REQUIRE_GPU=1) that the CUDA runtime cannot use, as tests/cuda does.
//
// NOT YET RUN ON A GPU: the tolerances below are what cuBLAS's other order of summation should need, not what has been
// measured.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/gpu_presence.h"
#include "cuda/cuda_device.h"
#include "device_ops_check.h"

namespace chorus::train {
namespace {

#define REQUIRE_GPU()                                         \
  do {                                                        \
    const std::string why_ = cudaUnavailableReason();         \
    if (!why_.empty()) CHORUS_SKIP_OR_FAIL_WITHOUT_GPU(why_); \
  } while (0)

// cuBLAS sums the GEMMs' products in another order than OpenBLAS; everything else is the host's arithmetic
// (device/kernels.h, no FMA contraction) except the loss's logf.
constexpr double kLayerTol = 1e-5;
constexpr double kModelTol = 1e-4;

TEST(CudaDevice, EveryLayerMatchesTheHost) {
  REQUIRE_GPU();
  auto dev = makeCudaDevice(0);
  testing::checkLayerOps(*dev, kLayerTol);
}

TEST(CudaDevice, EngineWorkMatchesTheHost) {
  REQUIRE_GPU();
  auto dev = makeCudaDevice(0);
  testing::checkEngineOps(*dev);
}

TEST(CudaDevice, WholeModelMatchesTheHost) {
  REQUIRE_GPU();
  auto dev = makeCudaDevice(0);
  testing::checkWholeStage(*dev, kModelTol);
}

}  // namespace
}  // namespace chorus::train
