#include "model/gpt_stage.h"

#include <cstring>

#include "model/attention.h"
#include "model/cross_entropy.h"
#include "model/embedding.h"
#include "model/gelu.h"
#include "model/layernorm.h"
#include "model/linear.h"

namespace chorus::train {
namespace {
template <typename F>
void addInto(F* dst, const F* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
}
// x (N,C) += bias (C) on every row: the bias of a row-parallel layer, added once after the group's sum.
template <typename F>
void addBias(F* x, const F* bias, int N, int C) {
  for (int n = 0; n < N; ++n) addInto(x + static_cast<int64_t>(n) * C, bias, C);
}
}  // namespace

template <typename F>
StageActivations<F>::StageActivations(const ParamLayout& layout, int batch) {
  const ModelConfig& cfg = layout.config();
  const ModelPart& part = layout.part();
  const int64_t T = cfg.seqLen, N = batch * T, C = cfg.dModel, t = part.tpSize;
  const int64_t Cl = C / t, Hl = cfg.heads / t, Fl = cfg.ffn() / t, Vl = cfg.vocab / t;
  const int L = part.localLayers();
  const MemKind k = MemKind::kActivations;
  tokens.resize(N, k);
  targets.resize(N, k);
  x.resize(L + 1);
  for (auto& b : x) b.resize(N * C, k);
  auto perLayer = [&](std::vector<Buffer<F>>& v, int64_t n) {
    v.resize(L);
    for (auto& b : v) b.resize(n, k);
  };
  perLayer(ln1, N * C);
  perLayer(ln1Mean, N);
  perLayer(ln1Rstd, N);
  perLayer(qkv, N * 3 * Cl);
  perLayer(probs, batch * Hl * T * T);
  perLayer(atty, N * Cl);
  perLayer(xmid, N * C);
  perLayer(ln2, N * C);
  perLayer(ln2Mean, N);
  perLayer(ln2Rstd, N);
  perLayer(fch, N * Fl);
  perLayer(fcg, N * Fl);
  if (part.hasHead) {
    lnf.resize(N * C, k);
    lnfMean.resize(N, k);
    lnfRstd.resize(N, k);
    logits.resize(N * Vl, k);
    rowMax.resize(N, k);
    rowSum.resize(N, k);
  }
}

template <typename F>
int64_t StageActivations<F>::bytes() const {
  int64_t n = (tokens.size() + targets.size()) * static_cast<int64_t>(sizeof(int32_t));
  for (const auto* v : {&x, &ln1, &ln1Mean, &ln1Rstd, &qkv, &probs, &atty, &xmid, &ln2, &ln2Mean, &ln2Rstd, &fch, &fcg})
    for (const auto& b : *v) n += b.size() * static_cast<int64_t>(sizeof(F));
  for (const auto* b : {&lnf, &lnfMean, &lnfRstd, &logits, &rowMax, &rowSum})
    n += b->size() * static_cast<int64_t>(sizeof(F));
  return n;
}

template <typename F>
GptStage<F>::GptStage(const ParamLayout& layout, int batch, TensorParallelOps<F>* tp)
    : layout_(layout), tp_(layout.part().tpSize > 1 ? tp : nullptr) {
  const ModelConfig& cfg = layout.config();
  const int t = layout.part().tpSize;
  B_ = batch;
  T_ = cfg.seqLen;
  C_ = cfg.dModel;
  N_ = B_ * T_;
  Hl_ = cfg.heads / t;
  hs_ = cfg.headSize();
  Cl_ = C_ / t;
  Fl_ = cfg.ffn() / t;
  Vl_ = layout.vocabLocal();
  const MemKind k = MemKind::kActivations;
  const int64_t n = N_;
  dres_.resize(n * C_, k);
  dln_.resize(n * C_, k);
  if (layout.part().localLayers() > 0) {
    dqkv_.resize(n * 3 * Cl_, k);
    datty_.resize(n * Cl_, k);
    dfch_.resize(n * Fl_, k);
    dfcg_.resize(n * Fl_, k);
    dscores_.resize(static_cast<int64_t>(T_) * T_, k);
  }
}

template <typename F>
int64_t GptStage<F>::scratchBytes() const {
  int64_t n = 0;
  for (const auto* b : {&dres_, &dln_, &dqkv_, &datty_, &dfch_, &dfcg_, &dscores_}) n += b->size();
  return n * static_cast<int64_t>(sizeof(F));
}

template <typename F>
void GptStage<F>::forward(StageActivations<F>& a, UnitAccess<F>& access) {
  const ModelPart& part = layout_.part();
  const bool tied = part.hasEmbedding && part.hasHead && !part.headHasOwnEmbedding;
  const F* emb = nullptr;
  if (part.hasEmbedding) {
    const int u = layout_.embeddingUnit();
    emb = access.params(u, Pass::kForward);
    const F* wte = emb + layout_.wteOffset();
    const F* wpe = emb + layout_.wpeOffset();
    F* x0 = a.x[0].data();
    if (tp_) {
      // Vocabulary-parallel lookup: each rank contributes its rows, the group's sum is the embedding.
      embeddingForward<F>(x0, a.tokens.data(), wte, layout_.vocabStart(), Vl_, nullptr, B_, T_, C_);
      tp_->sumActivations(x0, static_cast<int64_t>(N_) * C_);
      addPositions<F>(x0, wpe, B_, T_, C_);
    } else {
      embeddingForward<F>(x0, a.tokens.data(), wte, 0, Vl_, wpe, B_, T_, C_);
    }
    if (!tied) access.releaseParams(u, Pass::kForward);
  }
  for (int l = part.firstLayer; l < part.lastLayer; ++l) {
    const int u = layout_.blockUnit(l);
    blockForward(l, a, access.params(u, Pass::kForward));
    access.releaseParams(u, Pass::kForward);
  }
  if (part.hasHead) {
    const int u = layout_.finalUnit();
    const F* p = access.params(u, Pass::kForward);
    const F* xL = a.x[part.localLayers()].data();
    layernormForward<F>(a.lnf.data(), a.lnfMean.data(), a.lnfRstd.data(), xL, p + layout_.lnfwOffset(),
                        p + layout_.lnfbOffset(), N_, C_);
    const F* wte = tied ? emb + layout_.wteOffset() : p + layout_.headWteOffset();
    a.loss = crossEntropyForward<F>(a.logits.data(), a.rowMax.data(), a.rowSum.data(), a.lnf.data(), wte,
                                    a.targets.data(), N_, C_, layout_.vocabStart(), Vl_, tp_);
    access.releaseParams(u, Pass::kForward);
    if (tied) access.releaseParams(layout_.embeddingUnit(), Pass::kForward);
  }
}

template <typename F>
void GptStage<F>::blockForward(int l, StageActivations<F>& a, const F* p) {
  const BlockOffsets& o = layout_.block();
  const int i = l - layout_.part().firstLayer;
  const F* x = a.x[i].data();
  F* out = a.x[i + 1].data();
  F* xmid = a.xmid[i].data();
  const int64_t NC = static_cast<int64_t>(N_) * C_;
  // Attention: xmid = x + proj(attention(qkv(ln1(x))))
  layernormForward<F>(a.ln1[i].data(), a.ln1Mean[i].data(), a.ln1Rstd[i].data(), x, p + o.ln1w, p + o.ln1b, N_, C_);
  linearForward<F>(a.qkv[i].data(), a.ln1[i].data(), p + o.qkvw, p + o.qkvb, N_, C_, 3 * Cl_);
  attentionForward<F>(a.atty[i].data(), a.probs[i].data(), a.qkv[i].data(), B_, T_, Hl_, hs_);
  linearForward<F>(xmid, a.atty[i].data(), p + o.projw, tp_ ? nullptr : p + o.projb, N_, Cl_, C_);
  if (tp_) {
    tp_->sumActivations(xmid, NC);
    addBias(xmid, p + o.projb, N_, C_);
  }
  addInto(xmid, x, NC);
  // MLP: out = xmid + proj(gelu(fc(ln2(xmid))))
  layernormForward<F>(a.ln2[i].data(), a.ln2Mean[i].data(), a.ln2Rstd[i].data(), xmid, p + o.ln2w, p + o.ln2b, N_, C_);
  linearForward<F>(a.fch[i].data(), a.ln2[i].data(), p + o.fcw, p + o.fcb, N_, C_, Fl_);
  geluForward<F>(a.fcg[i].data(), a.fch[i].data(), static_cast<int64_t>(N_) * Fl_);
  linearForward<F>(out, a.fcg[i].data(), p + o.fcprojw, tp_ ? nullptr : p + o.fcprojb, N_, Fl_, C_);
  if (tp_) {
    tp_->sumActivations(out, NC);
    addBias(out, p + o.fcprojb, N_, C_);
  }
  addInto(out, xmid, NC);
}

template <typename F>
void GptStage<F>::backward(StageActivations<F>& a, F gradScale, const F* doutput, UnitAccess<F>& access) {
  const ModelPart& part = layout_.part();
  const bool tied = part.hasEmbedding && part.hasHead && !part.headHasOwnEmbedding;
  const int64_t NC = static_cast<int64_t>(N_) * C_;
  F* embGrads = nullptr;
  if (part.hasHead) {
    const int u = layout_.finalUnit();
    const F* p = access.params(u, Pass::kBackward);
    F* g = access.grads(u);
    const F* wte;
    F* dwte;
    if (tied) {
      wte = access.params(layout_.embeddingUnit(), Pass::kBackward) + layout_.wteOffset();
      embGrads = access.grads(layout_.embeddingUnit());
      dwte = embGrads + layout_.wteOffset();
    } else {
      wte = p + layout_.headWteOffset();
      dwte = g + layout_.headWteOffset();
    }
    crossEntropyBackward<F>(dln_.data(), dwte, a.logits.data(), a.lnf.data(), wte, a.targets.data(), N_, C_,
                            layout_.vocabStart(), Vl_, gradScale, false);
    if (tp_) tp_->sumInputGrads(dln_.data(), NC);
    dres_.zero();
    layernormBackward<F>(dres_.data(), g + layout_.lnfwOffset(), g + layout_.lnfbOffset(), dln_.data(),
                         a.x[part.localLayers()].data(), p + layout_.lnfwOffset(), a.lnfMean.data(), a.lnfRstd.data(),
                         N_, C_);
    if (tied) access.releaseParams(layout_.embeddingUnit(), Pass::kBackward);
    access.releaseParams(u, Pass::kBackward);
    access.gradsDone(u);
  } else {
    std::memcpy(dres_.data(), doutput, sizeof(F) * NC);
  }
  for (int l = part.lastLayer - 1; l >= part.firstLayer; --l) {
    const int u = layout_.blockUnit(l);
    const F* p = access.params(u, Pass::kBackward);
    blockBackward(l, a, p, access.grads(u));
    access.releaseParams(u, Pass::kBackward);
    access.gradsDone(u);
  }
  if (part.hasEmbedding) {
    const int u = layout_.embeddingUnit();
    if (!embGrads) embGrads = access.grads(u);
    embeddingBackward<F>(embGrads + layout_.wteOffset(), embGrads + layout_.wpeOffset(), dres_.data(), a.tokens.data(),
                         layout_.vocabStart(), Vl_, B_, T_, C_, tied);
    access.gradsDone(u);
  }
}

template <typename F>
void GptStage<F>::blockBackward(int l, StageActivations<F>& a, const F* p, F* g) {
  const BlockOffsets& o = layout_.block();
  const int i = l - layout_.part().firstLayer;
  const int64_t NC = static_cast<int64_t>(N_) * C_;
  // dres_ holds the gradient of the block's output; it leaves holding the gradient of the block's input.
  linearBackward<F>(dfcg_.data(), g + o.fcprojw, g + o.fcprojb, dres_.data(), a.fcg[i].data(), p + o.fcprojw, N_, Fl_,
                    C_, false);
  geluBackward<F>(dfch_.data(), a.fch[i].data(), dfcg_.data(), static_cast<int64_t>(N_) * Fl_);
  linearBackward<F>(dln_.data(), g + o.fcw, g + o.fcb, dfch_.data(), a.ln2[i].data(), p + o.fcw, N_, C_, Fl_, false);
  if (tp_) tp_->sumInputGrads(dln_.data(), NC);
  layernormBackward<F>(dres_.data(), g + o.ln2w, g + o.ln2b, dln_.data(), a.xmid[i].data(), p + o.ln2w,
                       a.ln2Mean[i].data(), a.ln2Rstd[i].data(), N_, C_);
  linearBackward<F>(datty_.data(), g + o.projw, g + o.projb, dres_.data(), a.atty[i].data(), p + o.projw, N_, Cl_, C_,
                    false);
  attentionBackward<F>(dqkv_.data(), dscores_.data(), datty_.data(), a.qkv[i].data(), a.probs[i].data(), B_, T_, Hl_,
                       hs_);
  linearBackward<F>(dln_.data(), g + o.qkvw, g + o.qkvb, dqkv_.data(), a.ln1[i].data(), p + o.qkvw, N_, C_, 3 * Cl_,
                    false);
  if (tp_) tp_->sumInputGrads(dln_.data(), NC);
  layernormBackward<F>(dres_.data(), g + o.ln1w, g + o.ln1b, dln_.data(), a.x[i].data(), p + o.ln1w,
                       a.ln1Mean[i].data(), a.ln1Rstd[i].data(), N_, C_);
}

template struct StageActivations<float>;
template struct StageActivations<double>;
template class GptStage<float>;
template class GptStage<double>;

}  // namespace chorus::train
