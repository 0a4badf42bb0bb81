#include "data/corpus.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "tensor/rng.h"

namespace chorus::train {
namespace {

std::vector<uint8_t> readFile(const std::string& path) {
  // gzopen reads plain files too, so one path serves both.
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) {
    std::string why = errno ? std::strerror(errno) : "cannot open";
    std::string hint =
        path == kJargonPath ? " (install Debian's jargon-text package: apt-get install jargon-text)" : "";
    throw std::runtime_error("corpus " + path + ": " + why + hint);
  }
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  for (;;) {
    int n = gzread(f, buf, sizeof buf);
    if (n < 0) {
      int code = 0;
      std::string msg = gzerror(f, &code);
      gzclose(f);
      throw std::runtime_error("corpus " + path + ": read failed: " + msg);
    }
    if (n == 0) break;
    out.insert(out.end(), buf, buf + n);
  }
  gzclose(f);
  return out;
}

// Sentences of words drawn from a fixed seeded lexicon, each word's successor biased by the word before it:
// structure a small model can pick up in a few hundred steps, unlike uniform noise.
std::vector<uint8_t> synthetic(uint64_t seed, int64_t n) {
  const int kWords = 64;
  std::vector<std::string> lexicon;
  for (int w = 0; w < kWords; ++w) {
    uint64_t k = hashCombine(seed, 1000 + w);
    int len = 2 + static_cast<int>(mix64(k) % 7);
    std::string word;
    for (int i = 0; i < len; ++i) word.push_back(static_cast<char>('a' + mix64(hashCombine(k, i)) % 26));
    lexicon.push_back(word);
  }
  std::vector<uint8_t> out;
  out.reserve(static_cast<size_t>(n));
  int prev = 0;
  for (uint64_t i = 0; static_cast<int64_t>(out.size()) < n; ++i) {
    uint64_t r = mix64(hashCombine(seed, i));
    int next = (r & 3) ? (prev * 7 + 3 + static_cast<int>((r >> 2) % 4)) % kWords : static_cast<int>((r >> 2) % kWords);
    const std::string& w = lexicon[next];
    out.insert(out.end(), w.begin(), w.end());
    out.push_back((r >> 20) % 9 == 0 ? '.' : ' ');
    if ((r >> 20) % 9 == 0) out.push_back('\n');
    prev = next;
  }
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace

Corpus loadCorpus(const std::string& source, int seqLen, uint64_t seed, int64_t syntheticBytes) {
  Corpus c;
  std::vector<uint8_t> all;
  if (source == "synthetic") {
    c.name = "synthetic";
    all = synthetic(seed, syntheticBytes);
  } else {
    c.name = source == "jargon" ? kJargonPath : source;
    all = readFile(c.name);
  }
  size_t split = all.size() * 9 / 10;
  c.train.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(split));
  c.val.assign(all.begin() + static_cast<std::ptrdiff_t>(split), all.end());
  size_t need = static_cast<size_t>(seqLen) + 2;
  if (c.train.size() < need || c.val.size() < need)
    throw std::runtime_error("corpus " + c.name + ": " + std::to_string(all.size()) +
                             " bytes is too short for sequences of " + std::to_string(seqLen) + " tokens");
  return c;
}

}  // namespace chorus::train
