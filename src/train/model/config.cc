#include "model/config.h"

#include <sstream>
#include <stdexcept>

namespace chorus::train {

int64_t ModelConfig::paramCount() const {
  int64_t c = dModel;
  int64_t perBlock = 2 * c + (3 * c * c + 3 * c) + (c * c + c) + 2 * c + (4 * c * c + 4 * c) + (4 * c * c + c);
  return vocab * c + static_cast<int64_t>(seqLen) * c + layers * perBlock + 2 * c;
}

double ModelConfig::flopsPerToken() const {
  double c = dModel;
  double matmulWeights = layers * 12.0 * c * c + vocab * c;
  return 6.0 * matmulWeights + 12.0 * layers * seqLen * c;
}

std::string ModelConfig::describe() const {
  std::ostringstream os;
  os << "layers=" << layers << " heads=" << heads << " d_model=" << dModel << " seq_len=" << seqLen
     << " vocab=" << vocab;
  return os.str();
}

void ModelConfig::validate() const {
  auto need = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(what);
  };
  need(layers >= 1, "--layers must be at least 1");
  need(heads >= 1, "--heads must be at least 1");
  need(dModel >= 1, "--d-model must be at least 1");
  need(dModel % heads == 0,
       "--d-model (" + std::to_string(dModel) + ") must be a multiple of --heads (" + std::to_string(heads) + ")");
  need(seqLen >= 1, "--seq-len must be at least 1");
  need(vocab >= 2, "vocabulary must hold at least 2 tokens");
}

ModelPart ModelPart::whole(const ModelConfig& cfg) {
  ModelPart p;
  p.chunks = {{0, cfg.layers}};
  return p;
}

ModelPart ModelPart::forStage(const ModelConfig& cfg, int tpSize, int tpRank, int stages, int stage,
                              int virtualStages) {
  if (cfg.layers % (stages * virtualStages) != 0)
    throw std::invalid_argument("--layers (" + std::to_string(cfg.layers) +
                                ") must divide by --pp x --virtual-stages (" + std::to_string(stages * virtualStages) +
                                ")");
  ModelPart p;
  p.tpSize = tpSize;
  p.tpRank = tpRank;
  const int per = cfg.layers / (stages * virtualStages);
  for (int v = 0; v < virtualStages; ++v) {
    int s = v * stages + stage;
    p.chunks.push_back({s * per, (s + 1) * per});
  }
  p.hasEmbedding = stage == 0;
  p.hasHead = stage == stages - 1;
  p.headHasOwnEmbedding = stages > 1;
  return p;
}

int ModelPart::localLayers() const {
  int n = 0;
  for (const LayerRange& r : chunks) n += r.size();
  return n;
}

std::string ModelPart::describeLayers() const {
  std::string out = "layers ";
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(chunks[i].first) + "-" + std::to_string(chunks[i].last - 1);
  }
  return out;
}

}  // namespace chorus::train
