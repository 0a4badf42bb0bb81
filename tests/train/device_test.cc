// The device path's arithmetic without a GPU: the emulated device (the CUDA kernels' code and the cuBLAS calls'
// arguments, run on the host) against the host layers, bit for bit; and the row-major to column-major GEMM mapping the
// CUDA executor relies on.
#include <cblas.h>
#include <gtest/gtest.h>

#include "device/emulated_device.h"
#include "device/gemm_args.h"
#include "device/host_exec.h"
#include "device_ops_check.h"

namespace chorus::train {
namespace {

TEST(GemmArgs, RowMajorProductsMapToTheColumnMajorCall) {
  // Every transposition, leading dimensions wider than the matrices, against OpenBLAS's row-major interface.
  const int m = 5, n = 7, k = 3, pad = 2;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const int lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
      std::vector<float> a = testing::randomFloats(static_cast<size_t>(ta ? k : m) * lda, 1),
                         b = testing::randomFloats(static_cast<size_t>(tb ? n : k) * ldb, 2),
                         c0 = testing::randomFloats(static_cast<size_t>(m) * ldc, 3), want = c0, got = c0;
      cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 0.5f,
                  a.data(), lda, b.data(), ldb, 0.25f, want.data(), ldc);
      HostExec exec;
      exec.gemm(rowMajorGemm(ta, tb, m, n, k, 0.5f, a.data(), lda, b.data(), ldb, 0.25f, got.data(), ldc));
      testing::expectSame(want, got, 0, std::string("gemm ") + (ta ? "T" : "N") + (tb ? "T" : "N"));
    }
}

TEST(GemmArgs, BatchesStepEachOperandByItsStride) {
  const int m = 3, n = 4, k = 2, batch = 3;
  std::vector<float> a = testing::randomFloats(batch * m * k, 4), b = testing::randomFloats(batch * k * n, 5),
                     want(batch * m * n), got(want.size());
  for (int i = 0; i < batch; ++i)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data() + i * m * k, k, b.data() + i * k * n,
                n, 0.0f, want.data() + i * m * n, n);
  HostExec exec;
  exec.gemm(rowMajorGemm(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, got.data(), n, batch, m * k,
                         k * n, m * n));
  testing::expectSame(want, got, 0, "batched gemm");
}

TEST(EmulatedDevice, EveryLayerEqualsTheHostBitForBit) {
  auto dev = makeEmulatedDevice();
  testing::checkLayerOps(*dev, 0);
}

TEST(EmulatedDevice, EngineWorkEqualsTheHost) {
  auto dev = makeEmulatedDevice();
  testing::checkEngineOps(*dev);
}

TEST(EmulatedDevice, WholeModelEqualsTheHostBitForBit) {
  auto dev = makeEmulatedDevice();
  testing::checkWholeStage(*dev, 0);
}

}  // namespace
}  // namespace chorus::train
