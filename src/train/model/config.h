// The shape of the GPT the trainer builds (GPT-2's decoder at a small scale, byte-level vocabulary) and how
// one rank's part of it is cut: which layers (pipeline stage) and which slice of heads, hidden units and
// vocabulary (tensor-parallel rank).
#ifndef CHORUS_TRAIN_MODEL_CONFIG_H_
#define CHORUS_TRAIN_MODEL_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

namespace chorus::train {

struct ModelConfig {
  int layers = 4;
  int heads = 4;
  int dModel = 128;
  int seqLen = 128;
  int vocab = 256;  // bytes

  int headSize() const { return dModel / heads; }
  int ffn() const { return 4 * dModel; }
  // Parameters of the whole model (the embedding counted once: the head is tied to it).
  int64_t paramCount() const;
  // Forward+backward FLOPs per token of the whole model, as PaLM's MFU accounting counts them: 6 per weight of
  // every matrix product plus 12 * layers * seqLen * dModel for the attention scores and their weighted sums.
  double flopsPerToken() const;
  // "layers=4 heads=4 d_model=128 seq_len=128 vocab=256": the text a checkpoint stores and compares.
  std::string describe() const;
  // Throws std::invalid_argument naming the flag when the shape is unusable.
  void validate() const;
};

// Transformer blocks [first, last).
struct LayerRange {
  int first = 0, last = 0;
  int size() const { return last - first; }
};

// The part of the model one rank holds: its tensor-parallel slice of the blocks of its pipeline stage. With
// an interleaved schedule a stage holds several chunks (virtual stages) of the model: chunk v of stage p is
// virtual stage v*P + p. Without pipeline parallelism there is one chunk of every block.
struct ModelPart {
  int tpSize = 1;  // ranks a layer's heads, hidden units and vocabulary are split over
  int tpRank = 0;
  std::vector<LayerRange> chunks;  // in model order
  bool hasEmbedding = true;        // first stage: token and position embeddings (with chunk 0)
  bool hasHead = true;             // last stage: final LayerNorm, the tied head and the loss (with the last chunk)
  // With several pipeline stages the last stage keeps its own copy of the tied embedding for the head
  // (Megatron's approach); the two copies' gradients are summed between first and last stage.
  bool headHasOwnEmbedding = false;

  // The whole model on one rank.
  static ModelPart whole(const ModelConfig& cfg);
  // Stage `stage` of `stages` with `virtualStages` chunks each, tensor-parallel rank tpRank of tpSize. The
  // layers must divide by stages * virtualStages.
  static ModelPart forStage(const ModelConfig& cfg, int tpSize, int tpRank, int stages, int stage, int virtualStages);
  int localLayers() const;
  // "layers 0-3" or "layers 0-1, 4-5": for messages.
  std::string describeLayers() const;
};

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_MODEL_CONFIG_H_
