// Where every parameter of one rank's part of the model lives in its flat buffer. The buffer is cut into
// units, each a contiguous range: the embeddings, one unit per transformer block, and the final LayerNorm
// (with the head's own copy of the embedding on the last pipeline stage). A unit is what ZeRO-3 gathers
// before its layer runs and what data parallelism reduces once backward has produced it; units lie in
// forward order, so backward produces them from the end of the buffer towards its start.
//
// Each tensor also records how tensor parallelism cuts the full tensor, so a rank's slice can be made from
// the full tensor (initialisation, loading a checkpoint saved with another layout) and put back into it.
#ifndef CHORUS_TRAIN_MODEL_PARAM_LAYOUT_H_
#define CHORUS_TRAIN_MODEL_PARAM_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "model/config.h"

namespace chorus::train {

// How tensor parallelism cuts a full (rows x cols) tensor, row-major, weights stored (out, in) as PyTorch's
// nn.Linear does.
enum class Split {
  kNone,  // replicated on every tensor-parallel rank
  kRows,  // the rows (output features) are cut into `groups` equal blocks, and each block into tpSize slices;
          // rank r keeps slice r of every block (QKV: groups = 3, so every rank keeps its heads of q, k and v)
  kCols,  // the columns (input features) are cut into tpSize slices; rank r keeps slice r
};

struct TensorSpec {
  std::string name;  // the full tensor's name, the same on every layout ("h.2.attn.qkv.w")
  int fullRows = 0, fullCols = 1;
  Split split = Split::kNone;
  int groups = 1;
  int rows = 0, cols = 1;  // this rank's slice
  int64_t offset = 0;      // of the slice in the flat buffer
  int unit = 0;
  bool decay = false;  // AdamW's weight decay applies: every matrix, embeddings included (GPT-2's choice)

  int64_t size() const { return static_cast<int64_t>(rows) * cols; }
  int64_t fullSize() const { return static_cast<int64_t>(fullRows) * fullCols; }
};

struct UnitSpec {
  std::string name;  // "embedding", "block 3", "final"
  int64_t offset = 0;
  int64_t size = 0;
};

// Offsets of a transformer block's tensors from the start of its unit (identical for every block of a part).
struct BlockOffsets {
  int64_t ln1w, ln1b, qkvw, qkvb, projw, projb, ln2w, ln2b, fcw, fcb, fcprojw, fcprojb;
};

class ParamLayout {
 public:
  // Every unit's size is rounded up to a multiple of `unitMultiple` elements (zeros the model never reads),
  // so data parallelism can cut any run of whole units into equal, 64-byte aligned slices: pass 16 times the
  // data-parallel size.
  ParamLayout(const ModelConfig& cfg, const ModelPart& part, int64_t unitMultiple = 16);

  const ModelConfig& config() const { return cfg_; }
  const ModelPart& part() const { return part_; }
  const std::vector<TensorSpec>& tensors() const { return tensors_; }
  const std::vector<UnitSpec>& units() const { return units_; }
  int64_t size() const { return size_; }
  int64_t unitMultiple() const { return unitMultiple_; }

  // Unit indices; -1 where this part has no such unit.
  int embeddingUnit() const { return embeddingUnit_; }
  int blockUnit(int layer) const { return unitOfLayer_[layer]; }
  int finalUnit() const { return finalUnit_; }
  // The chunk a unit belongs to (the embedding to the first, the final unit to the last).
  int chunkOfUnit(int unit) const { return chunkOfUnit_[unit]; }
  const BlockOffsets& block() const { return block_; }
  // Offsets inside their units (embedding unit: wte, wpe; final unit: lnf w, b and the head's own wte).
  int64_t wteOffset() const { return wteOffset_; }
  int64_t wpeOffset() const { return wpeOffset_; }
  int64_t lnfwOffset() const { return lnfwOffset_; }
  int64_t lnfbOffset() const { return lnfbOffset_; }
  int64_t headWteOffset() const { return headWteOffset_; }
  // Rows of the vocabulary this rank holds: [vocabStart, vocabStart + vocabLocal).
  int vocabStart() const { return part_.tpRank * vocabLocal(); }
  int vocabLocal() const { return cfg_.vocab / part_.tpSize; }

  const TensorSpec* find(const std::string& name) const;

 private:
  int64_t add(const std::string& name, int rows, int cols, Split split, int groups, bool decay);
  void beginUnit(const std::string& name);
  void endUnit();

  int64_t unitMultiple_;
  ModelConfig cfg_;
  ModelPart part_;
  std::vector<TensorSpec> tensors_;
  std::vector<UnitSpec> units_;
  int64_t size_ = 0;
  int embeddingUnit_ = -1, finalUnit_ = -1;
  std::vector<int> unitOfLayer_;  // per model layer; -1 where another rank holds it
  std::vector<int> chunkOfUnit_;
  BlockOffsets block_{};
  int64_t wteOffset_ = 0, wpeOffset_ = 0, lnfwOffset_ = 0, lnfbOffset_ = 0, headWteOffset_ = -1;
};

// Copies every tensor of `to` from where `from` keeps the same tensor (the same part of the model laid out for
// another data-parallel size: only the units' padding differs). Throws std::invalid_argument when `from`
// lacks a tensor or cuts it otherwise.
void relayout(const ParamLayout& from, const ParamLayout& to, const float* src, float* dst);

// Copies rank `tpRank`'s slice of the full tensor `full` (spec.fullRows x spec.fullCols) into `slice`.
template <typename T>
void sliceOf(const TensorSpec& spec, int tpRank, int tpSize, const T* full, T* slice);
// The reverse: writes `slice` into its place in `full`.
template <typename T>
void placeSlice(const TensorSpec& spec, int tpRank, int tpSize, const T* slice, T* full);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_MODEL_PARAM_LAYOUT_H_
