#include "device/host_exec.h"

#include <cblas.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace chorus::train {

void* HostExec::allocate(size_t bytes) {
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p) throw std::bad_alloc();
  return p;
}

void HostExec::release(void* p) {
  std::free(p);
}

void HostExec::fillZero(void* p, size_t bytes) {
  std::memset(p, 0, bytes);
}

void HostExec::copy(void* dst, const void* src, size_t bytes) {
  std::memmove(dst, src, bytes);
}

void HostExec::gemm(const ColMajorGemm& g) {
  for (int i = 0; i < g.batch; ++i)
    cblas_sgemm(CblasColMajor, g.transA ? CblasTrans : CblasNoTrans, g.transB ? CblasTrans : CblasNoTrans, g.m, g.n,
                g.k, g.alpha, g.a + i * g.strideA, g.lda, g.b + i * g.strideB, g.ldb, g.beta, g.c + i * g.strideC,
                g.ldc);
}

}  // namespace chorus::train
