#include <climits>
#include <cstdlib>
#include <fstream>
#include <regex>

#include "base/logging.h"
#include "topology/detect.h"

namespace chorus::topology {
namespace detail {

std::string readSysfs(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

std::string normalizeBusId(const std::string& busId) {
  std::string s;
  for (char c : busId) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // NVML writes an 8-digit domain; sysfs and NCCL use 4.
  size_t colon = s.find(':');
  if (colon != std::string::npos && colon > 4) s = s.substr(colon - 4);
  return s;
}

std::vector<std::string> pciChain(const std::string& busId) {
  static const std::regex kBdf("[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-9a-f]");
  std::string link = "/sys/bus/pci/devices/" + busId;
  char buf[PATH_MAX];
  if (realpath(link.c_str(), buf) == nullptr) return {};
  std::vector<std::string> chain;
  std::string path = buf;
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    if (std::regex_match(part, kBdf)) chain.push_back(part);
    start = end + 1;
  }
  // As NCCL's ncclTopoGetXmlFromSys: going up from the device, skip every other level (the downstream port of
  // a switch, and the root port), so each PCI switch is one element and devices on one switch are PIX.
  std::vector<std::string> kept;
  for (int i = static_cast<int>(chain.size()) - 1; i >= 0; i -= 2) kept.insert(kept.begin(), chain[i]);
  return kept;
}

XmlBuilder::XmlBuilder() {
  system_.name = "system";
  system_.set("version", "1");
}

XmlElement& XmlBuilder::cpu(int numa) {
  for (auto& c : system_.children)
    if (c.name == "cpu" && c.attr("numaid") && *c.attr("numaid") == std::to_string(numa)) return c;
  XmlElement& c = system_.add("cpu");
  c.set("numaid", std::to_string(numa));
  return c;
}

XmlElement* XmlBuilder::pci(const std::string& busId) {
  std::vector<std::string> chain = pciChain(busId);
  if (chain.empty()) return nullptr;
  std::string dev = "/sys/bus/pci/devices/" + busId;
  int numa = std::atoi(readSysfs(dev + "/numa_node").c_str());
  if (numa < 0) numa = 0;
  XmlElement* parent = &cpu(numa);
  for (const std::string& id : chain) {
    XmlElement* found = nullptr;
    for (auto& c : parent->children)
      if (c.name == "pci" && c.attr("busid") && *c.attr("busid") == id) found = &c;
    if (found == nullptr) {
      std::string d = "/sys/bus/pci/devices/" + id;
      found = &parent->add("pci");
      found->set("busid", id);
      std::string cls = readSysfs(d + "/class");
      found->set("class", cls.empty() ? "0x060400" : cls);
      found->set("vendor", readSysfs(d + "/vendor"));
      found->set("device", readSysfs(d + "/device"));
      found->set("subsystem_vendor", readSysfs(d + "/subsystem_vendor"));
      found->set("subsystem_device", readSysfs(d + "/subsystem_device"));
      std::string speed = readSysfs(d + "/max_link_speed");
      if (speed.empty()) speed = readSysfs(d + "/current_link_speed");
      std::string width = readSysfs(d + "/max_link_width");
      if (width.empty()) width = readSysfs(d + "/current_link_width");
      found->set("link_speed", speed);
      // Virtual devices report "Unknown" speeds and widths such as 255: leave them to the builder's defaults.
      int w = std::atoi(width.c_str());
      found->set("link_width", std::to_string(w > 0 && w <= 32 ? w : 0));
    }
    parent = found;
  }
  return parent;
}

}  // namespace detail
}  // namespace chorus::topology
