// A row-major matrix product as the layers write it, turned into the column-major call BLAS libraries take (cuBLAS has
// no row-major interface). A row-major matrix with leading dimension ld is, read column-major, its own transpose with
// the same ld; so C = op(A) op(B) becomes C^T = op(B)^T op(A)^T: swap the operands and the dimensions m and n, keep
// each operand's transposition. The host emulation feeds the same arguments to OpenBLAS's column-major sgemm, which
// tests the mapping without a GPU.
#ifndef CHORUS_TRAIN_DEVICE_GEMM_ARGS_H_
#define CHORUS_TRAIN_DEVICE_GEMM_ARGS_H_

#include <cstdint>

namespace chorus::train {

// Column-major: c (m x n, ldc) = alpha * op(a) (m x k) * op(b) (k x n) + beta * c.
struct ColMajorGemm {
  bool transA = false, transB = false;
  int m = 0, n = 0, k = 0;
  float alpha = 1;
  const float* a = nullptr;
  int lda = 0;
  const float* b = nullptr;
  int ldb = 0;
  float beta = 0;
  float* c = nullptr;
  int ldc = 0;
  // With several products (batch > 1), product i uses a + i*strideA, b + i*strideB, c + i*strideC.
  int batch = 1;
  int64_t strideA = 0, strideB = 0, strideC = 0;
};

// Row-major: c (m x n, ldc) = alpha * op(a) (m x k) * op(b) (k x n) + beta * c, with op(x) = x^T when transX. The
// strides of a batch are those of a, b and c.
inline ColMajorGemm rowMajorGemm(bool transA, bool transB, int m, int n, int k, float alpha, const float* a, int lda,
                                 const float* b, int ldb, float beta, float* c, int ldc, int batch = 1,
                                 int64_t strideA = 0, int64_t strideB = 0, int64_t strideC = 0) {
  ColMajorGemm g;
  g.transA = transB;
  g.transB = transA;
  g.m = n;
  g.n = m;
  g.k = k;
  g.alpha = alpha;
  g.a = b;
  g.lda = ldb;
  g.b = a;
  g.ldb = lda;
  g.beta = beta;
  g.c = c;
  g.ldc = ldc;
  g.batch = batch;
  g.strideA = strideB;
  g.strideB = strideA;
  g.strideC = strideC;
  return g;
}

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_DEVICE_GEMM_ARGS_H_
