#include "transport/shm/transport.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "base/error.h"
#include "base/logging.h"
#include "base/process.h"
#include "base/shm.h"
#include "transport/cma.h"
#include "transport/shm/connection.h"
#include "transport/shm/descriptor.h"
#include "transport/spec.h"

namespace chorus::transport::shm {
namespace {

// The far end is alive while its process is; a stopped process is alive (its waits end at the deadline).
PeerCheck processCheck(const PeerInfo& peer, const std::string& what) {
  auto watch = std::make_shared<ProcessWatch>(peer.pid);
  watchPeerSegments(peer.pid);  // swept at this process's exit if the peer died leaving segments named
  return [watch, what, rank = peer.rank] {
    if (!watch->alive()) {
      sweepSegmentsOf(watch->pid());  // FIFOs it created that no one will map now
      CHORUS_THROW(Status::kRemoteError, what, ": rank ", rank, " (pid ", watch->pid(), ") exited");
    }
  };
}

// Whether the receiving end of a connection from `sender` may read the sender's memory. Said once per process
// when the kernel refuses it (the FIFOs then copy twice).
bool receiverReads(pid_t sender) {
  if (cmaDisabled()) return false;
  std::string why;
  if (cmaPermitted(sender, &why)) return true;
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) {
    CHORUS_LOG_INFO(kShm, "single copy between processes (CMA) is not available: ", why,
                    "; shared memory copies through its slots");
  }
  return false;
}

// Whether the sender of connection `f` may post remote refs: the receiver said it reads this process, and a test
// read of the receiver's own mapping of the FIFO (at d.fifoAddr in its process) returns what this process's mapping
// holds: the call works both ways between the two processes, and the receiver is the process it claims to be.
bool senderRefs(const FifoControl* f, const Descriptor& d, pid_t receiver) {
  if (f->consumerReadsProducer == 0 || cmaDisabled() || d.fifoAddr == 0) return false;
  const size_t at =
      static_cast<size_t>(reinterpret_cast<const char*>(&f->slotBytes) - reinterpret_cast<const char*>(f));
  uint64_t seen = 0;
  if (!cmaTryRead(receiver, reinterpret_cast<const char*>(static_cast<uintptr_t>(d.fifoAddr)) + at, &seen,
                  sizeof(seen))) {
    return false;
  }
  return seen == f->slotBytes;
}

}  // namespace

bool ShmTransport::canConnect(const PeerInfo& self, const PeerInfo& peer) const {
  return self.hostHash == peer.hostHash;
}

const char* ShmTransport::reach() const {
  return "ranks on one host";
}

std::unique_ptr<Connection> ShmTransport::createRecv(const ConnectSpec& spec, std::vector<uint8_t>* descriptor) {
  size_t slotBytes = spec.slotBytes;
  CHORUS_CHECK_ARG(spec.nslots >= 1 && spec.nslots <= kMaxSlots, "FIFO depth ", spec.nslots, " is outside [1, ",
                   kMaxSlots, "]");
  ShmSegment seg = ShmSegment::create("fifo", fifoBytes(spec.nslots, slotBytes));
  FifoControl* f = fifoInit(seg.data(), spec.nslots, slotBytes);
  const bool reads = receiverReads(spec.peer.pid);
  f->consumerReadsProducer = reads ? 1 : 0;
  f->consumerReadsFast = reads && cmaReadsFast() ? 1 : 0;
  f->mailbox = 1;  // small messages in one mailbox line each (fifo.h)
  Descriptor d;
  d.name = seg.name();
  d.nslots = static_cast<uint32_t>(spec.nslots);
  d.slotBytes = slotBytes;
  d.pid = getpid();
  d.fifoAddr = reinterpret_cast<uintptr_t>(seg.data());
  d.encode(descriptor);
  std::string what = connectionName(spec, false, name());
  PeerCheck check = processCheck(spec.peer, what);
  return std::make_unique<RecvConnection>(std::move(seg), std::move(what), std::move(check), reads ? spec.peer.pid : 0);
}

std::unique_ptr<Connection> ShmTransport::connectSend(const ConnectSpec& spec, const std::vector<uint8_t>& descriptor) {
  Descriptor d = Descriptor::decode(descriptor);
  std::string what = connectionName(spec, true, name());
  ShmSegment seg;
  try {
    seg = ShmSegment::open(d.name, fifoBytes(static_cast<int>(d.nslots), d.slotBytes));
  } catch (const Error& e) {
    // The receiver made it before it posted the descriptor: gone now means the receiver died (its exit, or a
    // survivor, removed what no one had mapped). Say so, naming the peer, instead of a file error.
    if (ProcessWatch::gone(spec.peer.pid)) {
      CHORUS_THROW(Status::kRemoteError, what, ": rank ", spec.peer.rank, " (pid ", spec.peer.pid,
                   ") exited while the connection was being set up");
    }
    // Alive, but its end is gone: it failed, or freed the communicator, before this rank mapped the FIFO.
    CHORUS_THROW(
        Status::kRemoteError, what, ": rank ", spec.peer.rank,
        " freed its end of the connection before it was set up (it failed or left the communicator): ", e.what());
  }
  // Both ends have it mapped now: remove the name so that the segment disappears with the last mapping,
  // however the processes end. (ShmSegment::unlink only unlinks for the creator.)
  shm_unlink(d.name.c_str());
  auto* f = static_cast<FifoControl*>(seg.data());
  CHORUS_CHECK_ARG(f->nslots == d.nslots && f->slotBytes == d.slotBytes, what,
                   ": shared memory geometry does not match the descriptor");
  const bool refs = senderRefs(f, d, spec.peer.pid);
  fifoWarmSlots(f);  // this end has published nothing yet
  CHORUS_LOG_TRACE(kShm, what, ": ", refs ? "single copy (the receiver reads this process)" : "copies through slots");
  PeerCheck check = processCheck(spec.peer, what);
  return std::make_unique<SendConnection>(std::move(seg), std::move(what), std::move(check), refs);
}

}  // namespace chorus::transport::shm
