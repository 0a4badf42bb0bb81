// The verbs the ib plugin uses, as a table of function pointers (NCCL's ibvwrap, mscclpp's ibverbs wrapper).
// Every verbs call of the plugin goes through an IbVerbs, never through rdma-core directly, for two reasons:
//  - the plugin builds and loads on a host without libibverbs.so.1: verbs_loader.cc fills the table with
//    dlopen/dlsym at init, and init reports chorusNetUnavailable with the reason when it cannot;
//  - tests fill the table with an in-process fake provider (tests/net/ib/fake_verbs.h), so that the protocol
//    runs and is checked on a machine without an RDMA device.
// The types are rdma-core's (infiniband/verbs.h); only the functions are indirect. ibv_post_send, ibv_post_recv,
// ibv_poll_cq and ibv_req_notify_cq are inline calls through the context's ops in rdma-core: the loader's
// entries call those inlines, which need no symbol.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

namespace chorus::netplugin::ib {

struct IbVerbs {
  // Devices and ports.
  ibv_device** (*getDeviceList)(int* num);
  void (*freeDeviceList)(ibv_device** list);
  const char* (*getDeviceName)(ibv_device* device);
  ibv_context* (*openDevice)(ibv_device* device);
  int (*closeDevice)(ibv_context* context);
  int (*queryDevice)(ibv_context* context, ibv_device_attr* attr);
  int (*queryPort)(ibv_context* context, uint8_t port, ibv_port_attr* attr);
  // One GID table entry with its type (IB, RoCE v1, RoCE v2): ibv_query_gid_ex where rdma-core has it, else
  // ibv_query_gid and the type from sysfs. Returns 0 or an errno value.
  int (*queryGidEntry)(ibv_context* context, uint8_t port, int index, ibv_gid_entry* entry);
  // Protection domains and memory.
  ibv_pd* (*allocPd)(ibv_context* context);
  int (*deallocPd)(ibv_pd* pd);
  ibv_mr* (*regMr)(ibv_pd* pd, void* addr, size_t length, int access);
  // NULL when rdma-core predates dma-buf registration (v34).
  ibv_mr* (*regDmabufMr)(ibv_pd* pd, uint64_t offset, size_t length, uint64_t iova, int fd, int access);
  int (*deregMr)(ibv_mr* mr);
  // Completion queues and their event channels.
  ibv_comp_channel* (*createCompChannel)(ibv_context* context);
  int (*destroyCompChannel)(ibv_comp_channel* channel);
  ibv_cq* (*createCq)(ibv_context* context, int cqe, void* cqContext, ibv_comp_channel* channel, int vector);
  int (*destroyCq)(ibv_cq* cq);
  int (*reqNotifyCq)(ibv_cq* cq, int solicitedOnly);
  int (*getCqEvent)(ibv_comp_channel* channel, ibv_cq** cq, void** cqContext);
  void (*ackCqEvents)(ibv_cq* cq, unsigned int nevents);
  int (*pollCq)(ibv_cq* cq, int num, ibv_wc* wc);
  // Queue pairs and work requests.
  ibv_qp* (*createQp)(ibv_pd* pd, ibv_qp_init_attr* attr);
  int (*modifyQp)(ibv_qp* qp, ibv_qp_attr* attr, int mask);
  int (*destroyQp)(ibv_qp* qp);
  int (*postSend)(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
  int (*postRecv)(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);
  const char* (*wcStatusStr)(ibv_wc_status status);
  // Whether GPU memory registers with regMr directly on this host (nvidia-peermem or the older nv_peer_mem
  // module is loaded); the dma-buf path is probed separately (gdr.h).
  bool (*peermemLoaded)();
  const char* provider;  // "libibverbs.so.1", or the fake's name in tests
};

}  // namespace chorus::netplugin::ib
