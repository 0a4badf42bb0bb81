#include "ckpt/checkpoint.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "ckpt/atomic_file.h"
#include "parallel/data_parallel.h"

namespace chorus::train {
namespace fs = std::filesystem;
namespace {

std::string stepName(int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "step-%08lld", static_cast<long long>(step));
  return buf;
}
std::string shardName(int rank) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "rank-%05d.bin", rank);
  return buf;
}

nlohmann::json toJson(const RunState& r) {
  return {{"format", "chorus-train checkpoint"},
          {"version", 1},
          {"step", r.step},
          {"seed", r.seed},
          {"corpus", r.corpus},
          {"global_batch", r.globalBatch},
          {"model",
           {{"layers", r.model.layers},
            {"heads", r.model.heads},
            {"d_model", r.model.dModel},
            {"seq_len", r.model.seqLen},
            {"vocab", r.model.vocab}}},
          {"layout", {{"world", r.world}, {"dp", r.dp}, {"tp", r.tp}, {"pp", r.pp}, {"zero", r.zero}}}};
}

RunState fromJson(const nlohmann::json& j) {
  RunState r;
  r.step = j.at("step");
  r.seed = j.at("seed");
  r.corpus = j.at("corpus");
  r.globalBatch = j.at("global_batch");
  const auto& m = j.at("model");
  r.model = {m.at("layers"), m.at("heads"), m.at("d_model"), m.at("seq_len"), m.at("vocab")};
  const auto& l = j.at("layout");
  r.world = l.at("world");
  r.dp = l.at("dp");
  r.tp = l.at("tp");
  r.pp = l.at("pp");
  r.zero = l.at("zero");
  return r;
}

}  // namespace

ShardSource engineShard(const DataParallel& engine, std::vector<float>& p, std::vector<float>& m,
                        std::vector<float>& v) {
  const ParamLayout& layout = engine.layout();
  const BucketPlan& plan = engine.plan();
  p.assign(static_cast<size_t>(layout.size()), 0.0f);
  m.assign(p.size(), 0.0f);
  v.assign(p.size(), 0.0f);
  engine.exportShard(p.data(), m.data(), v.data());
  ShardSource s;
  s.layout = &layout;
  s.dpRank = plan.dpRank();
  s.dpSize = plan.dpSize();
  s.zero = engine.zeroStage();
  for (size_t b = 0; b < plan.buckets().size(); ++b)
    s.ranges.emplace_back(plan.ownOffset(static_cast<int>(b)), plan.buckets()[b].slice);
  s.params = p.data();
  s.m = m.data();
  s.v = v.data();
  return s;
}

void saveCheckpoint(const std::string& dir, const RunState& run, const ShardSource& src, Comm& world) {
  const std::string final = dir + "/" + stepName(run.step);
  const std::string tmp = final + ".tmp";
  if (world.rank() == 0) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    fs::remove_all(tmp, ec);  // a save that died half-way
    if (!fs::create_directories(tmp, ec) && ec)
      throw CheckpointError("cannot create checkpoint directory " + tmp + ": " + ec.message());
  }
  world.barrier();

  const ParamLayout& layout = *src.layout;
  ShardFile shard;
  ShardHeader& h = shard.header;
  h.model = layout.config();
  h.part = layout.part();
  h.unitMultiple = layout.unitMultiple();
  h.layoutSize = layout.size();
  h.worldRank = world.rank();
  h.worldSize = world.size();
  h.dpRank = src.dpRank;
  h.dpSize = src.dpSize;
  h.zero = src.zero;
  h.ranges = src.ranges;
  for (auto [at, n] : src.ranges) {
    shard.params.insert(shard.params.end(), src.params + at, src.params + at + n);
    shard.m.insert(shard.m.end(), src.m + at, src.m + at + n);
    shard.v.insert(shard.v.end(), src.v + at, src.v + at + n);
  }
  std::vector<uint8_t> bytes = encodeShard(shard);
  writeFileAtomic(tmp + "/" + shardName(world.rank()), bytes);

  // Rank 0 learns every file's size and checksum for the manifest.
  std::vector<int64_t> mine = {static_cast<int64_t>(bytes.size()), crc32Of(bytes.data(), bytes.size())};
  std::vector<int64_t> all(2 * static_cast<size_t>(world.size()));
  world.allGather(mine.data(), all.data(), 2, DType::kInt64).wait();
  if (world.rank() == 0) {
    nlohmann::json j = toJson(run);
    j["files"] = nlohmann::json::array();
    for (int r = 0; r < world.size(); ++r)
      j["files"].push_back({{"name", shardName(r)}, {"bytes", all[2 * r]}, {"crc32", all[2 * r + 1]}});
    std::string text = j.dump(2) + "\n";
    writeFileAtomic(tmp + "/manifest.json", std::vector<uint8_t>(text.begin(), text.end()));
    std::error_code ec;
    fs::remove_all(final, ec);
    fs::rename(tmp, final, ec);
    if (ec) throw CheckpointError("cannot rename " + tmp + " to " + final + ": " + ec.message());
    syncDirectory(dir);
    std::string latest = stepName(run.step) + "\n";
    writeFileAtomic(dir + "/latest", std::vector<uint8_t>(latest.begin(), latest.end()));
  }
  world.barrier();
}

std::string latestCheckpoint(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw CheckpointError("no checkpoint directory " + dir);
  std::string name;
  if (fs::exists(dir + "/latest")) {
    std::vector<uint8_t> b = readWholeFile(dir + "/latest");
    name.assign(b.begin(), b.end());
    while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
  } else if (fs::exists(dir + "/manifest.json")) {
    return dir;  // a step directory itself
  }
  if (name.empty()) throw CheckpointError("no complete checkpoint in " + dir + " (no 'latest' file)");
  if (!fs::exists(dir + "/" + name + "/manifest.json"))
    throw CheckpointError("checkpoint " + dir + "/" + name + " named by " + dir + "/latest has no manifest.json");
  return dir + "/" + name;
}

FullState loadFullState(const std::string& stepDir) {
  FullState state;
  nlohmann::json manifest;
  const std::string mpath = stepDir + "/manifest.json";
  try {
    std::vector<uint8_t> b = readWholeFile(mpath);
    manifest = nlohmann::json::parse(b.begin(), b.end());
    state.run = fromJson(manifest);
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError("checkpoint manifest " + mpath + " is unreadable: " + e.what());
  } catch (const std::runtime_error& e) {
    throw CheckpointError(e.what());
  }
  // Rebuild each saved part's flat buffers from the shards of its data-parallel ranks, then its tensors.
  struct PartBuffers {
    ShardHeader header;
    std::vector<float> p, m, v;
    std::vector<uint8_t> covered;
  };
  std::map<std::pair<int, int>, PartBuffers> parts;  // (tp rank, first layer of the first chunk)
  for (const auto& f : manifest.at("files")) {
    const std::string name = f.at("name"), path = stepDir + "/" + name;
    std::vector<uint8_t> bytes;
    try {
      bytes = readWholeFile(path);
    } catch (const std::runtime_error& e) {
      throw CheckpointError(std::string("checkpoint is incomplete: ") + e.what());
    }
    if (static_cast<int64_t>(bytes.size()) != f.at("bytes").get<int64_t>())
      throw CheckpointError("checkpoint file " + path + " has " + std::to_string(bytes.size()) +
                            " bytes, the manifest says " + std::to_string(f.at("bytes").get<int64_t>()) +
                            " (truncated or replaced)");
    ShardFile s = decodeShard(bytes, path);
    const ShardHeader& h = s.header;
    if (h.model.describe() != state.run.model.describe())
      throw CheckpointError("checkpoint file " + path + " holds a model (" + h.model.describe() +
                            ") that differs from its manifest's (" + state.run.model.describe() + ")");
    PartBuffers& part = parts[{h.part.tpRank, h.part.chunks.empty() ? -1 : h.part.chunks[0].first}];
    if (part.p.empty()) {
      part.header = h;
      part.p.resize(static_cast<size_t>(h.layoutSize));
      part.m.resize(part.p.size());
      part.v.resize(part.p.size());
      part.covered.assign(part.p.size(), 0);
    }
    size_t at = 0;
    for (auto [off, n] : h.ranges) {
      std::copy_n(s.params.begin() + at, n, part.p.begin() + off);
      std::copy_n(s.m.begin() + at, n, part.m.begin() + off);
      std::copy_n(s.v.begin() + at, n, part.v.begin() + off);
      std::fill_n(part.covered.begin() + off, n, 1);
      at += static_cast<size_t>(n);
    }
  }
  for (auto& [key, part] : parts) {
    if (std::find(part.covered.begin(), part.covered.end(), 0) != part.covered.end())
      throw CheckpointError("checkpoint " + stepDir + " is missing part of tensor-parallel rank " +
                            std::to_string(key.first) + ", " + part.header.part.describeLayers() +
                            " (a shard file is absent from the manifest)");
    ParamLayout layout(part.header.model, part.header.part, part.header.unitMultiple);
    for (const TensorSpec& t : layout.tensors()) {
      FullTensor& full = state.tensors[t.name];
      if (full.p.empty()) {
        full.rows = t.fullRows;
        full.cols = t.fullCols;
        full.p.resize(static_cast<size_t>(t.fullSize()));
        full.m.resize(full.p.size());
        full.v.resize(full.p.size());
      }
      const int tr = part.header.part.tpRank, ts = part.header.part.tpSize;
      placeSlice(t, tr, ts, part.p.data() + t.offset, full.p.data());
      placeSlice(t, tr, ts, part.m.data() + t.offset, full.m.data());
      placeSlice(t, tr, ts, part.v.data() + t.offset, full.v.data());
    }
  }
  return state;
}

void checkSameModel(const FullState& state, const ModelConfig& model) {
  if (state.run.model.describe() != model.describe())
    throw CheckpointError("checkpoint holds another model: it has " + state.run.model.describe() +
                          ", this run asks for " + model.describe());
}

void importState(const FullState& state, DataParallel& engine) {
  const ParamLayout& layout = engine.layout();
  const ModelPart& part = layout.part();
  std::vector<float> p(static_cast<size_t>(layout.size())), m(p.size()), v(p.size());
  for (const TensorSpec& t : layout.tensors()) {
    auto it = state.tensors.find(t.name);
    if (it == state.tensors.end()) throw CheckpointError("checkpoint lacks tensor " + t.name);
    sliceOf(t, part.tpRank, part.tpSize, it->second.p.data(), p.data() + t.offset);
    sliceOf(t, part.tpRank, part.tpSize, it->second.m.data(), m.data() + t.offset);
    sliceOf(t, part.tpRank, part.tpSize, it->second.v.data(), v.data() + t.offset);
  }
  engine.importFull(p.data(), m.data(), v.data());
}

double compareCheckpoints(const FullState& a, const FullState& b, bool verbose) {
  double diff2 = 0, norm2 = 0;
  bool missing = false;
  for (const auto& [name, ta] : a.tensors) {
    auto it = b.tensors.find(name);
    if (it == b.tensors.end() || it->second.p.size() != ta.p.size()) {
      if (verbose) std::printf("%-24s missing or of another shape in the second checkpoint\n", name.c_str());
      missing = true;
      continue;
    }
    double d2 = 0, n2 = 0, maxAbs = 0;
    for (size_t i = 0; i < ta.p.size(); ++i) {
      double x = ta.p[i], y = it->second.p[i];
      d2 += (x - y) * (x - y);
      n2 += x * x;
      maxAbs = std::max(maxAbs, std::fabs(x - y));
    }
    diff2 += d2;
    norm2 += n2;
    if (verbose)
      std::printf("%-24s max |a-b| %.3e  |a-b|/|a| %.3e\n", name.c_str(), maxAbs,
                  n2 > 0 ? std::sqrt(d2 / n2) : std::sqrt(d2));
  }
  if (missing || b.tensors.size() != a.tensors.size()) return INFINITY;
  return norm2 > 0 ? std::sqrt(diff2 / norm2) : std::sqrt(diff2);
}

}  // namespace chorus::train
