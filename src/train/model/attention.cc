#include "model/attention.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "tensor/blas.h"
#include "tensor/vec_math.h"

namespace chorus::train {
namespace {

// Row t of the (T,T) scores p becomes the softmax of its first t+1 entries, zeros after (the causal mask).
template <typename F>
inline void causalSoftmaxImpl(F* p, int T) {
  for (int t = 0; t < T; ++t) {
    F* row = p + static_cast<int64_t>(t) * T;
    F mx = row[0];
    for (int j = 1; j <= t; ++j) mx = row[j] > mx ? row[j] : mx;
    F sum = 0;
    for (int j = 0; j <= t; ++j) {
      row[j] = vexp(row[j] - mx);
      sum += row[j];
    }
    F inv = F(1) / sum;
    for (int j = 0; j <= t; ++j) row[j] *= inv;
    for (int j = t + 1; j < T; ++j) row[j] = 0;
  }
}

// dp (T,T) holds the gradient of the probabilities p; it becomes the gradient of the scores,
// p * (dp - sum_j p*dp), zero above the diagonal.
template <typename F>
inline void causalSoftmaxBackwardImpl(F* dp, const F* p, int T) {
  for (int t = 0; t < T; ++t) {
    const F* pr = p + static_cast<int64_t>(t) * T;
    F* dr = dp + static_cast<int64_t>(t) * T;
    F dot = 0;
    for (int j = 0; j <= t; ++j) dot += pr[j] * dr[j];
    for (int j = 0; j <= t; ++j) dr[j] = pr[j] * (dr[j] - dot);
    for (int j = t + 1; j < T; ++j) dr[j] = 0;
  }
}

CHORUS_TRAIN_VECTOR_CLONES void causalSoftmax(float* p, int T) {
  causalSoftmaxImpl(p, T);
}
void causalSoftmax(double* p, int T) {
  causalSoftmaxImpl(p, T);
}
CHORUS_TRAIN_VECTOR_CLONES void causalSoftmaxBackward(float* dp, const float* p, int T) {
  causalSoftmaxBackwardImpl(dp, p, T);
}
void causalSoftmaxBackward(double* dp, const double* p, int T) {
  causalSoftmaxBackwardImpl(dp, p, T);
}

// Head h of sequence b: its q, k and v columns in the (B,T,3C) buffer (row stride 3C), and the start of its
// (T,T) block of probabilities.
template <typename Q, typename P>
struct Head {
  Q* q;
  Q* k;
  Q* v;
  P* p;
  Head(Q* qkv, P* probs, int b, int h, int T, int H, int hs) {
    const int C = H * hs;
    q = qkv + static_cast<int64_t>(b) * T * 3 * C + h * hs;
    k = q + C;
    v = q + 2 * C;
    p = probs + (static_cast<int64_t>(b) * H + h) * T * T;
  }
};

}  // namespace

template <typename F>
void attentionForward(F* out, F* probs, const F* qkv, int B, int T, int H, int hs) {
  const int C = H * hs, ld = 3 * C;
  const F scale = F(1) / std::sqrt(F(hs));
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < H; ++h) {
      Head<const F, F> x(qkv, probs, b, h, T, H, hs);
      // p (T,T) = scale * q (T,hs) * k^T (hs,T); only the lower triangle is kept.
      gemm<F>(Trans::kNo, Trans::kYes, T, T, hs, scale, x.q, ld, x.k, ld, F(0), x.p, T);
      causalSoftmax(x.p, T);
      // out (T,hs) = p (T,T) * v (T,hs), written into this head's columns.
      gemm<F>(Trans::kNo, Trans::kNo, T, hs, T, F(1), x.p, T, x.v, ld, F(0),
              out + static_cast<int64_t>(b) * T * C + h * hs, C);
    }
  }
}

template <typename F>
void attentionBackward(F* dqkv, F* dscratch, const F* dout, const F* qkv, const F* probs, int B, int T, int H, int hs) {
  const int C = H * hs, ld = 3 * C;
  const F scale = F(1) / std::sqrt(F(hs));
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < H; ++h) {
      Head<const F, const F> x(qkv, probs, b, h, T, H, hs);
      Head<F, const F> d(dqkv, probs, b, h, T, H, hs);
      const F *q = x.q, *k = x.k, *v = x.v, *p = x.p;
      F *dq = d.q, *dk = d.k, *dv = d.v;
      const F* dO = dout + static_cast<int64_t>(b) * T * C + h * hs;
      F* dp = dscratch;
      // dv (T,hs) = p^T * dout; dp (T,T) = dout * v^T
      gemm<F>(Trans::kYes, Trans::kNo, T, hs, T, F(1), p, T, dO, C, F(0), dv, ld);
      gemm<F>(Trans::kNo, Trans::kYes, T, T, hs, F(1), dO, C, v, ld, F(0), dp, T);
      // Through the softmax to the scores.
      causalSoftmaxBackward(dp, p, T);
      // dq = scale * ds * k; dk = scale * ds^T * q
      gemm<F>(Trans::kNo, Trans::kNo, T, hs, T, scale, dp, T, k, ld, F(0), dq, ld);
      gemm<F>(Trans::kYes, Trans::kNo, T, hs, T, scale, dp, T, q, ld, F(0), dk, ld);
    }
  }
}

template void attentionForward<float>(float*, float*, const float*, int, int, int, int);
template void attentionForward<double>(double*, double*, const double*, int, int, int, int);
template void attentionBackward<float>(float*, float*, const float*, const float*, const float*, int, int, int, int);
template void attentionBackward<double>(double*, double*, const double*, const double*, const double*, int, int, int,
                                        int);

}  // namespace chorus::train
