#include "model/gpt_stage.h"

#include <stdexcept>

#include "model/host_layer_ops.h"
#include "tensor/device.h"

namespace chorus::train {
namespace {
// The layers of the rank's device; double (the gradient check) runs on the host only.
template <typename F>
LayerOps<F>& defaultOps();
template <>
LayerOps<float>& defaultOps<float>() {
  return Device::current().layers();
}
template <>
LayerOps<double>& defaultOps<double>() {
  return HostLayerOps<double>::instance();
}

// Rows of the flattened batch this rank's residual stream holds.
int residualRows(int N, const ModelPart& part, bool sp) {
  return sp ? N / part.tpSize : N;
}
}  // namespace

template <typename F>
StageActivations<F>::StageActivations(const ParamLayout& layout, int chunk, int batch, bool sp) {
  const ModelConfig& cfg = layout.config();
  const ModelPart& part = layout.part();
  const int64_t T = cfg.seqLen, N = batch * T, C = cfg.dModel, t = part.tpSize;
  const int64_t Nr = residualRows(static_cast<int>(N), part, sp);
  const int64_t Cl = C / t, Hl = cfg.heads / t, Fl = cfg.ffn() / t, Vl = cfg.vocab / t;
  const int L = part.chunks[chunk].size();
  const MemKind k = MemKind::kActivations;
  tokens.resize(N, k);
  targets.resize(N, k);
  x.resize(L + 1);
  for (auto& b : x) b.resize(Nr * C, k);
  auto perLayer = [&](std::vector<Buffer<F>>& v, int64_t n) {
    v.resize(L);
    for (auto& b : v) b.resize(n, k);
  };
  perLayer(ln1, N * C);
  perLayer(ln1Mean, Nr);
  perLayer(ln1Rstd, Nr);
  perLayer(qkv, N * 3 * Cl);
  perLayer(probs, batch * Hl * T * T);
  perLayer(atty, N * Cl);
  perLayer(xmid, Nr * C);
  perLayer(ln2, N * C);
  perLayer(ln2Mean, Nr);
  perLayer(ln2Rstd, Nr);
  perLayer(fch, N * Fl);
  perLayer(fcg, N * Fl);
  if (part.hasHead && chunk == static_cast<int>(part.chunks.size()) - 1) {
    lnf.resize(N * C, k);
    lnfMean.resize(Nr, k);
    lnfRstd.resize(Nr, k);
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
GptStage<F>::GptStage(const ParamLayout& layout, int chunk, int batch, TensorParallelOps<F>* tp, bool sp,
                      LayerOps<F>* ops)
    : layout_(layout),
      ops_(ops ? *ops : defaultOps<F>()),
      tp_(layout.part().tpSize > 1 ? tp : nullptr),
      sp_(sp && layout.part().tpSize > 1) {
  const ModelConfig& cfg = layout.config();
  const ModelPart& part = layout.part();
  const int t = part.tpSize;
  if (layout.part().tpSize > 1 && !tp) throw std::invalid_argument("a tensor-parallel stage needs its group's ops");
  first_ = part.chunks[chunk].first;
  last_ = part.chunks[chunk].last;
  hasEmb_ = part.hasEmbedding && chunk == 0;
  hasHead_ = part.hasHead && chunk == static_cast<int>(part.chunks.size()) - 1;
  tied_ = hasEmb_ && hasHead_ && !part.headHasOwnEmbedding;
  B_ = batch;
  T_ = cfg.seqLen;
  C_ = cfg.dModel;
  N_ = B_ * T_;
  if (sp_ && N_ % t != 0)
    throw std::invalid_argument("--sequence-parallel needs batch x seq-len (" + std::to_string(N_) +
                                ") divisible by --tp (" + std::to_string(t) + ")");
  Nr_ = residualRows(N_, part, sp_);
  rowOffset_ = sp_ ? static_cast<int64_t>(part.tpRank) * Nr_ : 0;
  Hl_ = cfg.heads / t;
  hs_ = cfg.headSize();
  Cl_ = C_ / t;
  Fl_ = cfg.ffn() / t;
  Vl_ = layout.vocabLocal();
  const MemKind k = MemKind::kActivations;
  const int64_t n = N_;
  dres_.resize(static_cast<int64_t>(Nr_) * C_, k);
  dln_.resize(n * C_, k);
  if (last_ > first_) {
    dqkv_.resize(n * 3 * Cl_, k);
    datty_.resize(n * Cl_, k);
    dfch_.resize(n * Fl_, k);
    dfcg_.resize(n * Fl_, k);
    dscores_.resize(ops_.attentionScratch(B_, T_, Hl_), k);
  }
  if (sp_) {
    rows_.resize(static_cast<int64_t>(Nr_) * C_, k);
    full_.resize(n * C_, k);
  }
}

template <typename F>
int64_t GptStage<F>::scratchBytes() const {
  int64_t n = 0;
  for (const auto* b : {&dres_, &dln_, &dqkv_, &datty_, &dfch_, &dfcg_, &dscores_, &rows_, &full_}) n += b->size();
  return n * static_cast<int64_t>(sizeof(F));
}

// ---- forward -------------------------------------------------------------------------------------------

template <typename F>
void GptStage<F>::normForColumnParallel(F* full, F* mean, F* rstd, const F* x, const F* w, const F* b) {
  if (!sp_) {
    ops_.layernormForward(full, mean, rstd, x, w, b, N_, C_);
    return;
  }
  ops_.layernormForward(rows_.data(), mean, rstd, x, w, b, Nr_, C_);
  tp_->allGatherRows(rows_.data(), full, static_cast<int64_t>(Nr_) * C_);
}

template <typename F>
void GptStage<F>::rowParallelForward(F* out, const F* inp, const F* w, const F* bias, int I) {
  if (!tp_) {
    ops_.linearForward(out, inp, w, bias, N_, I, C_);
    return;
  }
  if (sp_) {
    ops_.linearForward(full_.data(), inp, w, nullptr, N_, I, C_);
    tp_->reduceScatterRows(full_.data(), out, static_cast<int64_t>(Nr_) * C_);
  } else {
    ops_.linearForward(out, inp, w, nullptr, N_, I, C_);
    tp_->sumActivations(out, static_cast<int64_t>(N_) * C_);
  }
  ops_.addBias(out, bias, Nr_, C_);
}

template <typename F>
void GptStage<F>::forward(StageActivations<F>& a, UnitAccess<F>& access) {
  const F* emb = nullptr;
  if (hasEmb_) {
    const int u = layout_.embeddingUnit();
    emb = access.params(u, Pass::kForward);
    const F* wte = emb + layout_.wteOffset();
    const F* wpe = emb + layout_.wpeOffset();
    F* x0 = a.x[0].data();
    if (sp_) {
      // Vocabulary-parallel lookup of every row; the group's sum of this rank's rows, plus their positions.
      ops_.embeddingForward(full_.data(), a.tokens.data(), wte, layout_.vocabStart(), Vl_, nullptr, B_, T_, C_);
      tp_->reduceScatterRows(full_.data(), x0, static_cast<int64_t>(Nr_) * C_);
      ops_.addPositionRows(x0, wpe, rowOffset_, Nr_, T_, C_);
    } else if (tp_) {
      ops_.embeddingForward(x0, a.tokens.data(), wte, layout_.vocabStart(), Vl_, nullptr, B_, T_, C_);
      tp_->sumActivations(x0, static_cast<int64_t>(N_) * C_);
      ops_.addPositions(x0, wpe, B_, T_, C_);
    } else {
      ops_.embeddingForward(x0, a.tokens.data(), wte, 0, Vl_, wpe, B_, T_, C_);
    }
    if (!tied_) access.releaseParams(u, Pass::kForward);
  }
  for (int l = first_; l < last_; ++l) {
    const int u = layout_.blockUnit(l);
    blockForward(l, a, access.params(u, Pass::kForward));
    access.releaseParams(u, Pass::kForward);
  }
  if (hasHead_) {
    const int u = layout_.finalUnit();
    const F* p = access.params(u, Pass::kForward);
    normForColumnParallel(a.lnf.data(), a.lnfMean.data(), a.lnfRstd.data(), a.x[last_ - first_].data(),
                          p + layout_.lnfwOffset(), p + layout_.lnfbOffset());
    const F* wte = tied_ ? emb + layout_.wteOffset() : p + layout_.headWteOffset();
    a.loss = ops_.crossEntropyForward(a.logits.data(), a.rowMax.data(), a.rowSum.data(), a.lnf.data(), wte,
                                      a.targets.data(), N_, C_, layout_.vocabStart(), Vl_, tp_);
    access.releaseParams(u, Pass::kForward);
    if (tied_) access.releaseParams(layout_.embeddingUnit(), Pass::kForward);
  }
}

template <typename F>
void GptStage<F>::blockForward(int l, StageActivations<F>& a, const F* p) {
  const BlockOffsets& o = layout_.block();
  const int i = l - first_;
  const F* x = a.x[i].data();
  F* out = a.x[i + 1].data();
  F* xmid = a.xmid[i].data();
  const int64_t rowsC = static_cast<int64_t>(Nr_) * C_;
  // Attention: xmid = x + proj(attention(qkv(ln1(x))))
  normForColumnParallel(a.ln1[i].data(), a.ln1Mean[i].data(), a.ln1Rstd[i].data(), x, p + o.ln1w, p + o.ln1b);
  ops_.linearForward(a.qkv[i].data(), a.ln1[i].data(), p + o.qkvw, p + o.qkvb, N_, C_, 3 * Cl_);
  ops_.attentionForward(a.atty[i].data(), a.probs[i].data(), a.qkv[i].data(), B_, T_, Hl_, hs_);
  rowParallelForward(xmid, a.atty[i].data(), p + o.projw, p + o.projb, Cl_);
  ops_.add(xmid, x, rowsC);
  // MLP: out = xmid + proj(gelu(fc(ln2(xmid))))
  normForColumnParallel(a.ln2[i].data(), a.ln2Mean[i].data(), a.ln2Rstd[i].data(), xmid, p + o.ln2w, p + o.ln2b);
  ops_.linearForward(a.fch[i].data(), a.ln2[i].data(), p + o.fcw, p + o.fcb, N_, C_, Fl_);
  ops_.geluForward(a.fcg[i].data(), a.fch[i].data(), static_cast<int64_t>(N_) * Fl_);
  rowParallelForward(out, a.fcg[i].data(), p + o.fcprojw, p + o.fcprojb, Fl_);
  ops_.add(out, xmid, rowsC);
}

// ---- backward ------------------------------------------------------------------------------------------

template <typename F>
const F* GptStage<F>::fullOutputGrad() {
  if (!sp_) return dres_.data();
  tp_->allGatherRows(dres_.data(), full_.data(), static_cast<int64_t>(Nr_) * C_);
  return full_.data();
}

template <typename F>
void GptStage<F>::normBackward(F* dw, F* db, const F* x, const F* w, const F* mean, const F* rstd) {
  if (sp_) {
    tp_->reduceScatterRows(dln_.data(), rows_.data(), static_cast<int64_t>(Nr_) * C_);
    ops_.layernormBackward(dres_.data(), dw, db, rows_.data(), x, w, mean, rstd, Nr_, C_);
    return;
  }
  if (tp_) tp_->sumInputGrads(dln_.data(), static_cast<int64_t>(N_) * C_);
  ops_.layernormBackward(dres_.data(), dw, db, dln_.data(), x, w, mean, rstd, N_, C_);
}

template <typename F>
void GptStage<F>::backward(StageActivations<F>& a, F gradScale, const F* doutput, UnitAccess<F>& access) {
  F* embGrads = nullptr;
  if (hasHead_) {
    const int u = layout_.finalUnit();
    const F* p = access.params(u, Pass::kBackward);
    F* g = access.grads(u);
    const F* wte;
    F* dwte;
    if (tied_) {
      wte = access.params(layout_.embeddingUnit(), Pass::kBackward) + layout_.wteOffset();
      embGrads = access.grads(layout_.embeddingUnit());
      dwte = embGrads + layout_.wteOffset();
    } else {
      wte = p + layout_.headWteOffset();
      dwte = g + layout_.headWteOffset();
    }
    ops_.crossEntropyBackward(dln_.data(), dwte, a.logits.data(), a.lnf.data(), wte, a.targets.data(), N_, C_,
                              layout_.vocabStart(), Vl_, gradScale, false);
    dres_.zero();
    normBackward(g + layout_.lnfwOffset(), g + layout_.lnfbOffset(), a.x[last_ - first_].data(),
                 p + layout_.lnfwOffset(), a.lnfMean.data(), a.lnfRstd.data());
    if (tied_) access.releaseParams(layout_.embeddingUnit(), Pass::kBackward);
    access.releaseParams(u, Pass::kBackward);
    access.gradsDone(u);
  } else {
    ops_.copy(dres_.data(), doutput, boundaryElems());
  }
  for (int l = last_ - 1; l >= first_; --l) {
    const int u = layout_.blockUnit(l);
    const F* p = access.params(u, Pass::kBackward);
    blockBackward(l, a, p, access.grads(u));
    access.releaseParams(u, Pass::kBackward);
    access.gradsDone(u);
  }
  if (hasEmb_) {
    const int u = layout_.embeddingUnit();
    if (!embGrads) embGrads = access.grads(u);
    F* dwte = embGrads + layout_.wteOffset();
    F* dwpe = embGrads + layout_.wpeOffset();
    if (sp_) {
      ops_.embeddingBackward(dwte, nullptr, fullOutputGrad(), a.tokens.data(), layout_.vocabStart(), Vl_, B_, T_, C_,
                             tied_);
      ops_.positionGradRows(dwpe, dres_.data(), rowOffset_, Nr_, T_, C_);
    } else {
      ops_.embeddingBackward(dwte, dwpe, dres_.data(), a.tokens.data(), layout_.vocabStart(), Vl_, B_, T_, C_, tied_);
    }
    access.gradsDone(u);
  }
}

template <typename F>
void GptStage<F>::blockBackward(int l, StageActivations<F>& a, const F* p, F* g) {
  const BlockOffsets& o = layout_.block();
  const int i = l - first_;
  // dres_ holds the gradient of the block's output (this rank's rows); it leaves holding its input's. Under
  // sequence parallelism the row-parallel biases' gradients come from this rank's rows only (the group sums
  // them), their weights' from the whole batch.
  ops_.linearBackward(dfcg_.data(), g + o.fcprojw, sp_ ? nullptr : g + o.fcprojb, fullOutputGrad(), a.fcg[i].data(),
                      p + o.fcprojw, N_, Fl_, C_, false);
  if (sp_) ops_.columnSum(g + o.fcprojb, dres_.data(), Nr_, C_);
  ops_.geluBackward(dfch_.data(), a.fch[i].data(), dfcg_.data(), static_cast<int64_t>(N_) * Fl_);
  ops_.linearBackward(dln_.data(), g + o.fcw, g + o.fcb, dfch_.data(), a.ln2[i].data(), p + o.fcw, N_, C_, Fl_, false);
  normBackward(g + o.ln2w, g + o.ln2b, a.xmid[i].data(), p + o.ln2w, a.ln2Mean[i].data(), a.ln2Rstd[i].data());
  ops_.linearBackward(datty_.data(), g + o.projw, sp_ ? nullptr : g + o.projb, fullOutputGrad(), a.atty[i].data(),
                      p + o.projw, N_, Cl_, C_, false);
  if (sp_) ops_.columnSum(g + o.projb, dres_.data(), Nr_, C_);
  ops_.attentionBackward(dqkv_.data(), dscores_.data(), datty_.data(), a.qkv[i].data(), a.probs[i].data(), B_, T_, Hl_,
                         hs_);
  ops_.linearBackward(dln_.data(), g + o.qkvw, g + o.qkvb, dqkv_.data(), a.ln1[i].data(), p + o.qkvw, N_, C_, 3 * Cl_,
                      false);
  normBackward(g + o.ln1w, g + o.ln1b, a.x[i].data(), p + o.ln1w, a.ln1Mean[i].data(), a.ln1Rstd[i].data());
}

template struct StageActivations<float>;
template struct StageActivations<double>;
template class GptStage<float>;
template class GptStage<double>;

}  // namespace chorus::train
