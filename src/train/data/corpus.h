// The bytes the model learns from: the Jargon File (Debian's jargon-text package) or a seeded synthetic text
// for fast tests, split into a training part (the first 90 %) and a validation part (the rest).
#ifndef CHORUS_TRAIN_DATA_CORPUS_H_
#define CHORUS_TRAIN_DATA_CORPUS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace chorus::train {

// Where Debian's jargon-text package installs the Jargon File.
inline constexpr const char* kJargonPath = "/usr/share/doc/jargon-text/jargon.txt.gz";

struct Corpus {
  std::string name;            // the path, or "synthetic"
  std::vector<uint8_t> train;  // first 90 %
  std::vector<uint8_t> val;    // last 10 %
};

// Loads `source`: "synthetic" (a seeded text of `syntheticBytes` bytes made of words with a simple grammar, so a
// model can learn it), "jargon" (the Jargon File at kJargonPath), or a path (gzip-compressed when it ends in
// .gz). Throws std::runtime_error naming the path (and, for the Jargon File, the package) when it is missing
// or too short for a sequence of seqLen+1 bytes in each split.
Corpus loadCorpus(const std::string& source, int seqLen, uint64_t seed, int64_t syntheticBytes = 1 << 20);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_DATA_CORPUS_H_
