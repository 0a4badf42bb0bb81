// AdamW against PyTorch's formula, the weight-decay mask, the learning-rate schedule, the sampler and the
// corpus loader.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "data/corpus.h"
#include "data/sampler.h"
#include "optim/adamw.h"
#include "optim/lr_schedule.h"
#include "tensor/device.h"

namespace chorus::train {
namespace {

TEST(AdamW, MatchesTorchFormulaAndDecaysOnlyMatrices) {
  ModelConfig cfg;
  cfg.layers = 1;
  cfg.heads = 1;
  cfg.dModel = 4;
  cfg.seqLen = 2;
  ParamLayout l(cfg, ModelPart::whole(cfg));
  TensorMask mask = decayMask(l);
  std::vector<float> p(l.size(), 0.5f), g(l.size()), m(l.size()), v(l.size());
  for (int64_t i = 0; i < l.size(); ++i) g[i] = 0.01f * static_cast<float>(i % 7 - 3);
  AdamWConfig c;
  std::vector<double> pd(p.begin(), p.end()), md(l.size()), vd(l.size());
  for (int step = 1; step <= 3; ++step) {
    adamwStep(c, mask, step, 1e-2f, 0.5f, 0, l.size(), p.data(), g.data(), m.data(), v.data(), Device::host());
    for (const TensorSpec& t : l.tensors()) {
      for (int64_t i = t.offset; i < t.offset + t.size(); ++i) {
        double gr = 0.5 * g[i];
        md[i] = 0.9 * md[i] + 0.1 * gr;
        vd[i] = 0.95 * vd[i] + 0.05 * gr * gr;
        double bc1 = 1 - std::pow(0.9, step), bc2 = 1 - std::pow(0.95, step);
        if (t.decay) pd[i] *= 1 - 1e-2 * 0.1;
        pd[i] -= (1e-2 / bc1) * md[i] / (std::sqrt(vd[i]) / std::sqrt(bc2) + 1e-8);
        ASSERT_NEAR(p[i], pd[i], 1e-6) << t.name;
      }
    }
  }
  // A range that starts inside a tensor updates only its elements, with the same values.
  std::vector<float> p2(l.size(), 0.5f), m2(l.size()), v2(l.size());
  const int64_t a = 7, b = l.size() - 3;
  adamwStep(c, mask, 1, 1e-2f, 0.5f, a, b, p2.data() + a, g.data() + a, m2.data() + a, v2.data() + a, Device::host());
  std::vector<float> p3(l.size(), 0.5f), m3(l.size()), v3(l.size());
  adamwStep(c, mask, 1, 1e-2f, 0.5f, 0, l.size(), p3.data(), g.data(), m3.data(), v3.data(), Device::host());
  for (int64_t i = 0; i < l.size(); ++i) EXPECT_EQ(p2[i], (i >= a && i < b) ? p3[i] : 0.5f) << i;
}

TEST(LearningRate, WarmupThenCosineToTheFloor) {
  EXPECT_FLOAT_EQ(learningRate(5, 100, 1.0f, 0.1f, 10, "cosine"), 0.5f);
  EXPECT_FLOAT_EQ(learningRate(10, 100, 1.0f, 0.1f, 10, "cosine"), 1.0f);
  EXPECT_NEAR(learningRate(100, 100, 1.0f, 0.1f, 10, "cosine"), 0.1f, 1e-6);
  EXPECT_NEAR(learningRate(55, 100, 1.0f, 0.1f, 10, "cosine"), 0.55f, 1e-6);
  EXPECT_FLOAT_EQ(learningRate(77, 100, 1.0f, 0.1f, 0, "constant"), 1.0f);
}

TEST(Sampler, RanksGetDisjointPartsOfTheSameGlobalBatch) {
  std::vector<uint8_t> data(10000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 31 % 251);
  Sampler s(data, 16, 3);
  const int dp = 3, batch = 4, accum = 2;
  std::set<int64_t> offsets;
  for (int micro = 0; micro < accum; ++micro)
    for (int r = 0; r < dp; ++r) {
      int64_t first = firstSequence(micro, r, dp, batch);
      for (int i = 0; i < batch; ++i) offsets.insert(first + i);
    }
  EXPECT_EQ(offsets.size(), static_cast<size_t>(dp * batch * accum));
  EXPECT_EQ(*offsets.rbegin(), dp * batch * accum - 1);
  // The same (step, index) gives the same window; windows are targets shifted by one.
  std::vector<int32_t> t1(16 * 2), y1(16 * 2), t2(16 * 2), y2(16 * 2);
  s.fill(7, 5, 2, t1.data(), y1.data());
  s.fill(7, 5, 2, t2.data(), y2.data());
  EXPECT_EQ(t1, t2);
  for (int i = 0; i + 1 < 16; ++i) EXPECT_EQ(y1[i], t1[i + 1]);
  s.fill(8, 5, 2, t2.data(), y2.data());
  EXPECT_NE(t1, t2);
}

TEST(Corpus, MissingFileNamesThePathAndThePackage) {
  try {
    loadCorpus("/nonexistent/corpus.txt", 8, 1);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/corpus.txt"), std::string::npos);
  }
  Corpus syn = loadCorpus("synthetic", 8, 1, 4096);
  EXPECT_EQ(syn.train.size() + syn.val.size(), 4096u);
  EXPECT_EQ(loadCorpus("synthetic", 8, 1, 4096).train, syn.train);
  EXPECT_THROW(loadCorpus("synthetic", 1000, 1, 4096), std::runtime_error);
}

}  // namespace
}  // namespace chorus::train
