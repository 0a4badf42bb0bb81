#include "model/init.h"

#include <cmath>
#include <string>

#include "tensor/rng.h"

namespace chorus::train {
namespace {
bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
}  // namespace

template <typename T>
std::vector<T> initialTensor(const TensorSpec& spec, int layers, uint64_t seed) {
  std::vector<T> full(static_cast<size_t>(spec.fullSize()));
  const std::string& n = spec.name;
  if (endsWith(n, ".b")) return full;  // biases: zero
  if (endsWith(n, "ln1.w") || endsWith(n, "ln2.w") || n == "lnf.w") {
    for (auto& x : full) x = T(1);
    return full;
  }
  double std = 0.02;
  if (endsWith(n, "attn.proj.w") || endsWith(n, "mlp.proj.w")) std /= std::sqrt(2.0 * layers);
  uint64_t key = hashCombine(seed, hashName(n));
  for (size_t i = 0; i < full.size(); ++i) full[i] = static_cast<T>(std * normal(hashCombine(key, i)));
  return full;
}

template <typename T>
void initParams(const ParamLayout& layout, uint64_t seed, T* params) {
  const ModelPart& part = layout.part();
  for (const TensorSpec& spec : layout.tensors()) {
    std::vector<T> full = initialTensor<T>(spec, layout.config().layers, seed);
    sliceOf(spec, part.tpRank, part.tpSize, full.data(), params + spec.offset);
  }
}

template std::vector<float> initialTensor<float>(const TensorSpec&, int, uint64_t);
template std::vector<double> initialTensor<double>(const TensorSpec&, int, uint64_t);
template void initParams<float>(const ParamLayout&, uint64_t, float*);
template void initParams<double>(const ParamLayout&, uint64_t, double*);

}  // namespace chorus::train
