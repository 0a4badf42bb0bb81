// Finite-difference gradient checks in double precision: every layer's backward pass against central
// differences of its forward pass (inputs and parameters), and the whole model's parameter gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "model/attention.h"
#include "model/cross_entropy.h"
#include "model/embedding.h"
#include "model/gelu.h"
#include "model/gpt_stage.h"
#include "model/init.h"
#include "model/layernorm.h"
#include "model/linear.h"
#include "tensor/rng.h"
#include "tensor/vec_math.h"

namespace chorus::train {
namespace {

using Vec = std::vector<double>;

Vec randomVec(size_t n, uint64_t seed, double scale = 1.0) {
  Vec v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * normal(hashCombine(seed, i));
  return v;
}

double dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Checks d(loss)/d(x) against central differences for every element of x, where loss() recomputes the
// forward pass from the current x. The analytic gradient must agree within `tol` relative to the gradient's
// largest element.
void expectGradient(Vec& x, const Vec& analytic, const std::function<double()>& loss, const char* what,
                    double tol = 1e-6) {
  ASSERT_EQ(x.size(), analytic.size()) << what;
  double scale = 1e-12;
  for (double g : analytic) scale = std::max(scale, std::fabs(g));
  const double h = 1e-5;
  for (size_t i = 0; i < x.size(); ++i) {
    double keep = x[i];
    x[i] = keep + h;
    double up = loss();
    x[i] = keep - h;
    double down = loss();
    x[i] = keep;
    double numeric = (up - down) / (2 * h);
    ASSERT_NEAR(numeric, analytic[i], tol * scale) << what << " element " << i;
  }
}

TEST(GradCheck, Linear) {
  const int N = 3, I = 4, O = 5;
  Vec x = randomVec(N * I, 1), w = randomVec(O * I, 2), b = randomVec(O, 3), r = randomVec(N * O, 4);
  auto loss = [&] {
    Vec out(N * O);
    linearForward(out.data(), x.data(), w.data(), b.data(), N, I, O);
    return dot(out, r);
  };
  Vec dx(N * I), dw(O * I), db(O);
  linearBackward(dx.data(), dw.data(), db.data(), r.data(), x.data(), w.data(), N, I, O, false);
  expectGradient(x, dx, loss, "linear input");
  expectGradient(w, dw, loss, "linear weight");
  expectGradient(b, db, loss, "linear bias");
  // Accumulating into the input gradient adds exactly the same values.
  Vec acc(N * I, 1.0);
  linearBackward(acc.data(), dw.data(), db.data(), r.data(), x.data(), w.data(), N, I, O, true);
  for (size_t i = 0; i < acc.size(); ++i) EXPECT_NEAR(acc[i], 1.0 + dx[i], 1e-12);
}

TEST(GradCheck, LayerNorm) {
  const int N = 3, C = 7;
  Vec x = randomVec(N * C, 5), w = randomVec(C, 6), b = randomVec(C, 7), r = randomVec(N * C, 8);
  auto loss = [&] {
    Vec out(N * C), mean(N), rstd(N);
    layernormForward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C);
    return dot(out, r);
  };
  Vec out(N * C), mean(N), rstd(N);
  layernormForward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C);
  Vec dx(N * C, 0.0), dw(C), db(C);
  layernormBackward(dx.data(), dw.data(), db.data(), r.data(), x.data(), w.data(), mean.data(), rstd.data(), N, C);
  expectGradient(x, dx, loss, "layernorm input");
  expectGradient(w, dw, loss, "layernorm gain");
  expectGradient(b, db, loss, "layernorm bias");
}

TEST(GradCheck, Gelu) {
  const int n = 40;
  Vec x = randomVec(n, 9, 2.0), r = randomVec(n, 10);
  auto loss = [&] {
    Vec out(n);
    geluForward(out.data(), x.data(), n);
    return dot(out, r);
  };
  Vec dx(n);
  geluBackward(dx.data(), x.data(), r.data(), n);
  expectGradient(x, dx, loss, "gelu");
}

TEST(GradCheck, GeluFloatMatchesDouble) {
  // The float path uses a polynomial exp; it must stay within a few ulp of the exact function.
  std::vector<float> xf(2001), yf(2001), gf(2001), ones(2001, 1.0f);
  Vec xd(2001), yd(2001), gd(2001), onesd(2001, 1.0);
  for (int i = 0; i <= 2000; ++i) xd[i] = xf[i] = -10.0f + 0.01f * i;
  geluForward(yf.data(), xf.data(), 2001);
  geluForward(yd.data(), xd.data(), 2001);
  geluBackward(gf.data(), xf.data(), ones.data(), 2001);
  geluBackward(gd.data(), xd.data(), onesd.data(), 2001);
  for (int i = 0; i <= 2000; ++i) {
    EXPECT_NEAR(yf[i], yd[i], 1e-6 * std::max(1.0, std::fabs(yd[i]))) << xd[i];
    EXPECT_NEAR(gf[i], gd[i], 1e-6 * std::max(1.0, std::fabs(gd[i]))) << xd[i];
  }
}

TEST(VecMath, ExpWithinTwoUlpOverTheUsedRange) {
  for (float x = -87.0f; x <= 88.0f; x += 0.0137f) {
    double exact = std::exp(static_cast<double>(x));
    float got = expApprox(x);
    double ulp = std::nextafter(static_cast<float>(exact), INFINITY) - static_cast<float>(exact);
    ASSERT_LE(std::fabs(got - exact), 2 * ulp) << x;
  }
}

TEST(GradCheck, Attention) {
  const int B = 2, T = 4, H = 2, hs = 3, C = H * hs;
  Vec qkv = randomVec(B * T * 3 * C, 11), r = randomVec(B * T * C, 12);
  auto loss = [&] {
    Vec out(B * T * C), probs(B * H * T * T);
    attentionForward(out.data(), probs.data(), qkv.data(), B, T, H, hs);
    return dot(out, r);
  };
  Vec out(B * T * C), probs(B * H * T * T), dqkv(qkv.size()), scratch(T * T);
  attentionForward(out.data(), probs.data(), qkv.data(), B, T, H, hs);
  attentionBackward(dqkv.data(), scratch.data(), r.data(), qkv.data(), probs.data(), B, T, H, hs);
  expectGradient(qkv, dqkv, loss, "attention qkv");
  // Causality: the output at position t does not depend on tokens after t.
  Vec before = out;
  qkv[(1 * T + 3) * 3 * C + 5] += 1.0;  // the last position of the second sequence
  attentionForward(out.data(), probs.data(), qkv.data(), B, T, H, hs);
  for (int t = 0; t < 3; ++t)
    for (int c = 0; c < C; ++c) EXPECT_EQ(out[(1 * T + t) * C + c], before[(1 * T + t) * C + c]);
}

TEST(GradCheck, Embedding) {
  const int B = 2, T = 3, C = 4, V = 6;
  std::vector<int32_t> tokens = {1, 4, 1, 0, 5, 2};
  Vec wte = randomVec(V * C, 13), wpe = randomVec(T * C, 14), r = randomVec(B * T * C, 15);
  auto loss = [&] {
    Vec out(B * T * C);
    embeddingForward(out.data(), tokens.data(), wte.data(), 0, V, wpe.data(), B, T, C);
    return dot(out, r);
  };
  Vec dwte(V * C), dwpe(T * C);
  embeddingBackward(dwte.data(), dwpe.data(), r.data(), tokens.data(), 0, V, B, T, C, false);
  expectGradient(wte, dwte, loss, "token embedding");
  expectGradient(wpe, dwpe, loss, "position embedding");
}

TEST(GradCheck, EmbeddingVocabularySlicesSumToWhole) {
  // Vocabulary-parallel lookup: two halves of the table, summed, give the whole table's embedding.
  const int B = 1, T = 4, C = 3, V = 8;
  std::vector<int32_t> tokens = {0, 7, 3, 4};
  Vec wte = randomVec(V * C, 16), whole(B * T * C), lo(B * T * C), hi(B * T * C);
  embeddingForward(whole.data(), tokens.data(), wte.data(), 0, V, static_cast<const double*>(nullptr), B, T, C);
  embeddingForward(lo.data(), tokens.data(), wte.data(), 0, V / 2, static_cast<const double*>(nullptr), B, T, C);
  embeddingForward(hi.data(), tokens.data(), wte.data() + (V / 2) * C, V / 2, V / 2,
                   static_cast<const double*>(nullptr), B, T, C);
  for (size_t i = 0; i < whole.size(); ++i) EXPECT_EQ(whole[i], lo[i] + hi[i]);
}

TEST(GradCheck, CrossEntropyWithTiedHead) {
  const int N = 5, C = 3, V = 7;
  std::vector<int32_t> targets = {0, 6, 3, 3, 1};
  Vec x = randomVec(N * C, 17), wte = randomVec(V * C, 18);
  const double scale = 1.0 / N;
  auto loss = [&] {
    Vec logits(N * V), mx(N), sum(N);
    return scale * crossEntropyForward(logits.data(), mx.data(), sum.data(), x.data(), wte.data(), targets.data(), N, C,
                                       0, V, static_cast<VocabReducer<double>*>(nullptr));
  };
  Vec logits(N * V), mx(N), sum(N), dx(N * C), dwte(V * C);
  double l = crossEntropyForward(logits.data(), mx.data(), sum.data(), x.data(), wte.data(), targets.data(), N, C, 0, V,
                                 static_cast<VocabReducer<double>*>(nullptr));
  // The loss of a row is log-sum-exp minus the target's logit.
  double expect = 0;
  for (int n = 0; n < N; ++n) {
    double s = 0, t = 0;
    for (int v = 0; v < V; ++v) {
      double z = 0;
      for (int c = 0; c < C; ++c) z += x[n * C + c] * wte[v * C + c];
      s += std::exp(z);
      if (v == targets[n]) t = z;
    }
    expect += std::log(s) - t;
  }
  EXPECT_NEAR(l, expect, 1e-12);
  crossEntropyBackward(dx.data(), dwte.data(), logits.data(), x.data(), wte.data(), targets.data(), N, C, 0, V, scale,
                       false);
  expectGradient(x, dx, loss, "head input");
  expectGradient(wte, dwte, loss, "tied embedding (head)");
}

// The whole model: every parameter tensor's gradient (a sample of its elements) against finite differences.
TEST(GradCheck, WholeModel) {
  ModelConfig cfg;
  cfg.layers = 2;
  cfg.heads = 2;
  cfg.dModel = 8;
  cfg.seqLen = 5;
  const int B = 2;
  ParamLayout layout(cfg, ModelPart::whole(cfg));
  Vec params(layout.size()), grads(layout.size());
  initParams(layout, 42, params.data());
  // Bigger random values than GPT-2's 0.02 so every layer's contribution is well above rounding.
  for (const TensorSpec& t : layout.tensors())
    for (int64_t i = 0; i < t.size(); ++i) params[t.offset + i] += 0.3 * normal(hashCombine(7, t.offset + i));
  GptStage<double> model(layout, 0, B, nullptr, false);
  StageActivations<double> acts(layout, 0, B, false);
  for (int i = 0; i < B * cfg.seqLen; ++i) {
    acts.tokens[i] = static_cast<int32_t>(mix64(i) % 256);
    acts.targets[i] = static_cast<int32_t>(mix64(i + 100) % 256);
  }
  FlatAccess<double> access(layout, params.data(), grads.data());
  const double scale = 1.0 / (B * cfg.seqLen);
  auto loss = [&] {
    model.forward(acts, access);
    return acts.loss * scale;
  };
  loss();
  model.backward(acts, scale, nullptr, access);
  const double h = 1e-5;
  for (const TensorSpec& t : layout.tensors()) {
    double gscale = 1e-12;
    for (int64_t i = 0; i < t.size(); ++i) gscale = std::max(gscale, std::fabs(grads[t.offset + i]));
    for (int k = 0; k < 6; ++k) {
      int64_t i = t.offset + static_cast<int64_t>(mix64(hashCombine(t.offset, k)) % t.size());
      double keep = params[i];
      params[i] = keep + h;
      double up = loss();
      params[i] = keep - h;
      double down = loss();
      params[i] = keep;
      EXPECT_NEAR((up - down) / (2 * h), grads[i], 1e-6 * gscale) << t.name << " element " << i - t.offset;
    }
  }
}

}  // namespace
}  // namespace chorus::train
