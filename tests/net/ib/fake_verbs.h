// A fake verbs provider for the ib plugin's tests: devices, ports, protection domains, memory regions,
// completion queues with event channels, and RC queue pairs, all inside this process, behind the same table
// (transport/net/ib/verbs.h) that rdma-core fills in the real plugin. It lets the plugin's protocol run, and be
// checked, on a machine without an RDMA device.
//
// What it emulates, and how strictly:
//  - QPs move RESET -> INIT -> RTR -> RTS with the attributes and masks the verbs API requires; RTR checks the
//    path MTU against the port, and the address (a GID of the port on RoCE, a LID on InfiniBand).
//  - A "wire" thread executes posted send work requests asynchronously, one at a time, choosing among the QPs
//    with work at random (seeded), so that the stripes of one message complete in varying order, as on a
//    fabric. Per QP, requests run in posting order and consume the responder's receives in order (RC).
//  - RDMA WRITE (WITH IMM): the target QP must exist, be connected to the requester and be in RTR or RTS, and
//    the requester's address vector must name the target's port; the local SGEs must lie in local MRs of the
//    QP's PD and the remote range in an MR of the target's PD with remote write access, else the requester
//    gets IBV_WC_REM_ACCESS_ERR / IBV_WC_LOC_PROT_ERR and both QPs go to the error state. The payload is copied
//    (memcpy) into the remote MR; WITH IMM consumes a posted receive and completes it on the remote CQ with the
//    immediate (IBV_WC_RECV_RDMA_WITH_IMM). No posted receive: the request waits (receiver-not-ready retries).
//  - SEND/RECV (the plugin's clear-to-send), inline data copied at post time; RDMA READ (the GPU flush).
//  - A target QP that is gone or in the error state never answers: the requester completes with
//    IBV_WC_RETRY_EXC_ERR at once (a real HCA first retries for timeout * retry_cnt).
//  - Send-queue slots: a work request holds its slot until its completion, or a later signaled one's, has been
//    polled; posting beyond max_send_wr / max_recv_wr fails with ENOMEM, as on hardware.
//  - A CQ holds at most the cqe it was created with; one more completion is an overrun: ibv_poll_cq then fails.
//  - Completion events: ibv_req_notify_cq arms a CQ for the next completion (solicited-only: the next receive of
//    a message sent with IBV_SEND_SOLICITED, or any error); the channel's fd becomes readable with each event;
//    ibv_destroy_cq with events not acknowledged fails (rdma-core would wait forever) and is recorded.
//  - A QP moved to the error state (by the plugin, by moveToError, or by a failed request) completes every
//    outstanding work request, signaled or not, with IBV_WC_WR_FLUSH_ERR.
//  - Misuses the verbs API would not report but that are bugs (a CQ overrun, destroying a CQ with
//    unacknowledged events, acknowledging more events than were delivered) are collected: violations().
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "transport/net/ib/verbs.h"

namespace chorus::ibfake {

struct FakePort {
  uint8_t linkLayer = IBV_LINK_LAYER_ETHERNET;
  ibv_port_state state = IBV_PORT_ACTIVE;
  uint16_t lid = 0;
  ibv_mtu mtu = IBV_MTU_4096;
  std::vector<ibv_gid_entry> gids;  // the GID table (type and GID; index and port are filled in)
};

struct FakeDevice {
  std::string name;
  std::vector<FakePort> ports;
};

// The verbs table of the fake provider.
const netplugin::ib::IbVerbs& fakeVerbs();

// The devices ibv_get_device_list reports. By default: "fake_0", one active RoCE port whose GID table is a
// ConnectX's (link-local RoCE v1 and v2, then ::ffff:10.0.0.1 as v1 and v2); "fake_1", port 1 an active
// InfiniBand port (LID 7), port 2 down. Call before opening devices.
void setDevices(const std::vector<FakeDevice>& devices);
std::vector<FakeDevice> defaultDevices();
// Makes ibv_get_device_list fail with `err` (0: succeed), as without kernel support (ENOSYS).
void setDeviceListErrno(int err);
// What peermemLoaded() answers (false by default): true lets tests register "GPU" memory (host memory in
// fact) and run the GPU flush.
void setPeermem(bool loaded);

// Counts of verbs calls and traffic since the start.
struct Counters {
  uint64_t regMr = 0;
  uint64_t deregMr = 0;
  uint64_t writesWithImm = 0;
  uint64_t sends = 0;
  uint64_t reads = 0;
};
Counters counters();
// The QP numbers that exist, in creation order.
std::vector<uint32_t> liveQps();
// The QP a QP is connected to (its RTR destination), 0 if none or it does not exist.
uint32_t remoteOf(uint32_t qpn);
// Payload bytes QP `qpn` has written (RDMA WRITE) so far.
uint64_t bytesWritten(uint32_t qpn);
// Moves QP `qpn` to the error state, as a fatal transport error would: its outstanding work requests complete
// with IBV_WC_WR_FLUSH_ERR, and requesters that target it later get IBV_WC_RETRY_EXC_ERR.
void moveToError(uint32_t qpn);
// Misuses seen so far (empty when none).
std::vector<std::string> violations();

}  // namespace chorus::ibfake
