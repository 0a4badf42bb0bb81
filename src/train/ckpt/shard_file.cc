#include "ckpt/shard_file.h"

#include <cstring>
#include <nlohmann/json.hpp>

#include "ckpt/atomic_file.h"

namespace chorus::train {
namespace {
constexpr char kMagic[8] = {'C', 'H', 'O', 'R', 'U', 'S', 'C', 'K'};
constexpr uint32_t kVersion = 1;
// magic, version, header length, total file length (64 bits): enough to tell a truncated file from a
// corrupted one before the checksum is computed.
constexpr size_t kFixed = sizeof kMagic + 16;

void put32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
uint32_t get32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}
void putFloats(std::vector<uint8_t>& out, const std::vector<float>& v) {
  size_t at = out.size();
  out.resize(at + v.size() * sizeof(float));
  std::memcpy(out.data() + at, v.data(), v.size() * sizeof(float));
}
}  // namespace

std::vector<uint8_t> encodeShard(const ShardFile& s) {
  const ShardHeader& h = s.header;
  nlohmann::json j = {
      {"model", {h.model.layers, h.model.heads, h.model.dModel, h.model.seqLen, h.model.vocab}},
      {"part",
       {{"tp", {h.part.tpSize, h.part.tpRank}},
        {"chunks", nlohmann::json::array()},
        {"embedding", h.part.hasEmbedding},
        {"head", h.part.hasHead},
        {"head_own_embedding", h.part.headHasOwnEmbedding}}},
      {"unit_multiple", h.unitMultiple},
      {"layout_size", h.layoutSize},
      {"world", {h.worldRank, h.worldSize}},
      {"dp", {h.dpRank, h.dpSize}},
      {"zero", h.zero},
      {"ranges", h.ranges},
  };
  for (const LayerRange& r : h.part.chunks) j["part"]["chunks"].push_back({r.first, r.last});
  std::string header = j.dump();
  std::vector<uint8_t> out(kMagic, kMagic + sizeof kMagic);
  put32(out, kVersion);
  put32(out, static_cast<uint32_t>(header.size()));
  const uint64_t total = kFixed + header.size() + 3 * s.params.size() * sizeof(float) + 4;
  put32(out, static_cast<uint32_t>(total));
  put32(out, static_cast<uint32_t>(total >> 32));
  out.insert(out.end(), header.begin(), header.end());
  putFloats(out, s.params);
  putFloats(out, s.m);
  putFloats(out, s.v);
  put32(out, crc32Of(out.data(), out.size()));
  return out;
}

ShardFile decodeShard(const std::vector<uint8_t>& b, const std::string& name) {
  auto bad = [&](const std::string& why) { return CheckpointError("checkpoint file " + name + ": " + why); };
  if (b.size() < kFixed + 4) throw bad("truncated (" + std::to_string(b.size()) + " bytes)");
  if (std::memcmp(b.data(), kMagic, sizeof kMagic) != 0) throw bad("not a chorus-train checkpoint (bad magic)");
  uint32_t version = get32(b.data() + 8);
  if (version != kVersion)
    throw bad("format version " + std::to_string(version) + ", expected " + std::to_string(kVersion));
  const uint32_t headerLen = get32(b.data() + 12);
  const uint64_t total = get32(b.data() + 16) | static_cast<uint64_t>(get32(b.data() + 20)) << 32;
  if (b.size() != total)
    throw bad((b.size() < total ? "truncated: " : "too long: ") + std::to_string(b.size()) + " bytes, expected " +
              std::to_string(total));
  if (crc32Of(b.data(), b.size() - 4) != get32(b.data() + b.size() - 4))
    throw bad("checksum mismatch: the file is corrupted");
  if (kFixed + headerLen + 4 > b.size()) throw bad("its header runs past the end of the file");
  ShardFile s;
  ShardHeader& h = s.header;
  int64_t elems = 0;
  try {
    auto j = nlohmann::json::parse(b.begin() + kFixed, b.begin() + kFixed + headerLen);
    auto m = j.at("model");
    h.model = {m[0], m[1], m[2], m[3], m[4]};
    const auto& p = j.at("part");
    h.part.tpSize = p.at("tp")[0];
    h.part.tpRank = p.at("tp")[1];
    for (const auto& r : p.at("chunks")) h.part.chunks.push_back({r[0], r[1]});
    h.part.hasEmbedding = p.at("embedding");
    h.part.hasHead = p.at("head");
    h.part.headHasOwnEmbedding = p.at("head_own_embedding");
    h.unitMultiple = j.at("unit_multiple");
    h.layoutSize = j.at("layout_size");
    h.worldRank = j.at("world")[0];
    h.worldSize = j.at("world")[1];
    h.dpRank = j.at("dp")[0];
    h.dpSize = j.at("dp")[1];
    h.zero = j.at("zero");
    h.ranges = j.at("ranges").get<std::vector<std::pair<int64_t, int64_t>>>();
  } catch (const nlohmann::json::exception& e) {
    throw bad(std::string("unreadable header: ") + e.what());
  }
  for (auto& [off, n] : h.ranges) {
    if (off < 0 || n < 0 || off + n > h.layoutSize) throw bad("a range lies outside the layout");
    elems += n;
  }
  if (kFixed + headerLen + 3 * static_cast<size_t>(elems) * sizeof(float) + 4 != b.size())
    throw bad("its ranges do not match its length");
  const uint8_t* at = b.data() + kFixed + headerLen;
  for (auto* v : {&s.params, &s.m, &s.v}) {
    v->resize(static_cast<size_t>(elems));
    std::memcpy(v->data(), at, v->size() * sizeof(float));
    at += v->size() * sizeof(float);
  }
  return s;
}

}  // namespace chorus::train
