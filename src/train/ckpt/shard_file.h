// One rank's checkpoint file: which part of the model the rank held (its layout) and, for each range of the
// layout's flat buffer it owned, the parameters and both Adam moments. The file opens with a magic string and
// a JSON header and ends with a CRC-32 of everything before it, so a truncated or corrupted file is refused
// with a message that says which and why.
#ifndef CHORUS_TRAIN_CKPT_SHARD_FILE_H_
#define CHORUS_TRAIN_CKPT_SHARD_FILE_H_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "model/config.h"

namespace chorus::train {

// A checkpoint that cannot be used; the message names the file or field and the reason.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ShardHeader {
  ModelConfig model;
  ModelPart part;
  int64_t unitMultiple = 16;
  int64_t layoutSize = 0;
  int worldRank = 0, worldSize = 1, dpRank = 0, dpSize = 1, zero = 0;
  std::vector<std::pair<int64_t, int64_t>> ranges;  // (flat offset, count)
};

struct ShardFile {
  ShardHeader header;
  std::vector<float> params, m, v;  // the ranges' elements, one after another
};

std::vector<uint8_t> encodeShard(const ShardFile& shard);
// `name` is used in error messages.
ShardFile decodeShard(const std::vector<uint8_t>& bytes, const std::string& name);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_CKPT_SHARD_FILE_H_
