#include <algorithm>
#include <sstream>
#include <tuple>

#include "report.h"
#include "topology/pci_class.h"

namespace chorus::tools {

using topology::NodeType;

std::vector<DeviceRow> deviceRows(const topology::Graph& g) {
  std::vector<DeviceRow> rows;
  for (int i = 0; i < g.size(); ++i) {
    const auto& n = g.node(i);
    bool device = n.type == NodeType::kGpu || n.type == NodeType::kNic || g.isClassOnlyDevice(i);
    if (!device) continue;
    DeviceRow row;
    row.node = i;
    row.host = n.host;
    topology::PciKind kind = topology::pciKind(n.pciClass);
    if (n.type == NodeType::kGpu) kind = topology::PciKind::kGpu;
    if (n.type == NodeType::kNic && !topology::isNicKind(kind)) kind = topology::PciKind::kNic;
    row.kind = topology::pciKindName(kind);
    row.busId = topology::formatBusId(n.busId);
    row.pciClass = n.pciClass >= 0 ? topology::formatPciClass(n.pciClass) : "-";
    int sw = g.parentSwitch(i);
    int cpu = g.localCpu(i);
    row.numa = cpu >= 0 ? g.node(cpu).index : -1;
    row.parent = sw >= 0 ? "switch " + topology::formatBusId(g.node(sw).busId)
                         : (cpu >= 0 ? "CPU " + std::to_string(row.numa) : "-");
    std::ostringstream what;
    if (n.type == NodeType::kGpu) {
      what << "GPU/" << n.index << " sm" << n.sm;
    } else if (n.type == NodeType::kNic) {
      bool first = true;
      for (const auto& l : n.links) {
        if (l.type != topology::LinkType::kNet) continue;
        what << (first ? "" : ", ") << g.label(l.to) << " " << gbs(l.bw);
        first = false;
      }
      if (first) what << "no port";
    } else {
      what << "class code only";
    }
    row.what = what.str();
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(), [&](const DeviceRow& a, const DeviceRow& b) {
    return std::tie(a.host, a.numa, g.node(a.node).busId) < std::tie(b.host, b.numa, g.node(b.node).busId);
  });
  return rows;
}

std::string channelText(const Report& r, const topology::SearchResult& res, const topology::RingChannel& ring) {
  const auto& g = r.system.graph;
  std::ostringstream os;
  size_t h = 0;
  for (size_t i = 0; i < ring.order.size(); ++i) {
    int host = g.node(res.gpus[ring.order[i]]).host;
    bool first = i == 0 || g.node(res.gpus[ring.order[i - 1]]).host != host;
    bool last = i + 1 == ring.order.size() || g.node(res.gpus[ring.order[i + 1]]).host != host;
    if (first && i > 0) os << " |";
    if (first && h < ring.nets.size()) os << " NET/" << g.node(ring.nets[h].first).index << " >";
    int label = g.hostHashes().size() > 1 ? ring.order[i] : g.node(res.gpus[ring.order[i]]).index;
    os << " " << label;
    if (last && h < ring.nets.size()) os << " > NET/" << g.node(ring.nets[h++].second).index;
  }
  return os.str().substr(1);
}

}  // namespace chorus::tools
