// The RDMA devices and ports the ib plugin drives: found once at init through the verbs table, filtered by
// CHORUS_IB_HCA, each active port becoming one plugin device ("mlx5_0:1") with its GID chosen
// (CHORUS_IB_GID_INDEX) and its properties (net.h's chorusNetProperties_v1_t).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "transport/net/ib/hca_filter.h"
#include "transport/net/ib/mr_cache.h"
#include "transport/net/ib/verbs.h"
#include "transport/net/net.h"

namespace chorus::netplugin::ib {

// One opened RDMA device, shared by its ports: the context, one protection domain and its registration cache.
// It owns all three: destroying it deregisters what is left, frees the protection domain and closes the device
// (the plugin's state lives until exit, so a process that never closed its comms still gives everything back).
struct IbContext {
  IbContext() = default;
  ~IbContext();
  IbContext(const IbContext&) = delete;
  IbContext& operator=(const IbContext&) = delete;

  const IbVerbs* verbs = nullptr;
  std::string name;     // "mlx5_0"
  std::string pciPath;  // sysfs path of the PCI function, "" when unknown
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_device_attr attr{};
  bool dmabuf = false;  // GPU memory registers through dma-buf (gdr.h)
  std::unique_ptr<MrCache> mrs;
};

// One active port: a device of the plugin.
struct IbPort {
  IbContext* dev = nullptr;
  std::string name;  // "mlx5_0:1"
  uint8_t port = 0;
  uint8_t linkLayer = 0;  // IBV_LINK_LAYER_INFINIBAND or IBV_LINK_LAYER_ETHERNET (RoCE)
  uint16_t lid = 0;
  uint8_t mtu = 0;    // enum ibv_mtu (active MTU)
  int gidIndex = -1;  // the GID peers address this port by (RoCE; -1 on InfiniBand without a GID)
  ibv_gid gid{};
  int speedMbps = 0;
  bool gdr = false;  // GPU memory can be registered (nvidia-peermem, or dma-buf)
};

// Logging callback of discovery: level 0 warn, 1 info (net.h's chorusNetLogger_t levels).
using IbLog = std::function<void(int level, const std::string& message)>;

// Opens every device the filter accepts and collects its active ports (InfiniBand or Ethernet link layer).
// Returns chorusNetSuccess with at least one port, chorusNetUnavailable with *why when there is none (no
// device, a failing device list, every port down or filtered out), chorusNetInvalidArgument for a GID index
// that no accepted port has. Contexts are kept open for the life of the process.
chorusNetResult_t discoverPorts(const IbVerbs& verbs, const HcaFilter& filter, int gidIndex, const IbLog& log,
                                std::vector<std::unique_ptr<IbContext>>* contexts, std::vector<IbPort>* ports,
                                std::string* why);

// Properties of a port as net.h reports them (name and pciPath point into the port, which outlives them).
chorusNetProperties_v1_t portProperties(const IbPort& port, int nqps);

// The link speed in Mbit/s from ibv_port_attr's active_speed and active_width codes (IB specification).
int linkSpeedMbps(uint8_t activeSpeed, uint8_t activeWidth);

}  // namespace chorus::netplugin::ib
