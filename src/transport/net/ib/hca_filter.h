// CHORUS_IB_HCA: which RDMA devices and ports the ib plugin uses, in NCCL_IB_HCA's syntax.
//   mlx5_0:1,mlx5_1     devices whose name starts with mlx5_0 (port 1 only) or mlx5_1 (any port)
//   =mlx5_0,mlx5_1      names must equal an entry (no prefix match): mlx5_10 is not mlx5_1
//   ^mlx5_1             every device except those the list matches; ^= combines both
// An empty value accepts every device and port.
#pragma once

#include <string>
#include <vector>

namespace chorus::netplugin::ib {

class HcaFilter {
 public:
  // Parses `text`; false with *why ("port 'x' of entry 'mlx5_0:x' is not a port number") when malformed.
  static bool parse(const std::string& text, HcaFilter* out, std::string* why);

  // Whether the plugin uses port `port` of device `name`.
  bool accepts(const std::string& name, int port) const;

  struct Entry {
    std::string name;  // a prefix of device names, or the whole name when exact
    int port = -1;     // -1: any port
  };
  bool exclude() const { return exclude_; }
  bool exact() const { return exact_; }
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  bool exclude_ = false;
  bool exact_ = false;
  std::vector<Entry> entries_;
};

}  // namespace chorus::netplugin::ib
