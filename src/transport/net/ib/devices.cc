#include "transport/net/ib/devices.h"

#include <limits.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>

#include "transport/net/ib/gdr.h"
#include "transport/net/ib/gid_select.h"
#include "transport/net/ib/wire.h"

namespace chorus::netplugin::ib {
namespace {

constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

std::string pciPathOf(const std::string& device) {
  char buf[PATH_MAX];
  std::string link = "/sys/class/infiniband/" + device + "/device";
  return realpath(link.c_str(), buf) != nullptr ? std::string(buf) : std::string();
}

const char* linkLayerName(uint8_t ll) {
  return ll == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand";
}

// The GID table of a port, as far as it answers.
std::vector<ibv_gid_entry> gidTable(const IbVerbs& v, ibv_context* ctx, uint8_t port, int len) {
  std::vector<ibv_gid_entry> table;
  for (int i = 0; i < len; ++i) {
    ibv_gid_entry e{};
    if (v.queryGidEntry(ctx, port, i, &e) == 0) table.push_back(e);
  }
  return table;
}

// Fills the port's addressing; false with *why (the port is skipped) when it has no usable GID.
bool addressPort(const IbVerbs& v, const ibv_port_attr& pa, int gidIndex, IbPort* p, std::string* why) {
  p->lid = pa.lid;
  p->mtu = static_cast<uint8_t>(pa.active_mtu);
  p->linkLayer = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
  if (p->linkLayer == IBV_LINK_LAYER_INFINIBAND && gidIndex < 0) return true;  // the LID routes
  std::vector<ibv_gid_entry> table = gidTable(v, p->dev->ctx, p->port, pa.gid_tbl_len);
  int index = selectGid(table, gidIndex, why);
  if (index < 0) return false;
  for (const ibv_gid_entry& e : table) {
    if (static_cast<int>(e.gid_index) == index) p->gid = e.gid;
  }
  p->gidIndex = index;
  return true;
}

}  // namespace

IbContext::~IbContext() {
  // The registrations go before the protection domain they belong to, and the domain before its device.
  mrs.reset();
  if (pd != nullptr) verbs->deallocPd(pd);
  if (ctx != nullptr) verbs->closeDevice(ctx);
}

int linkSpeedMbps(uint8_t activeSpeed, uint8_t activeWidth) {
  // Mbit/s per lane by speed code (SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR) and lanes by width code.
  static const struct {
    uint8_t code;
    int mbps;
  } speeds[] = {{1, 2500}, {2, 5000}, {4, 10000}, {8, 10000}, {16, 14000}, {32, 25000}, {64, 50000}, {128, 100000}};
  static const struct {
    uint8_t code;
    int lanes;
  } widths[] = {{1, 1}, {2, 4}, {4, 8}, {8, 12}, {16, 2}};
  int mbps = 2500, lanes = 1;
  for (const auto& s : speeds) {
    if (s.code == activeSpeed) mbps = s.mbps;
  }
  for (const auto& w : widths) {
    if (w.code == activeWidth) lanes = w.lanes;
  }
  return mbps * lanes;
}

chorusNetResult_t discoverPorts(const IbVerbs& v, const HcaFilter& filter, int gidIndex, const IbLog& log,
                                std::vector<std::unique_ptr<IbContext>>* contexts, std::vector<IbPort>* ports,
                                std::string* why) {
  errno = 0;
  int n = 0;
  ibv_device** list = v.getDeviceList(&n);
  if (list == nullptr) {
    *why = std::string("ibv_get_device_list: ") + strerror(errno != 0 ? errno : ENODEV);
    return chorusNetUnavailable;
  }
  std::string skipped;
  std::string gidProblem;
  for (int i = 0; i < n; ++i) {
    const std::string name = v.getDeviceName(list[i]);
    ibv_context* ctx = v.openDevice(list[i]);
    if (ctx == nullptr) {
      skipped += " " + name + " (cannot open: " + strerror(errno) + ")";
      continue;
    }
    auto dev = std::make_unique<IbContext>();
    dev->verbs = &v;
    dev->name = name;
    dev->ctx = ctx;
    if (v.queryDevice(ctx, &dev->attr) != 0) {
      skipped += " " + name + " (ibv_query_device failed)";
      continue;  // dev closes the device
    }
    std::vector<IbPort> found;
    for (int port = 1; port <= dev->attr.phys_port_cnt; ++port) {
      const std::string portName = name + ":" + std::to_string(port);
      if (!filter.accepts(name, port)) {
        skipped += " " + portName + " (CHORUS_IB_HCA)";
        continue;
      }
      ibv_port_attr pa{};
      if (v.queryPort(ctx, static_cast<uint8_t>(port), &pa) != 0) {
        skipped += " " + portName + " (ibv_query_port failed)";
        continue;
      }
      if (pa.state != IBV_PORT_ACTIVE) {
        skipped += " " + portName + " (not active)";
        continue;
      }
      if (pa.link_layer != IBV_LINK_LAYER_INFINIBAND && pa.link_layer != IBV_LINK_LAYER_ETHERNET &&
          pa.link_layer != IBV_LINK_LAYER_UNSPECIFIED) {
        skipped += " " + portName + " (link layer " + std::to_string(pa.link_layer) + ")";
        continue;
      }
      IbPort p;
      p.dev = dev.get();
      p.name = portName;
      p.port = static_cast<uint8_t>(port);
      p.speedMbps = linkSpeedMbps(pa.active_speed, pa.active_width);
      std::string reason;
      if (!addressPort(v, pa, gidIndex, &p, &reason)) {
        skipped += " " + portName + " (" + reason + ")";
        if (gidIndex >= 0) gidProblem = reason;
        continue;
      }
      found.push_back(p);
    }
    if (found.empty()) continue;  // dev closes the device
    dev->pd = v.allocPd(ctx);
    if (dev->pd == nullptr) {
      skipped += " " + name + " (ibv_alloc_pd: " + strerror(errno) + ")";
      continue;  // dev closes the device
    }
    dev->pciPath = pciPathOf(name);
    dev->dmabuf = dmabufUsable(v, dev->pd);
    const bool gdr = v.peermemLoaded() || dev->dmabuf;
    IbContext* raw = dev.get();
    dev->mrs = std::make_unique<MrCache>(
        [raw](uintptr_t start, size_t length, int type, std::string* why) {
          return registerMemory(*raw->verbs, raw->pd, raw->dmabuf, start, length, type, kAccess, why);
        },
        [raw](ibv_mr* mr) { return raw->verbs->deregMr(mr); });
    for (IbPort& p : found) {
      p.gdr = gdr;
      log(1, "ib: " + p.name + " " + linkLayerName(p.linkLayer) + " " + std::to_string(p.speedMbps / 1000) + " Gb/s" +
                 (p.gidIndex >= 0 ? ", GID index " + std::to_string(p.gidIndex) : "") +
                 (gdr ? ", GPUDirect RDMA" : "") + (dev->pciPath.empty() ? "" : " at " + dev->pciPath));
      ports->push_back(p);
    }
    contexts->push_back(std::move(dev));
  }
  v.freeDeviceList(list);
  if (!skipped.empty()) log(1, "ib: not used:" + skipped);
  if (!ports->empty()) return chorusNetSuccess;
  if (!gidProblem.empty()) {
    *why = gidProblem;
    return chorusNetInvalidArgument;
  }
  *why = n == 0 ? "no RDMA device (ibv_get_device_list found none)" : "no usable RDMA port:" + skipped;
  return chorusNetUnavailable;
}

chorusNetProperties_v1_t portProperties(const IbPort& p, int nqps) {
  chorusNetProperties_v1_t props{};
  props.name = p.name.c_str();
  props.pciPath = p.dev->pciPath.empty() ? nullptr : p.dev->pciPath.c_str();
  props.guid = p.dev->attr.node_guid ^ (static_cast<uint64_t>(p.port) << 56);
  props.ptrSupport = CHORUS_PTR_HOST | (p.gdr ? CHORUS_PTR_CUDA : 0);
  props.speed = p.speedMbps;
  props.port = p.port;
  props.latency = 0;
  props.maxComms = std::max(1, p.dev->attr.max_qp / std::max(1, nqps + 1));
  props.maxRecvs = 1;
  props.maxRequests = kMaxRequests;
  props.maxMessage = kMaxMessage;
  return props;
}

}  // namespace chorus::netplugin::ib
