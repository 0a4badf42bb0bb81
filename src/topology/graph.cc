#include "topology/graph.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <tuple>

#include "topology/pci_class.h"

namespace chorus::topology {

const char* nodeTypeName(NodeType t) {
  static const char* kNames[] = {"GPU", "PCI", "NVS", "CPU", "NIC", "NET"};
  return kNames[static_cast<int>(t)];
}

const char* linkTypeName(LinkType t) {
  static const char* kNames[] = {"LOC", "NVL", "C2C", "PCI", "SYS", "NET"};
  return kNames[static_cast<int>(t)];
}

static const char* const kPathNames[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                         "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};

const char* pathTypeName(PathType t) {
  return kPathNames[static_cast<int>(t)];
}

bool parsePathType(const std::string& name, PathType* type) {
  for (int i = 0; i <= static_cast<int>(PathType::kDis); ++i) {
    if (name == kPathNames[i]) {
      *type = static_cast<PathType>(i);
      return true;
    }
  }
  return false;
}

int Graph::addNode(Node node) {
  nodes_.push_back(std::move(node));
  return size() - 1;
}

void Graph::connect(int from, int to, LinkType type, double bw) {
  for (Link& l : nodes_[from].links) {
    if (l.to == to && l.type == type) {
      l.bw += bw;
      return;
    }
  }
  nodes_[from].links.push_back(Link{type, to, bw});
}

std::vector<int> Graph::ofType(NodeType type) const {
  std::vector<int> out;
  for (int i = 0; i < size(); ++i)
    if (nodes_[i].type == type) out.push_back(i);
  std::sort(out.begin(), out.end(), [&](int a, int b) {
    const Node& x = nodes_[a];
    const Node& y = nodes_[b];
    return std::tie(x.host, x.index, x.busId, a) < std::tie(y.host, y.index, y.busId, b);
  });
  return out;
}

int Graph::findByBusId(int host, int64_t busId) const {
  for (int i = 0; i < size(); ++i)
    if (nodes_[i].host == host && nodes_[i].busId == busId && nodes_[i].type != NodeType::kNet) return i;
  return -1;
}

int Graph::findByIndex(NodeType type, int host, int index) const {
  for (int i = 0; i < size(); ++i)
    if (nodes_[i].type == type && nodes_[i].host == host && nodes_[i].index == index) return i;
  return -1;
}

int Graph::localCpu(int node) const {
  std::vector<bool> seen(nodes_.size());
  int cur = node;
  // PCI trees are trees: follow PCI links until a CPU; the first PCI link of a node is towards its parent, but
  // do not rely on it and search breadth-first through PCI switches only.
  std::vector<int> frontier{cur};
  seen[cur] = true;
  while (!frontier.empty()) {
    std::vector<int> next;
    for (int n : frontier) {
      if (nodes_[n].type == NodeType::kCpu) return n;
      if (n != node && nodes_[n].type != NodeType::kPci) continue;
      for (const Link& l : nodes_[n].links) {
        if (l.type != LinkType::kPci || seen[l.to]) continue;
        seen[l.to] = true;
        next.push_back(l.to);
      }
    }
    frontier = std::move(next);
  }
  return -1;
}

int Graph::parentSwitch(int node) const {
  // A device's first PCI link goes to its parent (the builder links a node to its parent when it creates it).
  for (const Link& l : nodes_[node].links)
    if (l.type == LinkType::kPci) return nodes_[l.to].type == NodeType::kPci ? l.to : -1;
  return -1;
}

bool Graph::isClassOnlyDevice(int node) const {
  const Node& n = nodes_[node];
  PciKind kind = pciKind(n.pciClass);
  return n.type == NodeType::kPci && kind != PciKind::kBridge && kind != PciKind::kUnknown;
}

int Graph::hostIndex(uint64_t hash) {
  for (size_t i = 0; i < hostHashes_.size(); ++i)
    if (hostHashes_[i] == hash) return static_cast<int>(i);
  hostHashes_.push_back(hash);
  return static_cast<int>(hostHashes_.size()) - 1;
}

std::string Graph::label(int i) const {
  const Node& n = nodes_[i];
  std::ostringstream os;
  os << nodeTypeName(n.type);
  if (hostHashes_.size() > 1) os << "@" << n.host;
  switch (n.type) {
    case NodeType::kGpu: os << "/" << n.index << " (" << formatBusId(n.busId) << ")"; break;
    case NodeType::kCpu: os << "/" << n.index; break;
    case NodeType::kNet: os << "/" << n.index << " (" << n.name << ")"; break;
    case NodeType::kNvs: break;
    default:
      os << " " << formatBusId(n.busId);
      if (isClassOnlyDevice(i))
        os << " (" << pciKindName(pciKind(n.pciClass)) << ", class " << formatPciClass(n.pciClass) << ")";
  }
  return os.str();
}

std::string Graph::canonical() const {
  // Nodes are named by type, host and id so that two graphs built in different orders compare equal.
  auto key = [&](int i) {
    const Node& n = nodes_[i];
    std::ostringstream os;
    os << nodeTypeName(n.type) << "@" << hostHashes_[n.host] << ":" << n.index << ":" << n.busId;
    return os.str();
  };
  std::vector<std::string> lines;
  for (int i = 0; i < size(); ++i) {
    const Node& n = nodes_[i];
    std::ostringstream os;
    os << key(i) << " rank=" << n.rank << " sm=" << n.sm << " gdr=" << n.gdr << " class=" << n.pciClass
       << " name=" << n.name;
    lines.push_back(os.str());
    for (const Link& l : n.links) {
      std::ostringstream ls;
      ls.setf(std::ios::fixed);
      ls.precision(3);
      ls << key(i) << " -" << linkTypeName(l.type) << "-> " << key(l.to) << " " << l.bw;
      lines.push_back(ls.str());
    }
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

bool parseBusId(const std::string& text, int64_t* id) {
  int64_t v = 0;
  int digits = 0;
  for (char c : text) {
    if (c == ':' || c == '.') continue;
    if (!std::isxdigit(static_cast<unsigned char>(c)) || ++digits > 15) return false;
    v = v * 16 + (std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10);
  }
  if (digits == 0) return false;
  *id = v;
  return true;
}

std::string formatBusId(int64_t id) {
  if (id < 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04llx:%02llx:%02llx.%llx", static_cast<unsigned long long>(id >> 20),
                static_cast<unsigned long long>((id >> 12) & 0xff), static_cast<unsigned long long>((id >> 4) & 0xff),
                static_cast<unsigned long long>(id & 0xf));
  return buf;
}

}  // namespace chorus::topology
