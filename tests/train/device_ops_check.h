// Checks a Device's arithmetic against the host's: every layer of LayerOps, the engines' element-wise work and a whole
// GptStage's forward and backward pass, on random inputs, each result compared element by element with the host layers'
// (model/*.cc). device_test.cc runs it on the emulated device (bit for bit: the same kernels' arithmetic and the same
// GEMM calls), cuda_device_test.cc on a GPU (cuBLAS sums in another order).
#ifndef CHORUS_TRAIN_TESTS_DEVICE_OPS_CHECK_H_
#define CHORUS_TRAIN_TESTS_DEVICE_OPS_CHECK_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "comm/bf16.h"
#include "model/gpt_stage.h"
#include "model/host_layer_ops.h"
#include "model/init.h"
#include "optim/adamw_element.h"
#include "tensor/device.h"
#include "tensor/rng.h"

namespace chorus::train::testing {

inline std::vector<float> randomFloats(size_t n, uint64_t seed, double scale = 1.0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(scale * normal(hashCombine(seed, i)));
  return v;
}

// A copy of a host vector in a device's memory.
template <typename T>
class OnDevice {
 public:
  OnDevice(Device& d, const std::vector<T>& v) : d_(d), n_(v.size()) {
    p_ = static_cast<T*>(d_.allocate(std::max<size_t>(n_, 1) * sizeof(T)));
    if (n_) d_.fromHost(p_, v.data(), n_ * sizeof(T));
  }
  ~OnDevice() { d_.release(p_); }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;
  T* get() { return p_; }
  std::vector<T> host() const {
    std::vector<T> v(n_);
    if (n_) d_.toHost(v.data(), p_, n_ * sizeof(T));
    return v;
  }

 private:
  Device& d_;
  size_t n_;
  T* p_;
};

// rtol 0: every element equal. Otherwise |got - want| <= rtol * (the largest
// |want|) for every element.
template <typename T>
void expectSame(const std::vector<T>& want, const std::vector<T>& got, double rtol, const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  double scale = 1e-30;
  for (T w : want) scale = std::max(scale, std::fabs(static_cast<double>(w)));
  for (size_t i = 0; i < want.size(); ++i) {
    const double a = static_cast<double>(want[i]), b = static_cast<double>(got[i]);
    if (rtol == 0) {
      ASSERT_EQ(a, b) << what << ": element " << i << " of " << want.size();
    } else {
      ASSERT_LE(std::fabs(a - b), rtol * scale) << what << ": element " << i << " of " << want.size();
    }
  }
}

// Every LayerOps call of the device against the host's, with shapes that do not divide evenly and a vocabulary slice
// that leaves some tokens out of range.
inline void checkLayerOps(Device& dev, double rtol) {
  HostLayerOps<float>& h = HostLayerOps<float>::instance();
  LayerOps<float>& d = dev.layers();
  using V = std::vector<float>;
  {  // linear, with and without bias and input-gradient accumulation
    const int N = 7, I = 5, O = 6;
    V x = randomFloats(N * I, 1), w = randomFloats(O * I, 2), b = randomFloats(O, 3), dout = randomFloats(N * O, 4);
    for (bool bias : {false, true}) {
      V out(N * O);
      OnDevice<float> dx(dev, x), dw(dev, w), db(dev, b), dout_(dev, out);
      h.linearForward(out.data(), x.data(), w.data(), bias ? b.data() : nullptr, N, I, O);
      d.linearForward(dout_.get(), dx.get(), dw.get(), bias ? db.get() : nullptr, N, I, O);
      expectSame(out, dout_.host(), rtol, bias ? "linearForward with bias" : "linearForward");
    }
    for (bool acc : {false, true}) {
      V dinp = randomFloats(N * I, 5), gw(O * I), gb(O);
      OnDevice<float> ddinp(dev, dinp), dgw(dev, gw), dgb(dev, gb), ddout(dev, dout), dx(dev, x), dw(dev, w);
      h.linearBackward(dinp.data(), gw.data(), gb.data(), dout.data(), x.data(), w.data(), N, I, O, acc);
      d.linearBackward(ddinp.get(), dgw.get(), dgb.get(), ddout.get(), dx.get(), dw.get(), N, I, O, acc);
      expectSame(dinp, ddinp.host(), rtol, "linearBackward input");
      expectSame(gw, dgw.host(), rtol, "linearBackward weight");
      expectSame(gb, dgb.host(), rtol, "linearBackward bias");
    }
  }
  {  // LayerNorm; the input gradient accumulates into what is there
    const int N = 6, C = 9;
    V x = randomFloats(N * C, 6, 2.0), w = randomFloats(C, 7), b = randomFloats(C, 8), out(N * C), mean(N), rstd(N);
    OnDevice<float> dx(dev, x), dw(dev, w), db(dev, b), dout(dev, out), dmean(dev, mean), drstd(dev, rstd);
    h.layernormForward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C);
    d.layernormForward(dout.get(), dmean.get(), drstd.get(), dx.get(), dw.get(), db.get(), N, C);
    expectSame(out, dout.host(), rtol, "layernormForward");
    expectSame(mean, dmean.host(), rtol, "layernormForward mean");
    expectSame(rstd, drstd.host(), rtol, "layernormForward rstd");
    V g = randomFloats(N * C, 9), dinp = randomFloats(N * C, 10), gw(C), gb(C);
    OnDevice<float> dg(dev, g), ddinp(dev, dinp), dgw(dev, gw), dgb(dev, gb);
    h.layernormBackward(dinp.data(), gw.data(), gb.data(), g.data(), x.data(), w.data(), mean.data(), rstd.data(), N,
                        C);
    d.layernormBackward(ddinp.get(), dgw.get(), dgb.get(), dg.get(), dx.get(), dw.get(), dmean.get(), drstd.get(), N,
                        C);
    expectSame(dinp, ddinp.host(), rtol, "layernormBackward input");
    expectSame(gw, dgw.host(), rtol, "layernormBackward gain");
    expectSame(gb, dgb.host(), rtol, "layernormBackward bias");
  }
  {  // attention
    const int B = 2, T = 5, H = 3, hs = 4, C = H * hs;
    V qkv = randomFloats(B * T * 3 * C, 11), out(B * T * C), probs(B * H * T * T);
    OnDevice<float> dqkv_in(dev, qkv), dout(dev, out), dprobs(dev, probs);
    h.attentionForward(out.data(), probs.data(), qkv.data(), B, T, H, hs);
    d.attentionForward(dout.get(), dprobs.get(), dqkv_in.get(), B, T, H, hs);
    expectSame(out, dout.host(), rtol, "attentionForward");
    expectSame(probs, dprobs.host(), rtol, "attentionForward probabilities");
    V g = randomFloats(B * T * C, 12), dqkv(qkv.size()), scratch(h.attentionScratch(B, T, H));
    V dscratch_host(d.attentionScratch(B, T, H));
    OnDevice<float> dg(dev, g), ddqkv(dev, dqkv), dscratch(dev, dscratch_host);
    h.attentionBackward(dqkv.data(), scratch.data(), g.data(), qkv.data(), probs.data(), B, T, H, hs);
    d.attentionBackward(ddqkv.get(), dscratch.get(), dg.get(), dqkv_in.get(), dprobs.get(), B, T, H, hs);
    expectSame(dqkv, ddqkv.host(), rtol, "attentionBackward");
  }
  {  // GELU over the range where its two branches and the clamps matter
    const int n = 2001;
    V x(n), out(n), g = randomFloats(n, 13), dinp(n);
    for (int i = 0; i < n; ++i) x[i] = -50.0f + 0.05f * static_cast<float>(i);
    OnDevice<float> dx(dev, x), dout(dev, out), dg(dev, g), ddinp(dev, dinp);
    h.geluForward(out.data(), x.data(), n);
    d.geluForward(dout.get(), dx.get(), n);
    expectSame(out, dout.host(), rtol, "geluForward");
    h.geluBackward(dinp.data(), x.data(), g.data(), n);
    d.geluBackward(ddinp.get(), dx.get(), dg.get(), n);
    expectSame(dinp, ddinp.host(), rtol, "geluBackward");
  }
  {  // embeddings: a slice [3, 8) of a 10-token vocabulary, with and without
    // positions
    const int B = 3, T = 4, C = 5, vStart = 3, vLocal = 5;
    std::vector<int32_t> tokens(B * T);
    for (int i = 0; i < B * T; ++i) tokens[i] = static_cast<int32_t>(mix64(i) % 10);
    V wte = randomFloats(vLocal * C, 14), wpe = randomFloats(T * C, 15);
    OnDevice<int32_t> dtok(dev, tokens);
    OnDevice<float> dwte(dev, wte), dwpe(dev, wpe);
    for (bool pos : {false, true}) {
      V out(B * T * C);
      OnDevice<float> dout(dev, out);
      h.embeddingForward(out.data(), tokens.data(), wte.data(), vStart, vLocal, pos ? wpe.data() : nullptr, B, T, C);
      d.embeddingForward(dout.get(), dtok.get(), dwte.get(), vStart, vLocal, pos ? dwpe.get() : nullptr, B, T, C);
      expectSame(out, dout.host(), rtol, pos ? "embeddingForward with positions" : "embeddingForward");
    }
    V x = randomFloats(B * T * C, 16);
    {
      V a = x;
      OnDevice<float> da(dev, a);
      h.addPositions(a.data(), wpe.data(), B, T, C);
      d.addPositions(da.get(), dwpe.get(), B, T, C);
      expectSame(a, da.host(), rtol, "addPositions");
    }
    const int R = 6;
    const int64_t first = 7;  // rows 7..12 of the flattened batch: positions 3, 0, 1, 2, 3, 0
    {
      V a(x.begin(), x.begin() + R * C);
      OnDevice<float> da(dev, a);
      h.addPositionRows(a.data(), wpe.data(), first, R, T, C);
      d.addPositionRows(da.get(), dwpe.get(), first, R, T, C);
      expectSame(a, da.host(), rtol, "addPositionRows");
      V gpos(T * C);
      OnDevice<float> dgpos(dev, gpos), drows(dev, V(x.begin(), x.begin() + R * C));
      h.positionGradRows(gpos.data(), x.data(), first, R, T, C);
      d.positionGradRows(dgpos.get(), drows.get(), first, R, T, C);
      expectSame(gpos, dgpos.host(), rtol, "positionGradRows");
    }
    for (bool acc : {false, true}) {
      V gwte = randomFloats(vLocal * C, 17), gwpe(T * C);
      OnDevice<float> dgwte(dev, gwte), dgwpe(dev, gwpe), dx(dev, x);
      h.embeddingBackward(gwte.data(), acc ? nullptr : gwpe.data(), x.data(), tokens.data(), vStart, vLocal, B, T, C,
                          acc);
      d.embeddingBackward(dgwte.get(), acc ? nullptr : dgwpe.get(), dx.get(), dtok.get(), vStart, vLocal, B, T, C, acc);
      expectSame(gwte, dgwte.host(), rtol, "embeddingBackward token table");
      expectSame(gwpe, dgwpe.host(), rtol, "embeddingBackward positions");
    }
  }
  {  // the head's slice [2, 9) of the vocabulary and the loss; some targets
    // outside the slice
    const int N = 8, C = 6, vStart = 2, Vl = 7;
    std::vector<int32_t> targets(N);
    for (int i = 0; i < N; ++i) targets[i] = static_cast<int32_t>(mix64(i + 50) % 12);
    V x = randomFloats(N * C, 18), wte = randomFloats(Vl * C, 19), logits(N * Vl), mx(N), sum(N);
    OnDevice<int32_t> dtgt(dev, targets);
    OnDevice<float> dx(dev, x), dwte(dev, wte), dlogits(dev, logits), dmx(dev, mx), dsum(dev, sum);
    const double lh = h.crossEntropyForward(logits.data(), mx.data(), sum.data(), x.data(), wte.data(), targets.data(),
                                            N, C, vStart, Vl, nullptr);
    const double ld = d.crossEntropyForward(dlogits.get(), dmx.get(), dsum.get(), dx.get(), dwte.get(), dtgt.get(), N,
                                            C, vStart, Vl, nullptr);
    expectSame(std::vector<double>{lh}, std::vector<double>{ld}, rtol, "crossEntropyForward loss");
    expectSame(logits, dlogits.host(), rtol, "crossEntropyForward probabilities");
    for (bool acc : {false, true}) {
      V l2 = logits, gx(N * C), gwte = randomFloats(Vl * C, 20);
      OnDevice<float> dl2(dev, l2), dgx(dev, gx), dgwte(dev, gwte);
      h.crossEntropyBackward(gx.data(), gwte.data(), l2.data(), x.data(), wte.data(), targets.data(), N, C, vStart, Vl,
                             0.125f, acc);
      d.crossEntropyBackward(dgx.get(), dgwte.get(), dl2.get(), dx.get(), dwte.get(), dtgt.get(), N, C, vStart, Vl,
                             0.125f, acc);
      expectSame(gx, dgx.host(), rtol, "crossEntropyBackward input");
      expectSame(gwte, dgwte.host(), rtol, "crossEntropyBackward head");
    }
  }
  {  // the residual stream's glue
    const int R = 5, C = 7;
    V a = randomFloats(R * C, 21), b = randomFloats(R * C, 22), bias = randomFloats(C, 23);
    OnDevice<float> da(dev, a), db(dev, b), dbias(dev, bias);
    h.add(a.data(), b.data(), R * C);
    d.add(da.get(), db.get(), R * C);
    expectSame(a, da.host(), rtol, "add");
    h.addBias(a.data(), bias.data(), R, C);
    d.addBias(da.get(), dbias.get(), R, C);
    expectSame(a, da.host(), rtol, "addBias");
    h.columnSum(bias.data(), a.data(), R, C);
    d.columnSum(dbias.get(), da.get(), R, C);
    expectSame(bias, dbias.host(), rtol, "columnSum");
    d.copy(db.get(), da.get(), R * C);
    expectSame(a, db.host(), 0, "copy");
  }
}

// The data-parallel engines' element-wise work against the host device's.
inline void checkEngineOps(Device& dev) {
  Device& h = Device::host();
  const int64_t n = 10007;
  std::vector<float> a = randomFloats(n, 31), b = randomFloats(n, 32, 1e-3);
  a[5] = NAN;  // bf16 keeps NaN a NaN
  {
    std::vector<float> x = a;
    OnDevice<float> dx(dev, a), db(dev, b);
    h.add(x.data(), b.data(), n);
    dev.add(dx.get(), db.get(), n);
    std::vector<float> got = dx.host();
    for (int64_t i = 0; i < n; ++i) {
      if (i != 5) {
        ASSERT_EQ(x[i], got[i]) << "add, element " << i;
      }
    }
  }
  {
    std::vector<uint16_t> hb(n), back(n);
    std::vector<float> f(n), acc = b;
    OnDevice<float> da(dev, a), dacc(dev, b), df(dev, f);
    OnDevice<uint16_t> dhb(dev, hb);
    h.toBf16(a.data(), hb.data(), n);
    dev.toBf16(da.get(), dhb.get(), n);
    expectSame(hb, dhb.host(), 0, "toBf16");
    h.fromBf16(hb.data(), f.data(), n);
    dev.fromBf16(dhb.get(), df.get(), n);
    std::vector<float> gotf = df.host();
    for (int64_t i = 0; i < n; ++i) ASSERT_TRUE(f[i] == gotf[i] || (std::isnan(f[i]) && std::isnan(gotf[i]))) << i;
    h.addBf16(acc.data(), hb.data(), n);
    dev.addBf16(dacc.get(), dhb.get(), n);
    std::vector<float> gota = dacc.host();
    for (int64_t i = 0; i < n; ++i) ASSERT_TRUE(acc[i] == gota[i] || (std::isnan(acc[i]) && std::isnan(gota[i]))) << i;
  }
  {
    std::vector<float> p = randomFloats(n, 33), g = randomFloats(n, 34), m = randomFloats(n, 35, 0.1),
                       v = randomFloats(n, 36, 0.1);
    for (float& x : v) x = std::fabs(x);
    AdamWScalars s;
    s.beta1 = 0.9f;
    s.beta2 = 0.95f;
    s.eps = 1e-8f;
    s.keep = 0.9997f;
    s.stepSize = 3e-3f / 0.19f;
    s.bc2Sqrt = 0.31f;
    s.gradScale = 0.7f;
    OnDevice<float> dp(dev, p), dg(dev, g), dm(dev, m), dv(dev, v);
    h.adamw(s, p.data(), g.data(), m.data(), v.data(), n);
    dev.adamw(s, dp.get(), dg.get(), dm.get(), dv.get(), n);
    expectSame(p, dp.host(), 0, "adamw parameters");
    expectSame(m, dm.host(), 0, "adamw first moment");
    expectSame(v, dv.host(), 0, "adamw second moment");
  }
  {
    OnDevice<float> db(dev, b);
    const double want = h.sumSquares(b.data(), n), got = dev.sumSquares(db.get(), n);
    EXPECT_NEAR(got, want, 1e-12 * want) << "sumSquares";
    EXPECT_EQ(dev.sumSquares(db.get(), 0), 0.0);
  }
}

// A whole model (two blocks, embeddings, head) forward and backward on the device against the host: the loss and every
// parameter's gradient.
inline void checkWholeStage(Device& dev, double rtol) {
  ModelConfig cfg;
  cfg.layers = 2;
  cfg.heads = 2;
  cfg.dModel = 16;
  cfg.seqLen = 9;
  const int B = 3, N = B * cfg.seqLen;
  ParamLayout layout(cfg, ModelPart::whole(cfg));
  std::vector<float> params(layout.size());
  initParams(layout, 42, params.data());
  for (const TensorSpec& t : layout.tensors())  // well above rounding in every layer
    for (int64_t i = 0; i < t.size(); ++i)
      params[t.offset + i] += static_cast<float>(0.3 * normal(hashCombine(7, t.offset + i)));
  std::vector<int32_t> tokens(N), targets(N);
  for (int i = 0; i < N; ++i) {
    tokens[i] = static_cast<int32_t>(mix64(i) % 256);
    targets[i] = static_cast<int32_t>(mix64(i + 100) % 256);
  }
  const float scale = 1.0f / N;
  auto run = [&](Device& on, std::vector<float>& grads) {
    Device::Scope scope(&on);
    OnDevice<float> p(on, params), g(on, std::vector<float>(params.size()));
    GptStage<float> model(layout, 0, B, nullptr, false);
    StageActivations<float> acts(layout, 0, B, false);
    on.fromHost(acts.tokens.data(), tokens.data(), N * sizeof(int32_t));
    on.fromHost(acts.targets.data(), targets.data(), N * sizeof(int32_t));
    FlatAccess<float> access(layout, p.get(), g.get());
    model.forward(acts, access);
    model.backward(acts, scale, nullptr, access);
    grads = g.host();
    return acts.loss;
  };
  std::vector<float> gh, gd;
  const double lh = run(Device::host(), gh), ld = run(dev, gd);
  expectSame(std::vector<double>{lh}, std::vector<double>{ld}, rtol, "model loss");
  for (const TensorSpec& t : layout.tensors())
    expectSame(std::vector<float>(gh.begin() + t.offset, gh.begin() + t.offset + t.size()),
               std::vector<float>(gd.begin() + t.offset, gd.begin() + t.offset + t.size()), rtol,
               "gradient of " + t.name);
}

}  // namespace chorus::train::testing

#endif  // CHORUS_TRAIN_TESTS_DEVICE_OPS_CHECK_H_
