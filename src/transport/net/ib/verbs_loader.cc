#include "transport/net/ib/verbs_loader.h"

#include <dlfcn.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

namespace chorus::netplugin::ib {
namespace {

// The symbols resolved at load (their addresses; the table entries below cast them).
void* gQueryPort = nullptr;   // ibv_query_port: the compat entry point, filling the old port attributes
void* gQueryGid = nullptr;    // ibv_query_gid
void* gQueryGidEx = nullptr;  // _ibv_query_gid_ex (rdma-core 32+; optional)

// rdma-core's ibv_query_port is an inline that calls the context's query_port op when the provider has one and
// the exported compat symbol otherwise. The compat symbol fills the fields every provider has (the ones the
// plugin reads), after a memset as the inline does.
int queryPort(ibv_context* context, uint8_t port, ibv_port_attr* attr) {
  memset(attr, 0, sizeof(*attr));
  using Fn = int (*)(ibv_context*, uint8_t, ibv_port_attr*);
  return reinterpret_cast<Fn>(gQueryPort)(context, port, attr);
}

// The GID's type from /sys/class/infiniband/<dev>/ports/<port>/gid_attrs/types/<index> ("IB/RoCE v1",
// "RoCE v2"), for rdma-core without ibv_query_gid_ex.
uint32_t gidTypeFromSysfs(ibv_context* context, uint8_t port, int index) {
  char path[256];
  snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u/gid_attrs/types/%d", context->device->name,
           static_cast<unsigned>(port), index);
  std::ifstream f(path);
  std::string text;
  std::getline(f, text);
  if (text.find("RoCE v2") != std::string::npos) return IBV_GID_TYPE_ROCE_V2;
  if (text.find("RoCE") != std::string::npos || text.find("v1") != std::string::npos) return IBV_GID_TYPE_ROCE_V1;
  return IBV_GID_TYPE_IB;
}

int queryGidEntry(ibv_context* context, uint8_t port, int index, ibv_gid_entry* entry) {
  memset(entry, 0, sizeof(*entry));
  if (gQueryGidEx != nullptr) {
    using Fn = int (*)(ibv_context*, uint32_t, uint32_t, ibv_gid_entry*, uint32_t, size_t);
    return reinterpret_cast<Fn>(gQueryGidEx)(context, port, static_cast<uint32_t>(index), entry, 0, sizeof(*entry));
  }
  using Fn = int (*)(ibv_context*, uint8_t, int, ibv_gid*);
  if (reinterpret_cast<Fn>(gQueryGid)(context, port, index, &entry->gid) != 0) return errno != 0 ? errno : EINVAL;
  entry->gid_index = static_cast<uint32_t>(index);
  entry->port_num = port;
  entry->gid_type = gidTypeFromSysfs(context, port, index);
  return 0;
}

// The inline verbs: calls through the context's ops, no symbol needed.
int postSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  return ibv_post_send(qp, wr, bad);
}
int postRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  return ibv_post_recv(qp, wr, bad);
}
int pollCq(ibv_cq* cq, int num, ibv_wc* wc) {
  return ibv_poll_cq(cq, num, wc);
}
int reqNotifyCq(ibv_cq* cq, int solicitedOnly) {
  return ibv_req_notify_cq(cq, solicitedOnly);
}

bool fileExists(const char* path) {
  std::ifstream f(path);
  return f.good();
}

// NCCL's test for GPUDirect RDMA through a peer-memory client: the nv_peer_mem module (MLNX_OFED) or the
// driver's nvidia-peermem.
bool peermemLoaded() {
  return fileExists("/sys/kernel/mm/memory_peers/nv_mem/version") ||
         fileExists("/sys/kernel/mm/memory_peers/nv_mem_nc/version") ||
         fileExists("/sys/module/nvidia_peermem/version");
}

template <typename Fn>
bool resolve(void* lib, const char* name, Fn* fn, std::string* why) {
  void* sym = dlsym(lib, name);
  if (sym == nullptr) {
    *why = std::string("libibverbs.so.1 lacks ") + name;
    return false;
  }
  *fn = reinterpret_cast<Fn>(sym);
  return true;
}

}  // namespace

bool loadSystemVerbs(IbVerbs* v, std::string* why) {
  *v = {};
  void* lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* e = dlerror();
    *why = std::string("cannot load rdma-core: ") + (e != nullptr ? e : "libibverbs.so.1 not found");
    return false;
  }
  bool ok =
      resolve(lib, "ibv_get_device_list", &v->getDeviceList, why) &&
      resolve(lib, "ibv_free_device_list", &v->freeDeviceList, why) &&
      resolve(lib, "ibv_get_device_name", &v->getDeviceName, why) &&
      resolve(lib, "ibv_open_device", &v->openDevice, why) && resolve(lib, "ibv_close_device", &v->closeDevice, why) &&
      resolve(lib, "ibv_query_device", &v->queryDevice, why) && resolve(lib, "ibv_query_port", &gQueryPort, why) &&
      resolve(lib, "ibv_query_gid", &gQueryGid, why) && resolve(lib, "ibv_alloc_pd", &v->allocPd, why) &&
      resolve(lib, "ibv_dealloc_pd", &v->deallocPd, why) && resolve(lib, "ibv_reg_mr", &v->regMr, why) &&
      resolve(lib, "ibv_dereg_mr", &v->deregMr, why) &&
      resolve(lib, "ibv_create_comp_channel", &v->createCompChannel, why) &&
      resolve(lib, "ibv_destroy_comp_channel", &v->destroyCompChannel, why) &&
      resolve(lib, "ibv_create_cq", &v->createCq, why) && resolve(lib, "ibv_destroy_cq", &v->destroyCq, why) &&
      resolve(lib, "ibv_get_cq_event", &v->getCqEvent, why) &&
      resolve(lib, "ibv_ack_cq_events", &v->ackCqEvents, why) && resolve(lib, "ibv_create_qp", &v->createQp, why) &&
      resolve(lib, "ibv_modify_qp", &v->modifyQp, why) && resolve(lib, "ibv_destroy_qp", &v->destroyQp, why) &&
      resolve(lib, "ibv_wc_status_str", &v->wcStatusStr, why);
  if (!ok) {
    dlclose(lib);
    *v = {};
    return false;
  }
  gQueryGidEx = dlsym(lib, "_ibv_query_gid_ex");
  v->regDmabufMr = reinterpret_cast<decltype(v->regDmabufMr)>(dlsym(lib, "ibv_reg_dmabuf_mr"));
  v->queryPort = queryPort;
  v->queryGidEntry = queryGidEntry;
  v->postSend = postSend;
  v->postRecv = postRecv;
  v->pollCq = pollCq;
  v->reqNotifyCq = reqNotifyCq;
  v->peermemLoaded = peermemLoaded;
  v->provider = "libibverbs.so.1";
  return true;
}

}  // namespace chorus::netplugin::ib
