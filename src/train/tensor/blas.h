// The trainer's matrix products: row-major GEMM over OpenBLAS in float (training) and double (the gradient
// check), and the GEMM peak that MFU is measured against. Ranks share the machine's cores, so each rank
// runs BLAS on one thread (setBlasThreads(1) at start).
#ifndef CHORUS_TRAIN_TENSOR_BLAS_H_
#define CHORUS_TRAIN_TENSOR_BLAS_H_

namespace chorus::train {

enum class Trans { kNo, kYes };

// C(m x n) = alpha * op(A)(m x k) * op(B)(k x n) + beta * C, all row-major with leading dimensions lda, ldb,
// ldc (elements between consecutive rows as stored). op(X) is X or its transpose.
template <typename T>
void gemm(Trans ta, Trans tb, int m, int n, int k, T alpha, const T* a, int lda, const T* b, int ldb, T beta, T* c,
          int ldc);

// Sets the number of threads OpenBLAS uses in this process.
void setBlasThreads(int n);

// Times single-precision 1024 x 1024 GEMMs for about `budgetMs` milliseconds and returns the best GFLOP/s: the
// peak that MFU (model FLOPs utilisation) is reported against.
double measureGemmPeakGflops(int budgetMs);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_TENSOR_BLAS_H_
