#include "model/layernorm.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace chorus::train {

template <typename F>
void layernormForward(F* out, F* mean, F* rstd, const F* inp, const F* w, const F* b, int N, int C) {
  const F eps = F(1e-5);
  for (int n = 0; n < N; ++n) {
    const F* x = inp + static_cast<int64_t>(n) * C;
    F m = 0;
    for (int i = 0; i < C; ++i) m += x[i];
    m /= C;
    F v = 0;
    for (int i = 0; i < C; ++i) v += (x[i] - m) * (x[i] - m);
    v /= C;
    F s = F(1) / std::sqrt(v + eps);
    F* o = out + static_cast<int64_t>(n) * C;
    for (int i = 0; i < C; ++i) o[i] = (x[i] - m) * s * w[i] + b[i];
    mean[n] = m;
    rstd[n] = s;
  }
}

template <typename F>
void layernormBackward(F* dinp, F* dw, F* db, const F* dout, const F* inp, const F* w, const F* mean, const F* rstd,
                       int N, int C) {
  std::memset(dw, 0, sizeof(F) * C);
  std::memset(db, 0, sizeof(F) * C);
  for (int n = 0; n < N; ++n) {
    const F* x = inp + static_cast<int64_t>(n) * C;
    const F* d = dout + static_cast<int64_t>(n) * C;
    F* dx = dinp + static_cast<int64_t>(n) * C;
    const F m = mean[n], s = rstd[n];
    // dnorm = d * w; dx = s * (dnorm - mean(dnorm) - norm * mean(dnorm * norm))
    F sumD = 0, sumDN = 0;
    for (int i = 0; i < C; ++i) {
      F norm = (x[i] - m) * s;
      F dn = d[i] * w[i];
      sumD += dn;
      sumDN += dn * norm;
      db[i] += d[i];
      dw[i] += norm * d[i];
    }
    sumD /= C;
    sumDN /= C;
    for (int i = 0; i < C; ++i) {
      F norm = (x[i] - m) * s;
      dx[i] += s * (d[i] * w[i] - sumD - norm * sumDN);
    }
  }
}

template void layernormForward<float>(float*, float*, float*, const float*, const float*, const float*, int, int);
template void layernormForward<double>(double*, double*, double*, const double*, const double*, const double*, int,
                                       int);
template void layernormBackward<float>(float*, float*, float*, const float*, const float*, const float*, const float*,
                                       const float*, int, int);
template void layernormBackward<double>(double*, double*, double*, const double*, const double*, const double*,
                                        const double*, const double*, int, int);

}  // namespace chorus::train
