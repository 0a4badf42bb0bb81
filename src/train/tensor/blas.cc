#include "tensor/blas.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace chorus::train {
namespace {
CBLAS_TRANSPOSE cblasTrans(Trans t) {
  return t == Trans::kYes ? CblasTrans : CblasNoTrans;
}
}  // namespace

template <>
void gemm<float>(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
                 float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, cblasTrans(ta), cblasTrans(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <>
void gemm<double>(Trans ta, Trans tb, int m, int n, int k, double alpha, const double* a, int lda, const double* b,
                  int ldb, double beta, double* c, int ldc) {
  cblas_dgemm(CblasRowMajor, cblasTrans(ta), cblasTrans(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void setBlasThreads(int n) {
  openblas_set_num_threads(n);
}

double measureGemmPeakGflops(int budgetMs) {
  // A square product large enough to reach the kernel's steady state, yet small enough to stay in cache.
  const int n = 512;
  std::vector<float> a(static_cast<size_t>(n) * n, 0.5f), b(a), c(a.size());
  using Clock = std::chrono::steady_clock;
  gemm<float>(Trans::kNo, Trans::kNo, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);  // warm up
  // The mean rate over the whole budget, not the best single product: ranks that share a core measure their
  // share of it.
  auto t0 = Clock::now(), end = t0 + std::chrono::milliseconds(budgetMs);
  int64_t products = 0;
  do {
    gemm<float>(Trans::kNo, Trans::kNo, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    ++products;
  } while (Clock::now() < end);
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return 2.0 * n * n * n * static_cast<double>(products) / s / 1e9;
}

}  // namespace chorus::train
