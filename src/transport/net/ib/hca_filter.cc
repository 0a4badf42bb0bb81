#include "transport/net/ib/hca_filter.h"

#include <cstdlib>

namespace chorus::netplugin::ib {

bool HcaFilter::parse(const std::string& text, HcaFilter* out, std::string* why) {
  HcaFilter f;
  size_t at = 0;
  // NCCL's order: an exclusion mark, then an exactness mark.
  if (at < text.size() && text[at] == '^') f.exclude_ = true, ++at;
  if (at < text.size() && text[at] == '=') f.exact_ = true, ++at;
  while (at <= text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(at, end - at);
    at = end + 1;
    if (item.empty()) continue;
    Entry e;
    size_t colon = item.find(':');
    e.name = item.substr(0, colon);
    if (e.name.empty()) {
      *why = "entry '" + item + "' has no device name";
      return false;
    }
    if (colon != std::string::npos) {
      std::string port = item.substr(colon + 1);
      char* stop = nullptr;
      long p = port.empty() ? -1 : std::strtol(port.c_str(), &stop, 10);
      if (port.empty() || *stop != '\0' || p < 1 || p > 255) {
        *why = "port '" + port + "' of entry '" + item + "' is not a port number (1-255)";
        return false;
      }
      e.port = static_cast<int>(p);
    }
    f.entries_.push_back(e);
  }
  *out = f;
  return true;
}

bool HcaFilter::accepts(const std::string& name, int port) const {
  if (entries_.empty()) return true;
  bool listed = false;
  for (const Entry& e : entries_) {
    bool nameMatches = exact_ ? name == e.name : name.compare(0, e.name.size(), e.name) == 0;
    if (nameMatches && (e.port == -1 || e.port == port)) {
      listed = true;
      break;
    }
  }
  return listed != exclude_;
}

}  // namespace chorus::netplugin::ib
