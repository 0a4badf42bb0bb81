#include "model/param_layout.h"

#include <algorithm>
#include <stdexcept>

namespace chorus::train {
ParamLayout::ParamLayout(const ModelConfig& cfg, const ModelPart& part, int64_t unitMultiple)
    : unitMultiple_(unitMultiple), cfg_(cfg), part_(part) {
  if (unitMultiple < 1 || unitMultiple % 16) throw std::invalid_argument("unit multiple must be a multiple of 16");
  const int c = cfg.dModel, t = part.tpSize;
  if (cfg.heads % t || cfg.vocab % t) throw std::invalid_argument("heads and vocabulary must divide by --tp");
  if (part.hasEmbedding) {
    beginUnit("embedding");
    embeddingUnit_ = static_cast<int>(units_.size()) - 1;
    wteOffset_ = add("wte", cfg.vocab, c, Split::kRows, 1, true);
    wpeOffset_ = add("wpe", cfg.seqLen, c, Split::kNone, 1, true);
    endUnit();
  }
  unitOfLayer_.assign(cfg.layers, -1);
  if (part.hasEmbedding) chunkOfUnit_.push_back(0);
  for (size_t chunk = 0; chunk < part.chunks.size(); ++chunk) {
    for (int l = part.chunks[chunk].first; l < part.chunks[chunk].last; ++l) {
      const std::string p = "h." + std::to_string(l) + ".";
      beginUnit("block " + std::to_string(l));
      unitOfLayer_[l] = static_cast<int>(units_.size()) - 1;
      chunkOfUnit_.push_back(static_cast<int>(chunk));
      BlockOffsets b;
      b.ln1w = add(p + "ln1.w", c, 1, Split::kNone, 1, false);
      b.ln1b = add(p + "ln1.b", c, 1, Split::kNone, 1, false);
      b.qkvw = add(p + "attn.qkv.w", 3 * c, c, Split::kRows, 3, true);
      b.qkvb = add(p + "attn.qkv.b", 3 * c, 1, Split::kRows, 3, false);
      b.projw = add(p + "attn.proj.w", c, c, Split::kCols, 1, true);
      b.projb = add(p + "attn.proj.b", c, 1, Split::kNone, 1, false);
      b.ln2w = add(p + "ln2.w", c, 1, Split::kNone, 1, false);
      b.ln2b = add(p + "ln2.b", c, 1, Split::kNone, 1, false);
      b.fcw = add(p + "mlp.fc.w", 4 * c, c, Split::kRows, 1, true);
      b.fcb = add(p + "mlp.fc.b", 4 * c, 1, Split::kRows, 1, false);
      b.fcprojw = add(p + "mlp.proj.w", c, 4 * c, Split::kCols, 1, true);
      b.fcprojb = add(p + "mlp.proj.b", c, 1, Split::kNone, 1, false);
      int64_t base = units_.back().offset;
      for (int64_t* o : {&b.ln1w, &b.ln1b, &b.qkvw, &b.qkvb, &b.projw, &b.projb, &b.ln2w, &b.ln2b, &b.fcw, &b.fcb,
                         &b.fcprojw, &b.fcprojb})
        *o -= base;
      block_ = b;
      endUnit();
    }
  }
  if (part.hasHead) {
    chunkOfUnit_.push_back(static_cast<int>(part.chunks.size()) - 1);
    beginUnit("final");
    finalUnit_ = static_cast<int>(units_.size()) - 1;
    lnfwOffset_ = add("lnf.w", c, 1, Split::kNone, 1, false);
    lnfbOffset_ = add("lnf.b", c, 1, Split::kNone, 1, false);
    // The head's copy of the embedding carries the full tensor's name: a checkpoint stores one "wte".
    if (part.headHasOwnEmbedding) headWteOffset_ = add("wte", cfg.vocab, c, Split::kRows, 1, true);
    int64_t base = units_.back().offset;
    lnfwOffset_ -= base;
    lnfbOffset_ -= base;
    if (headWteOffset_ >= 0) headWteOffset_ -= base;
    endUnit();
  }
  if (embeddingUnit_ >= 0) {
    wteOffset_ -= units_[embeddingUnit_].offset;
    wpeOffset_ -= units_[embeddingUnit_].offset;
  }
}

void ParamLayout::beginUnit(const std::string& name) {
  units_.push_back({name, size_, 0});
}

void ParamLayout::endUnit() {
  size_ = (size_ + unitMultiple_ - 1) / unitMultiple_ * unitMultiple_;
  units_.back().size = size_ - units_.back().offset;
}

int64_t ParamLayout::add(const std::string& name, int rows, int cols, Split split, int groups, bool decay) {
  const int t = part_.tpSize;
  TensorSpec s;
  s.name = name;
  s.fullRows = rows;
  s.fullCols = cols;
  s.split = split;
  s.groups = groups;
  s.rows = split == Split::kRows ? rows / t : rows;
  s.cols = split == Split::kCols ? cols / t : cols;
  s.offset = size_;
  s.unit = static_cast<int>(units_.size()) - 1;
  s.decay = decay;
  tensors_.push_back(s);
  size_ += s.size();
  return s.offset;
}

const TensorSpec* ParamLayout::find(const std::string& name) const {
  for (const auto& s : tensors_)
    if (s.name == name) return &s;
  return nullptr;
}

void relayout(const ParamLayout& from, const ParamLayout& to, const float* src, float* dst) {
  for (const TensorSpec& t : to.tensors()) {
    const TensorSpec* f = from.find(t.name);
    if (!f || f->rows != t.rows || f->cols != t.cols)
      throw std::invalid_argument("cannot carry tensor " + t.name + " over to the new layout");
    std::copy_n(src + f->offset, t.size(), dst + t.offset);
  }
}

namespace {
// Calls f(fullIndex, sliceIndex) for every element of rank tpRank's slice.
template <typename F>
void forEachSliceElement(const TensorSpec& s, int tpRank, int tpSize, F f) {
  for (int r = 0; r < s.rows; ++r) {
    int64_t fullRow = r;
    if (s.split == Split::kRows) {
      int perGroup = s.fullRows / s.groups;  // rows of one block (q, k or v)
      int slice = perGroup / tpSize;         // this rank's rows of that block
      int group = r / slice, within = r % slice;
      fullRow = static_cast<int64_t>(group) * perGroup + tpRank * slice + within;
    }
    int64_t colBase = s.split == Split::kCols ? static_cast<int64_t>(tpRank) * s.cols : 0;
    for (int c = 0; c < s.cols; ++c) f(fullRow * s.fullCols + colBase + c, static_cast<int64_t>(r) * s.cols + c);
  }
}
}  // namespace

template <typename T>
void sliceOf(const TensorSpec& spec, int tpRank, int tpSize, const T* full, T* slice) {
  forEachSliceElement(spec, tpRank, tpSize, [&](int64_t f, int64_t s) { slice[s] = full[f]; });
}

template <typename T>
void placeSlice(const TensorSpec& spec, int tpRank, int tpSize, const T* slice, T* full) {
  forEachSliceElement(spec, tpRank, tpSize, [&](int64_t f, int64_t s) { full[f] = slice[s]; });
}

template void sliceOf<float>(const TensorSpec&, int, int, const float*, float*);
template void sliceOf<double>(const TensorSpec&, int, int, const double*, double*);
template void placeSlice<float>(const TensorSpec&, int, int, const float*, float*);
template void placeSlice<double>(const TensorSpec&, int, int, const double*, double*);

}  // namespace chorus::train
