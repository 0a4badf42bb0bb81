#include "model/host_layer_ops.h"

#include <cstring>

#include "model/attention.h"
#include "model/embedding.h"
#include "model/gelu.h"
#include "model/layernorm.h"
#include "model/linear.h"

namespace chorus::train {

template <typename F>
HostLayerOps<F>& HostLayerOps<F>::instance() {
  static HostLayerOps ops;
  return ops;
}

template <typename F>
void HostLayerOps<F>::linearForward(F* out, const F* inp, const F* w, const F* b, int N, int I, int O) {
  chorus::train::linearForward<F>(out, inp, w, b, N, I, O);
}
template <typename F>
void HostLayerOps<F>::linearBackward(F* dinp, F* dw, F* db, const F* dout, const F* inp, const F* w, int N, int I,
                                     int O, bool accumulateInput) {
  chorus::train::linearBackward<F>(dinp, dw, db, dout, inp, w, N, I, O, accumulateInput);
}
template <typename F>
void HostLayerOps<F>::columnSum(F* db, const F* dout, int N, int O) {
  chorus::train::columnSum<F>(db, dout, N, O);
}
template <typename F>
void HostLayerOps<F>::layernormForward(F* out, F* mean, F* rstd, const F* inp, const F* w, const F* b, int N, int C) {
  chorus::train::layernormForward<F>(out, mean, rstd, inp, w, b, N, C);
}
template <typename F>
void HostLayerOps<F>::layernormBackward(F* dinp, F* dw, F* db, const F* dout, const F* inp, const F* w, const F* mean,
                                        const F* rstd, int N, int C) {
  chorus::train::layernormBackward<F>(dinp, dw, db, dout, inp, w, mean, rstd, N, C);
}
template <typename F>
int64_t HostLayerOps<F>::attentionScratch(int /*B*/, int T, int /*H*/) const {
  return static_cast<int64_t>(T) * T;  // one head at a time
}
template <typename F>
void HostLayerOps<F>::attentionForward(F* out, F* probs, const F* qkv, int B, int T, int H, int hs) {
  chorus::train::attentionForward<F>(out, probs, qkv, B, T, H, hs);
}
template <typename F>
void HostLayerOps<F>::attentionBackward(F* dqkv, F* dscratch, const F* dout, const F* qkv, const F* probs, int B, int T,
                                        int H, int hs) {
  chorus::train::attentionBackward<F>(dqkv, dscratch, dout, qkv, probs, B, T, H, hs);
}
template <typename F>
void HostLayerOps<F>::geluForward(F* out, const F* inp, int64_t n) {
  chorus::train::geluForward<F>(out, inp, n);
}
template <typename F>
void HostLayerOps<F>::geluBackward(F* dinp, const F* inp, const F* dout, int64_t n) {
  chorus::train::geluBackward<F>(dinp, inp, dout, n);
}
template <typename F>
void HostLayerOps<F>::embeddingForward(F* out, const int32_t* tokens, const F* wte, int vocabStart, int vocabLocal,
                                       const F* wpe, int B, int T, int C) {
  chorus::train::embeddingForward<F>(out, tokens, wte, vocabStart, vocabLocal, wpe, B, T, C);
}
template <typename F>
void HostLayerOps<F>::addPositions(F* out, const F* wpe, int B, int T, int C) {
  chorus::train::addPositions<F>(out, wpe, B, T, C);
}
template <typename F>
void HostLayerOps<F>::addPositionRows(F* out, const F* wpe, int64_t firstRow, int R, int T, int C) {
  chorus::train::addPositionRows<F>(out, wpe, firstRow, R, T, C);
}
template <typename F>
void HostLayerOps<F>::positionGradRows(F* dwpe, const F* dout, int64_t firstRow, int R, int T, int C) {
  chorus::train::positionGradRows<F>(dwpe, dout, firstRow, R, T, C);
}
template <typename F>
void HostLayerOps<F>::embeddingBackward(F* dwte, F* dwpe, const F* dout, const int32_t* tokens, int vocabStart,
                                        int vocabLocal, int B, int T, int C, bool accumulate) {
  chorus::train::embeddingBackward<F>(dwte, dwpe, dout, tokens, vocabStart, vocabLocal, B, T, C, accumulate);
}
template <typename F>
double HostLayerOps<F>::crossEntropyForward(F* logits, F* rowMax, F* rowSum, const F* x, const F* wte,
                                            const int32_t* targets, int N, int C, int vocabStart, int V,
                                            VocabReducer<F>* tp) {
  return chorus::train::crossEntropyForward<F>(logits, rowMax, rowSum, x, wte, targets, N, C, vocabStart, V, tp);
}
template <typename F>
void HostLayerOps<F>::crossEntropyBackward(F* dx, F* dwte, F* logits, const F* x, const F* wte, const int32_t* targets,
                                           int N, int C, int vocabStart, int V, F gradScale, bool accumulateWte) {
  chorus::train::crossEntropyBackward<F>(dx, dwte, logits, x, wte, targets, N, C, vocabStart, V, gradScale,
                                         accumulateWte);
}
template <typename F>
void HostLayerOps<F>::add(F* dst, const F* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
}
template <typename F>
void HostLayerOps<F>::addBias(F* x, const F* bias, int R, int C) {
  for (int r = 0; r < R; ++r) add(x + static_cast<int64_t>(r) * C, bias, C);
}
template <typename F>
void HostLayerOps<F>::copy(F* dst, const F* src, int64_t n) {
  std::memcpy(dst, src, sizeof(F) * static_cast<size_t>(n));
}

template class HostLayerOps<float>;
template class HostLayerOps<double>;

}  // namespace chorus::train
