#include "transport/net/ib/data_path.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "transport/net/ib/comm.h"

namespace chorus::netplugin::ib {
namespace {

constexpr int kPollBatch = 16;

chorusNetResult_t brokenError(const Comm* c) {
  return fail(c->broken, "%s", c->brokenWhy.c_str());
}

std::string format(const char* fmt, unsigned long long a, unsigned long long b) {
  char buf[160];
  snprintf(buf, sizeof(buf), fmt, a, b);
  return buf;
}

void finishOne(Request* r) {
  if (++r->got >= r->expected) r->done = true;
}

void failRequest(Comm* c, Request* r, chorusNetResult_t code, const std::string& why) {
  r->error = code;
  r->why = why;
  c->breakWith(code, why);
}

const char* what(WrKind kind) {
  switch (kind) {
    case WrKind::kCtsRecv: return "receiving a clear-to-send";
    case WrKind::kCtsSend: return "sending a clear-to-send";
    case WrKind::kDataWrite: return "an RDMA write";
    case WrKind::kDataRecv: return "receiving an RDMA write";
    case WrKind::kFlushRead: return "the GPU flush read";
  }
  return "a work request";
}

// A receive's stripe arrived: its immediate is the message's size or the sender's error.
void stripeArrived(Comm* c, Request* r, const ibv_wc& wc) {
  if ((wc.wc_flags & IBV_WC_WITH_IMM) == 0) {
    return failRequest(c, r, chorusNetProtocolError, "ib plugin: a write without immediate data reached a receive");
  }
  const uint32_t imm = ntohl(wc.imm_data);
  if ((imm & kImmError) != 0) {
    std::string why = (imm & kImmTruncated) != 0
                          ? format("ib plugin: a message of %llu bytes is larger than its receive of %llu bytes",
                                   imm & (kImmTruncated - 1), r->size)
                          : format("ib plugin: a message with tag %llu reached a receive with tag %llu",
                                   imm & (CHORUS_NET_MAX_TAG - 1), r->tag);
    return failRequest(c, r, chorusNetProtocolError, why);
  }
  if (!r->sizeKnown) {
    if (imm > r->size) {
      return failRequest(c, r, chorusNetProtocolError,
                         format("ib plugin: a write announced %llu bytes to a receive of %llu", imm, r->size));
    }
    r->size = imm;
    r->sizeKnown = true;
  } else if (imm != r->size) {
    return failRequest(c, r, chorusNetProtocolError,
                       format("ib plugin: the stripes of one message announced %llu and %llu bytes", r->size, imm));
  }
  finishOne(r);
}

void ctsArrived(Comm* c, uint64_t index, const ibv_wc& wc) {
  if (!c->send || index >= static_cast<uint64_t>(kMaxRequests) || wc.byte_len != sizeof(Cts)) {
    c->breakWith(chorusNetProtocolError, "ib plugin: a malformed clear-to-send");
    return;
  }
  Cts cts = c->cts[index];
  if (cts.seq != c->ctsExpected) {
    c->breakWith(chorusNetProtocolError,
                 format("ib plugin: clear-to-send %llu arrived where %llu was due", cts.seq, c->ctsExpected));
    return;
  }
  ++c->ctsExpected;
  c->ctsReady.push_back(cts);
  std::string why;
  if (!postCtsRecv(c, index, &why)) c->breakWith(chorusNetSystemError, "ib plugin: " + why);
}

void handle(Comm* c, const ibv_wc& wc) {
  const WrKind kind = wrKind(wc.wr_id);
  const uint64_t value = wrValue(wc.wr_id);
  if (wc.status != IBV_WC_SUCCESS) {
    std::string why = std::string("ib plugin: ") + what(kind) + " on " + c->port->name +
                      " failed: " + c->v->wcStatusStr(wc.status) + " (status " + std::to_string(wc.status) +
                      ", vendor error " + std::to_string(wc.vendor_err) + ")";
    if (wc.status == IBV_WC_WR_FLUSH_ERR) why += ": the queue pair is in the error state";
    if (wc.status == IBV_WC_RETRY_EXC_ERR) why += ": the peer does not answer";
    c->breakWith(chorusNetRemoteError, why);
    return;
  }
  switch (kind) {
    case WrKind::kCtsRecv: return ctsArrived(c, value, wc);
    case WrKind::kCtsSend: c->ctsRetired = std::max(c->ctsRetired, value + 1); return;
    case WrKind::kDataWrite:
      if (value < static_cast<uint64_t>(kMaxRequests) && c->reqs[value].used) finishOne(&c->reqs[value]);
      return;
    case WrKind::kDataRecv:
      if (value < static_cast<uint64_t>(kMaxRequests) && c->reqs[value].used) stripeArrived(c, &c->reqs[value], wc);
      return;
    case WrKind::kFlushRead:
      if (value < static_cast<uint64_t>(kMaxFlushes) && c->flushes[value].used) finishOne(&c->flushes[value]);
      return;
  }
  c->breakWith(chorusNetProtocolError, "ib plugin: a completion of an unknown work request");
}

void pollAll(Comm* c) {
  ibv_wc wc[kPollBatch];
  for (;;) {
    int n = c->v->pollCq(c->cq, kPollBatch, wc);
    if (n < 0) {
      c->breakWith(chorusNetSystemError, "ib plugin: ibv_poll_cq failed on " + c->port->name);
      return;
    }
    for (int i = 0; i < n; ++i) handle(c, wc[i]);
    if (n < kPollBatch) return;
  }
}

// The sender's matching: each Cts (in order) with the next isend, and the RDMA writes of that message.
void matchSends(Comm* c) {
  while (!c->ctsReady.empty() && !c->unsent.empty() && c->broken == chorusNetSuccess) {
    const Cts cts = c->ctsReady.front();
    Request* r = c->unsent.front();
    c->ctsReady.pop_front();
    c->unsent.pop_front();
    const auto nqps = static_cast<uint32_t>(c->qps.size());
    if (cts.seq != r->seq || cts.nqps == 0 || cts.nqps > nqps || cts.firstQp >= nqps) {
      return failRequest(c, r, chorusNetProtocolError, "ib plugin: a clear-to-send that does not fit the connection");
    }
    uint32_t imm = immSize(r->size);
    std::string why;
    if (cts.tag != r->tag) {
      imm = immTagMismatch(r->tag);
      why = format("ib plugin: a message with tag %llu reached a receive with tag %llu", r->tag, cts.tag);
    } else if (r->size > cts.capacity) {
      imm = immTruncated(r->size);
      why =
          format("ib plugin: a message of %llu bytes is larger than its receive of %llu bytes", r->size, cts.capacity);
    }
    // A mismatch still writes (no payload) on every QP the receive waits on, so that the receive fails with
    // the reason instead of waiting.
    const uint64_t payload = why.empty() ? r->size : 0;
    r->expected = cts.nqps;
    for (uint32_t i = 0; i < cts.nqps; ++i) {
      uint64_t lo, hi;
      stripe(payload, cts.nqps, i, &lo, &hi);
      ibv_sge sge{};
      sge.addr = reinterpret_cast<uintptr_t>(r->data) + lo;
      sge.length = static_cast<uint32_t>(hi - lo);
      sge.lkey = r->mr->lkey();
      ibv_send_wr wr{};
      wr.wr_id = wrId(WrKind::kDataWrite, static_cast<uint64_t>(r - c->reqs));
      wr.sg_list = hi > lo ? &sge : nullptr;
      wr.num_sge = hi > lo ? 1 : 0;
      wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
      wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
      wr.imm_data = htonl(imm);
      wr.wr.rdma.remote_addr = cts.addr + lo;
      wr.wr.rdma.rkey = cts.rkey;
      ibv_send_wr* bad = nullptr;
      int err = c->v->postSend(c->qps[(cts.firstQp + i) % nqps], &wr, &bad);
      if (err != 0) {
        return failRequest(c, r, chorusNetSystemError, std::string("ib plugin: ibv_post_send: ") + strerror(err));
      }
    }
    if (!why.empty()) failRequest(c, r, chorusNetProtocolError, why);
  }
}

// Everything a call on `c` does before it looks at its request: take the channel's events, poll the CQ, arm it
// again (then poll once more, for what completed before it was armed), and start the sends whose Cts came.
void progress(Comm* c) {
  ibv_cq* cq = nullptr;
  void* ctx = nullptr;
  while (c->v->getCqEvent(c->channel, &cq, &ctx) == 0) {
    ++c->unackedEvents;
    c->armed = false;
  }
  if (c->unackedEvents >= 64) {  // acknowledging takes a lock in rdma-core: in batches
    c->v->ackCqEvents(c->cq, c->unackedEvents);
    c->unackedEvents = 0;
  }
  pollAll(c);
  if (!c->armed && c->broken == chorusNetSuccess) {
    // A receiver waits for the sender's writes, which ask for a solicited event; its own Cts sends need no
    // wake-up. Errors raise an event either way. A sender, or a receiver with a flush read out, waits for
    // its own completions.
    const int solicitedOnly = !c->send && c->flushesOutstanding == 0 ? 1 : 0;
    int err = c->v->reqNotifyCq(c->cq, solicitedOnly);
    if (err != 0) {
      c->breakWith(chorusNetSystemError, std::string("ib plugin: ibv_req_notify_cq: ") + strerror(err));
      return;
    }
    c->armed = true;
    pollAll(c);
  }
  if (c->send) matchSends(c);
}

// Posts the receive work requests of `r` and its Cts.
void postReceive(Comm* c, Request* r) {
  const auto nqps = static_cast<uint32_t>(c->qps.size());
  const uint32_t n = qpsForReceive(r->size, nqps);
  const uint32_t first = c->qpCursor;
  c->qpCursor = (c->qpCursor + n) % nqps;
  const uint64_t slot = static_cast<uint64_t>(r - c->reqs);
  r->expected = n;
  for (uint32_t i = 0; i < n; ++i) {
    ibv_recv_wr wr{};
    wr.wr_id = wrId(WrKind::kDataRecv, slot);
    ibv_recv_wr* bad = nullptr;
    int err = c->v->postRecv(c->qps[(first + i) % nqps], &wr, &bad);
    if (err != 0) {
      return failRequest(c, r, chorusNetSystemError, std::string("ib plugin: ibv_post_recv: ") + strerror(err));
    }
  }
  Cts& cts = c->cts[slot];
  cts = {};
  cts.seq = r->seq;
  cts.addr = reinterpret_cast<uintptr_t>(r->data);
  cts.capacity = r->size;
  cts.rkey = r->mr->rkey();
  cts.tag = r->tag;
  cts.firstQp = static_cast<uint16_t>(first);
  cts.nqps = static_cast<uint16_t>(n);
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uintptr_t>(&cts);
  sge.length = sizeof(Cts);
  sge.lkey = c->ctsMr->lkey;
  ibv_send_wr wr{};
  wr.wr_id = wrId(WrKind::kCtsSend, c->ctsPosted);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  // Unsignaled sends hold their send-queue slots until a later signaled one completes.
  wr.send_flags = (c->inlineCts ? IBV_SEND_INLINE : 0) |
                  (c->ctsPosted % kCtsSignalEvery == kCtsSignalEvery - 1 ? IBV_SEND_SIGNALED : 0);
  ibv_send_wr* bad = nullptr;
  int err = c->v->postSend(c->qps[0], &wr, &bad);
  if (err != 0) {
    return failRequest(c, r, chorusNetSystemError, std::string("ib plugin: ibv_post_send (Cts): ") + strerror(err));
  }
  ++c->ctsPosted;
}

// The request of a registered buffer, checked as net.h asks: a registration of this comm's device that covers
// it, a tag in range, a size the immediate can carry.
chorusNetResult_t checkBuffer(const Comm* c, const void* data, size_t size, void* mhandle) {
  auto* h = static_cast<const MrHandle*>(mhandle);
  if (h == nullptr || h->magic != MrHandle::kMrMagic || h->dev != c->port->dev || !h->covers(data, size)) {
    return fail(chorusNetInvalidArgument, "ib plugin: the buffer is not inside memory registered on %s",
                c->port->name.c_str());
  }
  return chorusNetSuccess;
}

chorusNetResult_t post(bool isSend, void* comm, void* data, size_t size, int tag, void* mhandle, void** request) {
  *request = nullptr;
  auto* c = static_cast<Comm*>(comm);
  if (c->send != isSend)
    return fail(chorusNetInvalidArgument, "ib plugin: %s on a comm of the other direction", isSend ? "isend" : "irecv");
  if (c->broken != chorusNetSuccess) return brokenError(c);
  if (chorusNetResult_t r = checkBuffer(c, data, size, mhandle); r != chorusNetSuccess) return r;
  if (tag < 0 || tag >= CHORUS_NET_MAX_TAG) return fail(chorusNetInvalidArgument, "tag %d out of range", tag);
  if (size > kMaxMessage) {
    return fail(chorusNetInvalidArgument, "ib plugin: %zu bytes is above the largest message (%llu)", size,
                static_cast<unsigned long long>(kMaxMessage));
  }
  if (c->outstanding >= kMaxRequests) return chorusNetSuccess;  // no room: call again
  if (!isSend && c->ctsPosted - c->ctsRetired >= 2 * kMaxRequests - kCtsSignalEvery) {
    progress(c);  // the send queue holds Cts sends not known complete yet
    if (c->ctsPosted - c->ctsRetired >= 2 * kMaxRequests - kCtsSignalEvery) return chorusNetSuccess;
  }
  Request* r = nullptr;
  for (Request& slot : c->reqs) {
    if (!slot.used) {
      r = &slot;
      break;
    }
  }
  *r = Request{};
  r->comm = c;
  r->used = true;
  r->seq = c->posted++;
  r->data = static_cast<char*>(data);
  r->size = size;
  r->tag = static_cast<uint32_t>(tag);
  r->mr = static_cast<const MrHandle*>(mhandle);
  ++c->outstanding;
  *request = r;
  if (isSend) {
    c->unsent.push_back(r);
    matchSends(c);
  } else {
    postReceive(c, r);
  }
  return chorusNetSuccess;
}

void release(Comm* c, Request* r) {
  r->used = false;
  if (r >= c->flushes && r < c->flushes + kMaxFlushes) {
    --c->flushesOutstanding;
  } else {
    --c->outstanding;
  }
}

// What test() reports for a request whose state is known: its error, or its completion (and frees it).
chorusNetResult_t reportIfFinished(Comm* c, Request* r, int* done, size_t* size) {
  if (r->error != chorusNetSuccess) return fail(r->error, "%s", r->why.c_str());
  if (r->done) {
    *done = 1;
    if (size != nullptr) *size = r->size;
    release(c, r);
  }
  return chorusNetSuccess;
}

}  // namespace

chorusNetResult_t ibIsend(void* comm, void* data, size_t size, int tag, void* mhandle, void** request) {
  return post(true, comm, data, size, tag, mhandle, request);
}

chorusNetResult_t ibIrecv(void* comm, void* data, size_t size, int tag, void* mhandle, void** request) {
  return post(false, comm, data, size, tag, mhandle, request);
}

chorusNetResult_t ibIflush(void* comm, void* data, size_t size, void* mhandle, void** request) {
  *request = nullptr;
  auto* c = static_cast<Comm*>(comm);
  auto* h = static_cast<const MrHandle*>(mhandle);
  // Only GPU memory written by the HCA needs a flush; host memory is coherent.
  if (size == 0 || h == nullptr || h->type != CHORUS_PTR_CUDA || c->flushQp == nullptr) return chorusNetSuccess;
  if (c->broken != chorusNetSuccess) return brokenError(c);
  if (chorusNetResult_t r = checkBuffer(c, data, size, mhandle); r != chorusNetSuccess) return r;
  Request* r = nullptr;
  for (Request& slot : c->flushes) {
    if (!slot.used) {
      r = &slot;
      break;
    }
  }
  if (r == nullptr) return fail(chorusNetInvalidArgument, "ib plugin: more than %d flushes outstanding", kMaxFlushes);
  *r = Request{};
  r->comm = c;
  r->used = true;
  r->expected = 1;
  // Reading one byte of the buffer through the HCA orders it after the HCA's earlier writes to the GPU
  // (NCCL's flush): once the read completes, the data is visible to the device.
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uintptr_t>(c->flushScratch.get());
  sge.length = 1;
  sge.lkey = c->flushMr->lkey;
  ibv_send_wr wr{};
  wr.wr_id = wrId(WrKind::kFlushRead, static_cast<uint64_t>(r - c->flushes));
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(data);
  wr.wr.rdma.rkey = h->rkey();
  ibv_send_wr* bad = nullptr;
  int err = c->v->postSend(c->flushQp, &wr, &bad);
  if (err != 0) {
    r->used = false;
    return fail(c->breakWith(chorusNetSystemError, std::string("ib plugin: ibv_post_send (flush): ") + strerror(err)),
                "%s", c->brokenWhy.c_str());
  }
  ++c->flushesOutstanding;
  c->armed = false;  // re-arm for every completion, not only solicited ones
  *request = r;
  return chorusNetSuccess;
}

chorusNetResult_t ibTest(void* request, int* done, size_t* size) {
  *done = 0;
  auto* r = static_cast<Request*>(request);
  if (r == nullptr || !r->used || r->comm == nullptr) {
    return fail(chorusNetInvalidArgument, "ib plugin: test() of a request that is not outstanding");
  }
  Comm* c = r->comm;
  progress(c);
  if (r->error != chorusNetSuccess || r->done) return reportIfFinished(c, r, done, size);
  if (c->broken != chorusNetSuccess) return brokenError(c);
  // The peer never writes to the setup socket after setup: readable means its end-of-file, the process gone.
  // A look costs a system call, so a request tested in a tight loop looks once a millisecond.
  const auto now = std::chrono::steady_clock::now();
  if (now < c->nextPeerCheck) return chorusNetSuccess;
  c->nextPeerCheck = now + std::chrono::milliseconds(1);
  if (peerGone(c->fd)) {
    // A sender's last writes are in our CQ before its send completed, so before it could close; poll once
    // more so that a completion queued just before the end is not taken for a loss.
    pollAll(c);
    if (r->error != chorusNetSuccess || r->done) return reportIfFinished(c, r, done, size);
    c->breakWith(chorusNetRemoteError, c->send ? "ib plugin: the receiver closed the connection or died"
                                               : "ib plugin: the sender closed the connection or died");
    return brokenError(c);
  }
  return chorusNetSuccess;
}

int ibPollFds(void* comm, pollfd* fds, int max) {
  auto* c = static_cast<Comm*>(comm);
  if (c == nullptr || max < 1 || c->outstanding + c->flushesOutstanding == 0) return 0;
  uint64_t drained;
  while (read(c->wakeFd, &drained, sizeof(drained)) > 0) {
  }
  // Arming the CQ may find completions that arrived before it; test() must then be called, without waiting.
  progress(c);
  bool news = c->broken != chorusNetSuccess;
  for (const Request& r : c->reqs) news |= r.used && (r.done || r.error != chorusNetSuccess);
  for (const Request& r : c->flushes) news |= r.used && r.done;
  if (news) {
    const uint64_t one = 1;
    ssize_t w = write(c->wakeFd, &one, sizeof(one));
    (void)w;
    fds[0] = {c->wakeFd, POLLIN, 0};
    return 1;
  }
  // The channel becomes readable with the next event the CQ was armed for; the socket with the peer's end.
  int n = 0;
  fds[n++] = {c->channel->fd, POLLIN, 0};
  if (n < max && c->fd >= 0) fds[n++] = {c->fd, POLLIN, 0};
  return n;
}

chorusNetResult_t ibCloseComm(void* comm) {
  destroyComm(static_cast<Comm*>(comm));
  return chorusNetSuccess;
}

}  // namespace chorus::netplugin::ib
