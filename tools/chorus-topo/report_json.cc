#include <nlohmann/json.hpp>

#include "report.h"

namespace chorus::tools {

using topology::NodeType;

void printJson(const Report& r, std::ostream& os) {
  const auto& g = r.system.graph;
  const auto& res = r.result;
  nlohmann::json j;
  j["source"] = r.system.source;
  j["notes"] = r.system.notes;
  j["hosts"] = nlohmann::json::array();
  for (uint64_t h : g.hostHashes()) j["hosts"].push_back(h);
  j["cpus"] = nlohmann::json::array();
  for (int c : g.ofType(NodeType::kCpu)) {
    const auto& n = g.node(c);
    j["cpus"].push_back({{"numa", n.index}, {"host", n.host}, {"name", n.name}});
  }
  j["gpus"] = nlohmann::json::array();
  for (size_t i = 0; i < res.gpus.size(); ++i) {
    const auto& n = g.node(res.gpus[i]);
    int cpu = g.localCpu(res.gpus[i]);
    j["gpus"].push_back({{"dev", n.index},
                         {"rank", static_cast<int>(i)},
                         {"busid", topology::formatBusId(n.busId)},
                         {"host", n.host},
                         {"sm", n.sm},
                         {"numa", cpu >= 0 ? g.node(cpu).index : -1}});
  }
  j["nics"] = nlohmann::json::array();
  for (int net : g.ofType(NodeType::kNet)) {
    const auto& n = g.node(net);
    int nic = n.links.empty() ? -1 : n.links[0].to;
    j["nics"].push_back({{"dev", n.index},
                         {"name", n.name},
                         {"host", n.host},
                         {"bandwidth", n.links.empty() ? 0.0 : n.links[0].bw},
                         {"busid", nic >= 0 ? topology::formatBusId(g.node(nic).busId) : "-"}});
  }
  j["devices"] = nlohmann::json::array();
  for (const auto& d : deviceRows(g)) {
    j["devices"].push_back({{"kind", d.kind},
                            {"busid", d.busId},
                            {"class", d.pciClass},
                            {"parent", d.parent},
                            {"host", d.host},
                            {"numa", d.numa},
                            {"class_only", g.isClassOnlyDevice(d.node)},
                            {"what", d.what}});
  }
  j["gpu_nics"] = nlohmann::json::array();
  for (size_t i = 0; i < res.gpuNics.size(); ++i) {
    const auto& pair = res.gpuNics[i];
    if (pair.net < 0) continue;
    j["gpu_nics"].push_back({{"gpu", gpuLabel(r, static_cast<int>(i))},
                             {"net", g.node(pair.net).index},
                             {"name", g.node(pair.net).name},
                             {"path", topology::pathTypeName(pair.type)},
                             {"bandwidth", pair.bw}});
  }
  // Path types between GPUs, indexed by rank.
  nlohmann::json matrix = nlohmann::json::array();
  for (int a : res.gpus) {
    nlohmann::json row = nlohmann::json::array();
    for (int b : res.gpus) row.push_back(topology::pathTypeName(r.paths.get(a, b).type));
    matrix.push_back(row);
  }
  j["gpu_paths"] = matrix;
  j["type_intra"] = topology::pathTypeName(res.typeIntra);
  j["order_is"] = g.hostHashes().size() > 1 ? "rank" : "dev";
  auto rings = [&](const topology::SearchResult& sr) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& ring : sr.rings) {
      nlohmann::json order = nlohmann::json::array();
      for (int pos : ring.order) order.push_back(gpuLabel(r, pos));
      nlohmann::json nets = nlohmann::json::array();
      for (const auto& [in, out] : ring.nets) nets.push_back({g.node(in).index, g.node(out).index});
      rows.push_back({{"order", order}, {"bandwidth", ring.bw}, {"bottleneck", ring.bottleneck}, {"nets", nets}});
    }
    return rows;
  };
  j["rings"] = rings(res);
  if (r.multiNode != nullptr) j["multi_node_rings"] = rings(*r.multiNode);
  j["trees"] = nlohmann::json::array();
  for (int t = 0; t < 2 && !res.gpus.empty(); ++t) {
    nlohmann::json children = nlohmann::json::array();
    for (const auto& c : res.trees.children[t]) children.push_back(c);
    j["trees"].push_back({{"parent", res.trees.parent[t]},
                          {"children", children},
                          {"root", res.trees.root[t]},
                          {"bandwidth", res.treeBw}});
  }
  j["tuning"] = nlohmann::json::array();
  for (int c = 0; c < static_cast<int>(topology::TunedColl::kCount) && !res.gpus.empty(); ++c) {
    for (int a = 0; a < static_cast<int>(topology::TunedAlgo::kCount); ++a) {
      auto coll = static_cast<topology::TunedColl>(c);
      auto algo = static_cast<topology::TunedAlgo>(a);
      const auto& cost = res.tuning.at(coll, algo);
      if (cost.busBwGBs <= 0) continue;
      j["tuning"].push_back({{"collective", topology::tunedCollName(coll)},
                             {"algorithm", topology::tunedAlgoName(algo)},
                             {"latency_us", cost.latencyUs},
                             {"busbw_gbs", cost.busBwGBs}});
    }
  }
  os << j.dump(2) << "\n";
}

}  // namespace chorus::tools
