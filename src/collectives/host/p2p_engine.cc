#include "collectives/host/p2p_engine.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "base/byte_range.h"
#include "base/error.h"
#include "base/per_thread.h"
#include "base/shared_alloc.h"
#include "base/wait.h"
#include "collectives/host/ref_ledger.h"
#include "collectives/host/slot_store_choice.h"
#include "collectives/reduce/reduce.h"
#include "collectives/tuning.h"

namespace chorus::coll {

namespace {

// How long a send whose receiver has not announced itself yet waits for the announcement, while this thread spins,
// before it copies its first slot: ranks reach the same exchange a few microseconds apart, and a reference saves two
// copies. Measured with sendrecv_perf (2 ranks, 128 KiB, the same buffers each time), without it the rank that came
// first copied its transfer in nine calls of ten and the rank that came second sent by reference.
constexpr uint64_t kAnnounceGraceNs = 5000;

// The tag every slot and reference of a point-to-point transfer carries (the slot word's high half, fifo.h): its
// size, folded to 32 bits. A receive of fewer bytes than were sent then fails at the first slot instead of
// succeeding on the send's first pieces and leaving the rest to the connection's next transfer.
uint32_t transferTag(size_t bytes) {
  const uint64_t b = bytes;
  return static_cast<uint32_t>(b ^ (b >> 32));
}

// Per queue: the task in progress, its bytes done, and the connection.
struct Progress {
  const P2pQueue* q;
  size_t cur = 0;
  size_t off = 0;
  transport::SendConnection* send = nullptr;
  transport::RecvConnection* recv = nullptr;
  bool flagged = false;   // its sleeping flag is raised (below)
  bool line = false;      // the task travels in a mailbox line (fifo.h); decided once, in start()
  uint32_t transfer = 0;  // the task's number on its connection, if it skips the mailbox (transport/fifo.h)
  // A send task's use of remote refs: never, for the whole transfer (useSingleCopy), or from the slot at which the
  // receiver has announced that it waits for it (useSingleCopyToReceiver).
  enum class Refs : uint8_t { kNever, kAlways, kWhenReceiving } refs = Refs::kNever;
  uint64_t graceEndNs = 0;  // kWhenReceiving: until when the first slot waits for the announcement (0: not yet)
  // A receive queue whose task overlaps the send to the same peer (P2pTask::overlapsPeer): that send's queue.
  const Progress* partner = nullptr;
};

struct ThreadState;

// The liveness check of an operation's waits: the operation's own, then the far end of every queue still owed a
// transfer.
struct QueuesLiveness {
  const ThreadState* state;
  void operator()() const;
};

// The engine's per-thread state, kept with its capacity (a warm operation allocates nothing).
struct ThreadState {
  std::vector<Progress> queues;
  RefLedger ledger;
  std::vector<FutexWord> words;  // what a sleep watches (filled by raise() in runP2p)
  std::vector<Progress*> order;  // the queues as each pass visits them: sends first
  // The operation's wait context, watching the queues' peers as well (QueuesLiveness), and the context it extends.
  // Kept from call to call: building its std::function, and copying the caller's, was a tenth of an 8-byte send/recv.
  WaitContext ctx;
  const WaitContext* outer = nullptr;
  // Room for the most words one sleep watches from the start: the first sleep of a warm thread allocates nothing.
  ThreadState() { words.reserve(kMaxFutexWords); }

  static_assert(sizeof(WaitContext) == 96, "copy WaitContext's new field in extend()");
  // Makes ctx the operation's context: `outer`'s deadline, abort flag, name and budgets, and the queues' peers.
  const WaitContext& extend(const WaitContext& o) {
    outer = &o;
    ctx.deadline = o.deadline;
    ctx.abort = o.abort;
    ctx.spinNs = o.spinNs;
    ctx.yieldNs = o.yieldNs;
    if (ctx.what != o.what) ctx.what = o.what;
    if (ctx.liveness.target<QueuesLiveness>() == nullptr) ctx.liveness = QueuesLiveness{this};
    return ctx;
  }
};

void QueuesLiveness::operator()() const {
  if (state->outer->liveness) state->outer->liveness();
  for (const Progress& p : state->queues) {
    if (p.cur == p.q->count) continue;
    if (p.send) p.send->checkPeer();
    if (p.recv) p.recv->checkPeer();
  }
}

// Whether a receive of the plan writes into bytes [src, src + bytes), which a send reads: that send must copy through
// the slots, as a reference would let its peer read what this rank has overwritten meanwhile (an in-place send/recv
// pair, as nccl-tests times them; the in-place all-to-all orders its pairs instead, P2pTask::overlapsPeer). Plans with
// more receives than are worth looking through count as overwriting.
bool overwrittenHere(const Plan& plan, const void* src, size_t bytes) {
  constexpr size_t kMaxReceivesChecked = 64;
  size_t checked = 0;
  for (const P2pQueue& q : plan.queues) {
    if (q.send) continue;
    for (size_t i = q.first; i < q.first + q.count; ++i) {
      if (++checked > kMaxReceivesChecked) return true;
      if (overlaps(src, bytes, plan.tasks[i].dst, plan.tasks[i].bytes)) return true;
    }
  }
  return false;
}

// The bytes of a set of buffers, and the range from the lowest address to the highest end among them.
struct Extent {
  size_t bytes = 0;
  uintptr_t lo = UINTPTR_MAX;
  uintptr_t hi = 0;
  void add(const void* p, size_t n) {
    if (n == 0) return;
    const auto a = reinterpret_cast<uintptr_t>(p);
    bytes += n;
    lo = std::min(lo, a);
    hi = std::max(hi, a + n);
  }
  // The length from lo to hi; 0 while empty (lo > hi then).
  size_t span() const { return bytes > 0 ? hi - lo : 0; }
  // Whether the two ranges share a byte (never when either is empty).
  bool meets(const Extent& o) const {
    return overlaps(reinterpret_cast<const void*>(lo), span(), reinterpret_cast<const void*>(o.lo), o.span());
  }
};

}  // namespace

void runP2p(const Plan& plan, const std::vector<const void*>& copies, const ExecEnv& env) {
  ThreadState& state = perThread<ThreadState>();
  std::vector<Progress>& queues = state.queues;
  queues.clear();
  for (const P2pQueue& q : plan.queues) {
    Progress p{&q};
    if (q.send) {
      p.send = env.conns->sendConn(q.peer, kP2pLane);
    } else {
      p.recv = env.conns->recvConn(q.peer, kP2pLane);
    }
    queues.push_back(p);
  }
  // Numbers a queue's current task on its connection as the far end numbers it (both count the transfers that skip
  // the mailbox), and announces a receive that its sender may send by reference because this rank waits for it
  // (fifo.h, top): every queue's first task is started before any send, so that the peers' sends find the
  // announcements of receives posted in the same group.
  auto start = [&](Progress& p) {
    const P2pTask& t = plan.tasks[p.q->first + p.cur];
    p.line = t.bytes <= transport::kMailboxBytes && (p.send != nullptr ? p.send->mailbox() : p.recv->mailbox());
    if (p.send != nullptr) {
      p.refs = Progress::Refs::kNever;
      p.graceEndNs = 0;
      if (p.line) return;
      p.transfer = p.send->beginTransfer();
      if (!p.send->remoteRefs() || t.overlapsPeer) return;
      const bool always = useSingleCopy(CollType::kSend, t.bytes);
      // The receiver reads fast where its CMA reads are fast, and always from memory it maps (chorusMemAlloc's; looked
      // up only for a transfer that a fast reader would take by reference).
      const bool fast = p.send->receiverReadsFast() || (useSingleCopyToReceiver(t.bytes, /*readsFast=*/true) &&
                                                        findSharedAlloc(source(t, copies), t.bytes));
      if (!always && !useSingleCopyToReceiver(t.bytes, fast)) return;
      if (t.staged < 0 && overwrittenHere(plan, source(t, copies), t.bytes)) return;
      p.refs = always ? Progress::Refs::kAlways : Progress::Refs::kWhenReceiving;
    } else if (!p.line) {
      p.transfer = p.recv->beginTransfer();
      // Announced as where this end reads fast: whether it does depends on where the sender's bytes lie (mapped
      // memory is read fast everywhere), which the sender knows; an announcement only allows a reference.
      if (p.recv->takesRemoteRefs() && useSingleCopyToReceiver(t.bytes, /*readsFast=*/true)) {
        p.recv->announceReceiving(p.transfer);
      }
    }
  };
  for (Progress& p : queues) {
    if (p.q->count > 0) start(p);
  }
  // Outputs past the caches are written with streaming stores (streamsOutput): the receives' copies out of the slots
  // and the copies to oneself. A large all-to-all's receives and self copies then write memory without reading it
  // first. The footprint counts what the sends and self copies read and what the receives and self copies write, the
  // overlap once where the two ranges meet (in place).
  Extent input;
  Extent output;
  for (const P2pQueue& q : plan.queues) {
    for (size_t i = q.first; i < q.first + q.count; ++i) {
      const P2pTask& t = plan.tasks[i];
      if (q.send) {
        input.add(source(t, copies), t.bytes);
      } else {
        output.add(t.dst, t.bytes);
      }
    }
  }
  for (const SelfCopy& c : plan.selfCopies) {
    input.add(source(c, copies), c.bytes);
    output.add(c.dst, c.bytes);
  }
  const size_t footprint = footprintBytes(input.bytes, output.bytes, input.meets(output));
  const bool streaming = streamsOutput(footprint, env.topo->streamMinBytes);
  // The sends' store kind (slot_store_choice.h), timed from here, where the copies start, to the end. All
  // point-to-point plans share one key: their sizes tell them apart well enough.
  SlotStoreDecision slots(*env.topo, env.nranks > 1 && !queues.empty(), CollType::kSend, footprint);
  const bool streamingSlots = slots.streamed();
  // The copies to oneself come after the announcements: peers may send by reference meanwhile.
  for (const SelfCopy& c : plan.selfCopies) {
    const void* src = source(c, copies);
    if (streaming && !overlaps(src, c.bytes, c.dst, c.bytes)) {
      reduce::copyBytes(c.dst, src, c.bytes, /*nonTemporal=*/true);
    } else {
      memmove(c.dst, src, c.bytes);
    }
  }
  if (queues.empty()) return;
  // Each pass posts what it can send before it looks for what arrived: a peer that waits for this rank's message
  // then waits only for it, not for this rank's receives and copies too (the direct collectives send first for the
  // same reason). A send/recv pair of 8 bytes took 0.60 us receiving first.
  std::vector<Progress*>& order = state.order;
  order.clear();
  for (Progress& p : queues) {
    if (p.send != nullptr) order.push_back(&p);
  }
  for (Progress& p : queues) {
    if (p.send == nullptr) order.push_back(&p);
  }
  // Queues are ordered by (peer, receive before send): a receive's partner is the queue after it.
  for (size_t i = 0; i + 1 < queues.size(); ++i) {
    Progress& r = queues[i];
    if (r.recv != nullptr && queues[i + 1].send != nullptr && queues[i + 1].q->peer == r.q->peer &&
        plan.tasks[r.q->first].overlapsPeer) {
      r.partner = &queues[i + 1];
    }
  }
  // How many bytes of an overlapping receive's task may land: those its partner send has read.
  auto landable = [&](const Progress& p, const P2pTask& t) -> size_t {
    if (!t.overlapsPeer || p.partner == nullptr) return t.bytes;
    const Progress& s = *p.partner;
    return s.cur == s.q->count ? t.bytes : s.off;
  };
  RefLedger& ledger = state.ledger;
  RefLedger::Scope scope(ledger);

  // The operation's context, watching every peer still owed a transfer as well.
  const WaitContext& ctx = state.extend(*env.ctx);
  auto disagree = [](const transport::RecvConnection& c, size_t got, size_t want) {
    CHORUS_THROW(Status::kRemoteError, c.what(), ": received ", got, " bytes where a transfer of ", want,
                 " bytes was expected: the send and the receive disagree on the size");
  };
  // Past the spinning phase, the thread sleeps on every connection it waits for at once (futexWaitAny), so
  // that whichever far end moves first wakes it: the sleeping flags are raised, the queues looked at once more
  // (what arrived before the flags were up is seen there), then the thread sleeps on the words read when the
  // flags went up. A wait that includes a connection this thread drives (the network) polls instead, as it
  // must move that connection itself; so does one on more queues than one sleep can watch.
  std::vector<FutexWord>& words = state.words;
  struct Flags {
    std::vector<Progress>& queues;
    void lower() {
      for (Progress& p : queues) {
        if (!p.flagged) continue;
        if (p.send) p.send->lowerSleepFlag();
        if (p.recv) p.recv->lowerSleepFlag();
        p.flagged = false;
      }
    }
    ~Flags() { lower(); }
  } flags{queues};
  auto raise = [&] {
    words.clear();
    for (Progress& p : queues) {
      if (p.cur == p.q->count) continue;
      if ((p.send && p.send->driven()) || (p.recv && p.recv->driven()) || words.size() + 2 > kMaxFutexWords) {
        flags.lower();
        words.clear();
        return false;
      }
      FutexWord w[2];
      const int n = p.send ? p.send->raiseSleepFlag(w) : p.recv->raiseSleepFlag(w);
      p.flagged = true;
      words.insert(words.end(), w, w + n);
    }
    return true;
  };
  Waiter waiter(ctx);
  bool armed = false;
  for (;;) {
    bool pending = false;
    bool progress = false;
    for (Progress* pp : order) {
      Progress& p = *pp;
      while (p.cur < p.q->count) {
        const P2pTask& t = plan.tasks[p.q->first + p.cur];
        if (p.off == t.bytes) {
          ++p.cur;
          p.off = 0;
          if (p.cur < p.q->count) start(p);
          continue;
        }
        const size_t left = t.bytes - p.off;
        // A transfer that fits a mailbox line travels in one where the connection has a mailbox (fifo.h).
        if (t.send && p.line) {
          void* line = p.send->mailboxTryAcquire();
          if (line == nullptr) break;
          memcpy(line, source(t, copies), t.bytes);
          p.send->mailboxPost(t.bytes);
          p.off = t.bytes;
        } else if (t.send) {
          void* slot = p.send->tryAcquire();
          if (slot == nullptr) break;
          const char* src = static_cast<const char*>(source(t, copies)) + p.off;
          // By reference where single copy applies to the whole transfer, or, from the next slot on, once the
          // receiver has announced that it waits for this transfer.
          const bool byRef = p.refs == Progress::Refs::kAlways ||
                             (p.refs == Progress::Refs::kWhenReceiving && p.send->peerReceiving(p.transfer));
          if (!byRef && p.refs == Progress::Refs::kWhenReceiving && p.off == 0 && waiter.spinning()) {
            // Not announced yet: give the receiver a moment (kAnnounceGraceNs) before copying. Only while this
            // thread spins, which a sleep could not be woken from by the announcement.
            const uint64_t now = nowNs();
            if (p.graceEndNs == 0) p.graceEndNs = now + kAnnounceGraceNs;
            if (now < p.graceEndNs) break;
          }
          if (byRef) {
            // The receiver copies the whole rest from here (in references of whole slots' worth).
            const size_t most = transport::kMaxRemoteRefBytes / p.send->slotBytes() * p.send->slotBytes();
            const size_t m = std::min(most, left);
            p.send->postRemote(src, m, transferTag(t.bytes));
            ledger.add(p.send);
            p.off += m;
          } else {
            const size_t m = std::min(p.send->slotBytes(), left);
            reduce::copyBytes(slot, src, m, streamingSlots);
            p.send->post(m, transferTag(t.bytes));
            p.off += m;
          }
        } else {
          uint64_t word = 0;
          const void* slot = p.line ? p.recv->mailboxTryPeekWord(&word) : p.recv->tryPeekWord(&word);
          if (slot == nullptr) {
            // What arrived instead, if anything, is the other kind: the two sides disagree on the size. (Looked at
            // again after: what was expected may have been published just before it.)
            uint64_t other = 0;
            const bool arrived = (p.line ? p.recv->tryPeekWord(&other) : p.recv->mailboxTryPeekWord(&other)) != nullptr;
            slot = !arrived ? nullptr : p.line ? p.recv->mailboxTryPeekWord(&word) : p.recv->tryPeekWord(&word);
            if (slot == nullptr && arrived) {
              disagree(*p.recv, other & transport::kSlotBytesMask, t.bytes);
            }
            if (slot == nullptr) break;
          }
          const size_t land = landable(p, t);
          if (p.line) {
            if ((word & transport::kSlotBytesMask) != t.bytes) {
              disagree(*p.recv, word & transport::kSlotBytesMask, t.bytes);
            }
            if (land < t.bytes) break;  // the send of the same bytes has not read them yet
            memcpy(t.dst, slot, t.bytes);
            p.recv->mailboxRelease();
            p.off = t.bytes;
            progress = true;
            continue;
          }
          const size_t got = word & transport::kSlotBytesMask;
          const size_t slotBytes = p.recv->slotBytes();
          const bool ref = transport::isRemoteRef(word);
          // A slot is one slot's worth (or the rest); a reference covers whole slots' worth (or the rest).
          const bool fits =
              ref ? got > 0 && got <= left && (got == left || got % slotBytes == 0) : got == std::min(slotBytes, left);
          if (!fits) {
            CHORUS_THROW(Status::kRemoteError, p.recv->what(), ": received a ", ref ? "reference to " : "piece of ",
                         got, " bytes with ", left, " bytes of the transfer left (pieces of ", slotBytes,
                         " bytes): the send and the receive disagree on the size");
          }
          if (static_cast<uint32_t>(word >> 32) != transferTag(t.bytes)) {
            CHORUS_THROW(Status::kRemoteError, p.recv->what(),
                         ": received a piece of a transfer whose size is not the ", t.bytes,
                         " bytes expected (size tag ", word >> 32, ", expected ", transferTag(t.bytes),
                         "): the send and the receive disagree on the size");
          }
          if (p.off + got > land) break;  // the send of the same bytes has not read them yet
          char* dst = static_cast<char*>(t.dst) + p.off;
          if (ref) {
            p.recv->readRemote(slot, 0, dst, got);
          } else {
            // Not where the send of the same bytes has just read them (in place): those lines are in the cache.
            reduce::copyBytes(dst, slot, got, streaming && !t.overlapsPeer);
          }
          p.recv->release();
          p.off += got;
        }
        progress = true;
      }
      if (p.cur < p.q->count) pending = true;
    }
    if (!pending) break;
    if (progress) {
      if (armed) flags.lower();
      armed = false;
      waiter.reset();
    } else if (armed) {
      waiter.pauseAny(words.data(), static_cast<int>(words.size()));
      flags.lower();
      armed = false;
    } else if (waiter.sleeping() && raise()) {
      armed = true;
    } else {
      waiter.pause();
    }
  }
  flags.lower();
  // Receivers read this rank's buffers until they free the references: the transfers end after that.
  if (!ledger.empty()) ledger.drain(ctx);
  slots.finish();
}

}  // namespace chorus::coll
