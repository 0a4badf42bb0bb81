#include "model/cross_entropy.h"

#include <cmath>
#include <vector>

#include "tensor/blas.h"
#include "tensor/vec_math.h"

namespace chorus::train {

template <typename F>
double crossEntropyForward(F* logits, F* rowMax, F* rowSum, const F* x, const F* wte, const int32_t* targets, int N,
                           int C, int vocabStart, int V, VocabReducer<F>* tp) {
  // logits (N,V) = x (N,C) * wte (V,C)^T
  gemm<F>(Trans::kNo, Trans::kYes, N, V, C, F(1), x, C, wte, C, F(0), logits, V);
  for (int n = 0; n < N; ++n) {
    const F* row = logits + static_cast<int64_t>(n) * V;
    F mx = row[0];
    for (int v = 1; v < V; ++v) mx = row[v] > mx ? row[v] : mx;
    rowMax[n] = mx;
  }
  if (tp) tp->max(rowMax, N);
  std::vector<F> target(N, F(0));
  for (int n = 0; n < N; ++n) {
    F* row = logits + static_cast<int64_t>(n) * V;
    int t = targets[n] - vocabStart;
    if (t >= 0 && t < V) target[n] = row[t] - rowMax[n];  // the target's logit, shifted as the sum is
    F sum = 0;
    for (int v = 0; v < V; ++v) {
      row[v] = vexp(row[v] - rowMax[n]);
      sum += row[v];
    }
    rowSum[n] = sum;
  }
  if (tp) {
    tp->sum(rowSum, N);
    tp->sum(target.data(), N);
  }
  double loss = 0;
  for (int n = 0; n < N; ++n) {
    F* row = logits + static_cast<int64_t>(n) * V;
    F inv = F(1) / rowSum[n];
    for (int v = 0; v < V; ++v) row[v] *= inv;
    loss += static_cast<double>(std::log(rowSum[n]) - target[n]);
  }
  return loss;
}

template <typename F>
void crossEntropyBackward(F* dx, F* dwte, F* logits, const F* x, const F* wte, const int32_t* targets, int N, int C,
                          int vocabStart, int V, F gradScale, bool accumulateWte) {
  for (int n = 0; n < N; ++n) {
    F* row = logits + static_cast<int64_t>(n) * V;
    for (int v = 0; v < V; ++v) row[v] *= gradScale;
    int t = targets[n] - vocabStart;
    if (t >= 0 && t < V) row[t] -= gradScale;
  }
  // dx (N,C) = dlogits (N,V) * wte (V,C); dwte (V,C) = dlogits^T (V,N) * x (N,C)
  gemm<F>(Trans::kNo, Trans::kNo, N, C, V, F(1), logits, V, wte, C, F(0), dx, C);
  gemm<F>(Trans::kYes, Trans::kNo, V, C, N, F(1), logits, V, x, C, accumulateWte ? F(1) : F(0), dwte, C);
}

template double crossEntropyForward<float>(float*, float*, float*, const float*, const float*, const int32_t*, int, int,
                                           int, int, VocabReducer<float>*);
template double crossEntropyForward<double>(double*, double*, double*, const double*, const double*, const int32_t*,
                                            int, int, int, int, VocabReducer<double>*);
template void crossEntropyBackward<float>(float*, float*, float*, const float*, const float*, const int32_t*, int, int,
                                          int, int, float, bool);
template void crossEntropyBackward<double>(double*, double*, double*, const double*, const double*, const int32_t*, int,
                                           int, int, int, double, bool);

}  // namespace chorus::train
