// The element-wise kernels of the device path, one functor per kernel: operator()(i) computes output element (or row,
// or column) i, reading nothing another i writes, so any order of i gives the same result. A CUDA launch calls it from
// one thread per i (cuda/cuda_exec.cuh); the host emulation (device/host_exec.h) from a loop. Each mirrors a host loop
// of model/ and performs the same operations in the same order, so the three paths agree bit for bit wherever the GEMMs
// do (the kernels are compiled without FMA contraction).
#ifndef CHORUS_TRAIN_DEVICE_KERNELS_H_
#define CHORUS_TRAIN_DEVICE_KERNELS_H_

#include <cmath>
#include <cstdint>

#include "comm/bf16.h"
#include "model/gelu.h"
#include "optim/adamw_element.h"
#include "tensor/hd.h"
#include "tensor/vec_math.h"

namespace chorus::train::kernels {

// ---- glue -----------------------------------------------------------------------------------------------------------

struct Fill {  // out[i] = v
  float* out;
  float v;
  CHORUS_TRAIN_HD void operator()(int64_t i) const { out[i] = v; }
};
struct Add {  // dst[i] += src[i]
  float* dst;
  const float* src;
  CHORUS_TRAIN_HD void operator()(int64_t i) const { dst[i] += src[i]; }
};
struct AddRowVector {  // x (R,C) += v (C) on every row; i over R*C
  float* x;
  const float* v;
  int C;
  CHORUS_TRAIN_HD void operator()(int64_t i) const { x[i] += v[i % C]; }
};
struct SetRowVector {  // x (R,C) = v (C) on every row (a linear layer's bias before its GEMM adds the product)
  float* x;
  const float* v;
  int C;
  CHORUS_TRAIN_HD void operator()(int64_t i) const { x[i] = v[i % C]; }
};
struct ColumnSum {  // db[o] = sum over rows of dout (N,O): row 0, then rows 1.. added in order; i over O
  float* db;
  const float* dout;
  int N, O;
  CHORUS_TRAIN_HD void operator()(int64_t o) const {
    float s = dout[o];
    for (int n = 1; n < N; ++n) s += dout[static_cast<int64_t>(n) * O + o];
    db[o] = s;
  }
};

// ---- LayerNorm (model/layernorm.cc) ---------------------------------------------------------------------------------

struct LayernormRows {  // i over the N rows
  float *out, *mean, *rstd;
  const float *inp, *w, *b;
  int C;
  CHORUS_TRAIN_HD void operator()(int64_t n) const {
    const float eps = 1e-5f;
    const float* x = inp + n * C;
    float m = 0;
    for (int i = 0; i < C; ++i) m += x[i];
    m /= C;
    float v = 0;
    for (int i = 0; i < C; ++i) v += (x[i] - m) * (x[i] - m);
    v /= C;
    const float s = 1.0f / sqrtf(v + eps);
    float* o = out + n * C;
    for (int i = 0; i < C; ++i) o[i] = (x[i] - m) * s * w[i] + b[i];
    mean[n] = m;
    rstd[n] = s;
  }
};
struct LayernormBackwardRows {  // dinp (N,C) += the input's gradient; i over the N rows
  float* dinp;
  const float *dout, *inp, *w, *mean, *rstd;
  int C;
  CHORUS_TRAIN_HD void operator()(int64_t n) const {
    const float* x = inp + n * C;
    const float* d = dout + n * C;
    float* dx = dinp + n * C;
    const float m = mean[n], s = rstd[n];
    float sumD = 0, sumDN = 0;
    for (int i = 0; i < C; ++i) {
      const float norm = (x[i] - m) * s;
      const float dn = d[i] * w[i];
      sumD += dn;
      sumDN += dn * norm;
    }
    sumD /= C;
    sumDN /= C;
    for (int i = 0; i < C; ++i) {
      const float norm = (x[i] - m) * s;
      dx[i] += s * (d[i] * w[i] - sumD - norm * sumDN);
    }
  }
};
struct LayernormBackwardParams {  // dw, db (C) over the rows in order; i over the C columns
  float *dw, *db;
  const float *dout, *inp, *mean, *rstd;
  int N, C;
  CHORUS_TRAIN_HD void operator()(int64_t i) const {
    float gw = 0, gb = 0;
    for (int n = 0; n < N; ++n) {
      const int64_t at = static_cast<int64_t>(n) * C + i;
      const float norm = (inp[at] - mean[n]) * rstd[n];
      gb += dout[at];
      gw += norm * dout[at];
    }
    dw[i] = gw;
    db[i] = gb;
  }
};

// ---- attention (model/attention.cc) ---------------------------------------------------------------------------------

struct CausalSoftmaxRows {  // p holds rows of (T,T) blocks; i over the rows, row t of its block is i % T
  float* p;
  int T;
  CHORUS_TRAIN_HD void operator()(int64_t r) const {
    const int t = static_cast<int>(r % T);
    float* row = p + r * T;
    float mx = row[0];
    for (int j = 1; j <= t; ++j) mx = row[j] > mx ? row[j] : mx;
    float sum = 0;
    for (int j = 0; j <= t; ++j) {
      row[j] = expApprox(row[j] - mx);
      sum += row[j];
    }
    const float inv = 1.0f / sum;
    for (int j = 0; j <= t; ++j) row[j] *= inv;
    for (int j = t + 1; j < T; ++j) row[j] = 0;
  }
};
struct CausalSoftmaxBackwardRows {  // dp becomes the scores' gradient, p * (dp - sum_j p*dp); i over rows
  float* dp;
  const float* p;
  int T;
  CHORUS_TRAIN_HD void operator()(int64_t r) const {
    const int t = static_cast<int>(r % T);
    const float* pr = p + r * T;
    float* dr = dp + r * T;
    float dot = 0;
    for (int j = 0; j <= t; ++j) dot += pr[j] * dr[j];
    for (int j = 0; j <= t; ++j) dr[j] = pr[j] * (dr[j] - dot);
    for (int j = t + 1; j < T; ++j) dr[j] = 0;
  }
};

// ---- GELU (model/gelu.h) --------------------------------------------------------------------------------------------

struct GeluForward {
  float* out;
  const float* inp;
  CHORUS_TRAIN_HD void operator()(int64_t i) const { out[i] = geluValue(inp[i]); }
};
struct GeluBackward {
  float* dinp;
  const float *inp, *dout;
  CHORUS_TRAIN_HD void operator()(int64_t i) const { dinp[i] = dout[i] * geluSlope(inp[i]); }
};

// ---- embeddings (model/embedding.cc) --------------------------------------------------------------------------------

struct EmbeddingForward {  // out (B*T, C); i over B*T*C
  float* out;
  const int32_t* tokens;
  const float *wte, *wpe;  // wpe may be null
  int vocabStart, vocabLocal, T, C;
  CHORUS_TRAIN_HD void operator()(int64_t i) const {
    const int64_t n = i / C;
    const int c = static_cast<int>(i % C);
    const int t = static_cast<int>(n % T);
    const int row = tokens[n] - vocabStart;
    if (row >= 0 && row < vocabLocal) {
      const float e = wte[static_cast<int64_t>(row) * C + c];
      out[i] = wpe ? e + wpe[static_cast<int64_t>(t) * C + c] : e;
    } else {
      out[i] = wpe ? wpe[static_cast<int64_t>(t) * C + c] : 0.0f;
    }
  }
};
struct AddPositionRows {  // out (R,C) += the positions of rows firstRow.. (row r is position r % T); i over R*C
  float* out;
  const float* wpe;
  int64_t firstRow;
  int T, C;
  CHORUS_TRAIN_HD void operator()(int64_t i) const {
    const int64_t r = i / C;
    const int c = static_cast<int>(i % C);
    out[i] += wpe[((firstRow + r) % T) * C + c];
  }
};
struct PositionGradRows {  // dwpe (T,C) = the sum of dout's rows (R,C) at each position, in row order
  float* dwpe;
  const float* dout;
  int64_t firstRow;
  int R, T, C;
  CHORUS_TRAIN_HD void operator()(int64_t i) const {
    const int t = static_cast<int>(i / C);
    const int c = static_cast<int>(i % C);
    float g = 0;
    const int first = static_cast<int>(((t - firstRow % T) % T + T) % T);  // the first row at position t
    for (int r = first; r < R; r += T) g += dout[static_cast<int64_t>(r) * C + c];
    dwpe[i] = g;
  }
};
struct EmbeddingBackwardWte {  // dwte (vocabLocal, C): (accumulate ? dwte : 0) + every in-range token's row
  float* dwte;
  const float* dout;
  const int32_t* tokens;
  int vocabStart, N, C;
  bool accumulate;
  CHORUS_TRAIN_HD void operator()(int64_t i) const {
    const int v = static_cast<int>(i / C) + vocabStart;
    const int c = static_cast<int>(i % C);
    float g = accumulate ? dwte[i] : 0.0f;
    for (int n = 0; n < N; ++n)
      if (tokens[n] == v) g += dout[static_cast<int64_t>(n) * C + c];
    dwte[i] = g;
  }
};
struct EmbeddingBackwardWpe {  // dwpe (T,C) = dout summed over the batch, sequence 0 first; i over T*C
  float* dwpe;
  const float* dout;
  int B, T, C;
  CHORUS_TRAIN_HD void operator()(int64_t i) const {
    float g = dout[i];
    for (int b = 1; b < B; ++b) g += dout[static_cast<int64_t>(b) * T * C + i];
    dwpe[i] = g;
  }
};

// ---- softmax cross-entropy (model/cross_entropy.cc) -----------------------------------------------------------------

struct RowMax {  // rowMax[n] = max of logits' row n (N,V)
  float* rowMax;
  const float* logits;
  int V;
  CHORUS_TRAIN_HD void operator()(int64_t n) const {
    const float* row = logits + n * V;
    float mx = row[0];
    for (int v = 1; v < V; ++v) mx = row[v] > mx ? row[v] : mx;
    rowMax[n] = mx;
  }
};
struct ExpRows {  // the target's shifted logit, then exp(logit - max) in place and the row's sum
  float *logits, *rowSum, *target;
  const float* rowMax;
  const int32_t* targets;
  int vocabStart, V;
  CHORUS_TRAIN_HD void operator()(int64_t n) const {
    float* row = logits + n * V;
    const int t = targets[n] - vocabStart;
    target[n] = t >= 0 && t < V ? row[t] - rowMax[n] : 0.0f;
    float sum = 0;
    for (int v = 0; v < V; ++v) {
      row[v] = expApprox(row[v] - rowMax[n]);
      sum += row[v];
    }
    rowSum[n] = sum;
  }
};
struct NormalizeRows {  // probabilities in place, and each row's -log p(target)
  float* logits;
  double* rowLoss;
  const float *rowSum, *target;
  int V;
  CHORUS_TRAIN_HD void operator()(int64_t n) const {
    float* row = logits + n * V;
    const float inv = 1.0f / rowSum[n];
    for (int v = 0; v < V; ++v) row[v] *= inv;
    rowLoss[n] = static_cast<double>(logf(rowSum[n]) - target[n]);
  }
};
struct SumInOrder {  // out[0] = x[0] + x[1] + ... in order (one thread: the host loop's rounding)
  double* out;
  const double* x;
  int64_t n;
  CHORUS_TRAIN_HD void operator()(int64_t) const {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += x[i];
    out[0] = s;
  }
};
struct LossGradRows {  // dlogits = (p - onehot(target)) * gradScale in place; i over the N rows
  float* logits;
  const int32_t* targets;
  int vocabStart, V;
  float gradScale;
  CHORUS_TRAIN_HD void operator()(int64_t n) const {
    float* row = logits + n * V;
    for (int v = 0; v < V; ++v) row[v] *= gradScale;
    const int t = targets[n] - vocabStart;
    if (t >= 0 && t < V) row[t] -= gradScale;
  }
};

// ---- the data-parallel engines --------------------------------------------------------------------------------------

struct ToBf16 {
  uint16_t* dst;
  const float* src;
  CHORUS_TRAIN_HD void operator()(int64_t i) const { dst[i] = floatToBf16(src[i]); }
};
struct FromBf16 {
  float* dst;
  const uint16_t* src;
  CHORUS_TRAIN_HD void operator()(int64_t i) const { dst[i] = bf16ToFloat(src[i]); }
};
struct AddBf16 {
  float* dst;
  const uint16_t* src;
  CHORUS_TRAIN_HD void operator()(int64_t i) const { dst[i] += bf16ToFloat(src[i]); }
};
struct AdamW {
  AdamWScalars s;
  float *p, *m, *v;
  const float* g;
  CHORUS_TRAIN_HD void operator()(int64_t i) const { adamwElement(s, p[i], g[i], m[i], v[i]); }
};
// Sum of squares in two passes, each element in a fixed place: partial[j] = the sum over chunk j (kChunk elements, in
// order), then the partials summed in order (SumInOrder). Deterministic; not the host's order.
constexpr int64_t kSquaresChunk = 4096;
struct SquaresPartial {
  double* partial;
  const float* x;
  int64_t n;
  CHORUS_TRAIN_HD void operator()(int64_t j) const {
    const int64_t end = (j + 1) * kSquaresChunk < n ? (j + 1) * kSquaresChunk : n;
    double s = 0;
    for (int64_t i = j * kSquaresChunk; i < end; ++i) s += static_cast<double>(x[i]) * x[i];
    partial[j] = s;
  }
};

}  // namespace chorus::train::kernels

#endif  // CHORUS_TRAIN_DEVICE_KERNELS_H_
