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
  // 1024^3 products take tens of milliseconds, long enough that ranks sharing a core (measuring together)
  // each see their share of it within one product; the best product then discounts moments when something
  // else had the machine.
  const int n = 1024;
  std::vector<float> a(static_cast<size_t>(n) * n, 0.5f), b(a), c(a.size());
  using Clock = std::chrono::steady_clock;
  gemm<float>(Trans::kNo, Trans::kNo, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);  // warm up
  const auto end = Clock::now() + std::chrono::milliseconds(budgetMs);
  double best = 0;
  do {
    auto t0 = Clock::now();
    gemm<float>(Trans::kNo, Trans::kNo, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, 2.0 * n * n * n / s / 1e9);
  } while (Clock::now() < end);
  return best;
}

}  // namespace chorus::train
