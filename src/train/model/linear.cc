#include "model/linear.h"

#include <cstdint>
#include <cstring>

#include "tensor/blas.h"

namespace chorus::train {

template <typename F>
void linearForward(F* out, const F* inp, const F* w, const F* b, int N, int I, int O) {
  if (b) {
    for (int n = 0; n < N; ++n) std::memcpy(out + static_cast<int64_t>(n) * O, b, sizeof(F) * O);
  }
  gemm<F>(Trans::kNo, Trans::kYes, N, O, I, F(1), inp, I, w, I, b ? F(1) : F(0), out, O);
}

template <typename F>
void linearBackward(F* dinp, F* dw, F* db, const F* dout, const F* inp, const F* w, int N, int I, int O,
                    bool accumulateInput) {
  if (dinp) gemm<F>(Trans::kNo, Trans::kNo, N, I, O, F(1), dout, O, w, I, accumulateInput ? F(1) : F(0), dinp, I);
  gemm<F>(Trans::kYes, Trans::kNo, O, I, N, F(1), dout, O, inp, I, F(0), dw, I);
  if (db) columnSum(db, dout, N, O);
}

template <typename F>
void columnSum(F* db, const F* dout, int N, int O) {
  std::memcpy(db, dout, sizeof(F) * O);
  for (int n = 1; n < N; ++n) {
    const F* d = dout + static_cast<int64_t>(n) * O;
    for (int o = 0; o < O; ++o) db[o] += d[o];
  }
}

template void linearForward<float>(float*, const float*, const float*, const float*, int, int, int);
template void linearForward<double>(double*, const double*, const double*, const double*, int, int, int);
template void linearBackward<float>(float*, float*, float*, const float*, const float*, const float*, int, int, int,
                                    bool);
template void linearBackward<double>(double*, double*, double*, const double*, const double*, const double*, int, int,
                                     int, bool);

template void columnSum<float>(float*, const float*, int, int);
template void columnSum<double>(double*, const double*, int, int);

}  // namespace chorus::train
