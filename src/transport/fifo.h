// The connection of every host-memory transport (inproc, shm, socket): a FIFO of fixed-size slots between one
// producer and one consumer, read and written by the CPU. (Device FIFOs, for kernels: cuda/device_fifo.h.)
//
// Layout (in process memory for in-process peers, in POSIX shared memory for peers on the host, and in
// local memory on both sides of a socket, where a proxy thread is the remote end):
//
//   FifoControl   tail (producer) | head (consumer) | slot sizes, each on its own cache lines
//   slot 0 .. slot nslots-1       nslots * slotStride bytes: each slot's payload (slotBytes), then the
//                                 transport's trailer if it keeps one (the network transport's tag)
//
// The producer fills slot tail % nslots, stores its size, then publishes it by incrementing tail (release).
// The consumer sees tail != head (acquire), reads the slot in place, then frees it by incrementing head.
// Counters are 32-bit and wrap; they double as futex words, so a side that has spun long enough sleeps on
// the other's counter and the other wakes it (only when the sleeping flag says someone sleeps).
//
// Remote references (single copy): where the receiving end may read the producer's memory (processes on one
// host, Cross Memory Attach, cma.h), a producer whose data already lies in its own memory may publish a
// RemoteRef in the slot instead of the data: the slot's size word carries kSlotRemoteRef and the bytes the
// reference covers, and the consumer copies them straight from the producer's memory into their destination.
// The producer must keep that memory unchanged until the consumer has freed the slot (drain() waits for it). Where the
// bytes lie in memory the producer allocated for its peers (chorusMemAlloc, base/shared_alloc.h), the reference names
// that allocation too, and the consumer maps it and copies with memcpy instead of through the kernel.
//
// A point-to-point receiver that waits for a transfer says so (RecvConnection::announceReceiving): both ends number
// the transfers on the connection that do not travel in the mailbox, the consumer stores the number of the one it waits
// for, and a producer whose transfer carries that number may post a remote ref even where its transfer fits the slots:
// the receiver is there to read it, so the send still completes without waiting on anything else the receiver does.
//
// Small messages (mailbox): where the transport enables it (FifoControl::mailbox), a message of at most
// kMailboxBytes bytes travels in one mailbox line of a ring of kMailboxLines instead of a slot: a sequence word that
// the producer stores last, the operation's tag and the payload, all from the line's first cache line on (as NCCL's
// LL protocol puts the flag in the payload's line). The consumer polls that one word, where a slot costs it the
// tail, the size word and the slot (three lines written by the other core), and acknowledges with a counter the
// producer reads only when the ring is full. A message of up to 56 bytes touches the first cache line only; a line
// spans nine, so that the 57-568-byte messages of small collectives (a 512-byte all-reduce, a 256-byte block of an
// all-to-all or all-gather) skip the slot too. Both ends know from the message's size which way it travels; messages of
// either kind keep their order because each end handles them in program order.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "base/shared_alloc.h"
#include "base/wait.h"
#include "transport/connection.h"
#include "transport/fifo_geometry.h"

namespace chorus::transport {

constexpr int kMaxSlots = 64;  // the deepest FIFO fifoInit accepts (communicators use kFifoSlots)
constexpr size_t kCacheLine = 64;
// Mailbox lines per FIFO, a power of two: how far a producer of small messages runs ahead of its consumer. With
// ranks that outnumber cores, a producer that finds the ring full gives up its core; 8 lines cost a 4-rank 8-byte
// broadcast on 2 cores a context switch every 6-8 calls at the root (0.94-1.19 us per call in place, 64 lines
// 0.53-0.64, docs/performance.md). 64 lines add 32 KiB to a FIFO's control block (its slots hold 1 MiB).
constexpr int kMailboxLines = 64;
constexpr size_t kMailboxLineBytes = 9 * kCacheLine;     // one mailbox line: header and payload
constexpr size_t kMailboxBytes = kMailboxLineBytes - 8;  // payload of one mailbox line
constexpr int kMailboxSizeBits = 10;                     // seq's low bits: the message's size
constexpr uint32_t kMailboxSizeMask = (1u << kMailboxSizeBits) - 1;
constexpr uint32_t kMailboxCountMask = 0xffffffffu >> kMailboxSizeBits;

// One mailbox line. seq is ((message number + 1) mod 2^22) << kMailboxSizeBits | bytes, stored after tag and data
// (release), and the word the consumer sleeps on.
struct alignas(kCacheLine) MailboxLine {
  std::atomic<uint32_t> seq;
  uint32_t tag;
  unsigned char data[kMailboxBytes];
};
static_assert(sizeof(MailboxLine) == kMailboxLineBytes);
static_assert(kMailboxBytes <= kMailboxSizeMask, "the size travels in seq's low bits");

struct FifoControl {
  alignas(kCacheLine) std::atomic<uint32_t> tail;    // slots published by the producer
  std::atomic<uint32_t> consumerSleeping;            // non-zero while the consumer sleeps on tail
  alignas(kCacheLine) std::atomic<uint32_t> head;    // slots freed by the consumer
  std::atomic<uint32_t> producerSleeping;            // non-zero while the producer sleeps on head
  alignas(kCacheLine) std::atomic<uint32_t> closed;  // set by either end when it fails or goes away
  uint32_t nslots;
  uint64_t slotBytes;   // payload bytes a slot holds
  uint64_t slotStride;  // bytes from one slot to the next: slotBytes and the trailer (fifoInit)
  // Set by the consumer's transport when it made the FIFO: it may read the producer's memory (remote refs).
  uint32_t consumerReadsProducer;
  // Set with it: the consumer's reads of the producer's memory are fast (cma.h, cmaReadsFast), so that one copy by
  // reference beats two through the slots. A fact both ends read from here, so that they agree on it.
  uint32_t consumerReadsFast;
  // Set by the transport when it made the FIFO: small messages travel through the mailbox.
  uint32_t mailbox;
  // The number of the transfer the consumer waits for (announceReceiving; 0: none yet).
  alignas(kCacheLine) std::atomic<uint32_t> receiving;
  alignas(kCacheLine) uint64_t sizes[kMaxSlots];         // payload bytes of each published slot
  alignas(kCacheLine) std::atomic<uint32_t> mailboxAck;  // mailbox messages the consumer has read
  MailboxLine lines[kMailboxLines];
};
static_assert(sizeof(FifoControl) % kCacheLine == 0);

// Bytes of memory a FIFO with this geometry needs (control block + slots, slots 4 KiB-aligned). trailerBytes:
// room the transport keeps after each slot's payload for its own use (0 for the host FIFOs).
size_t fifoBytes(int nslots, size_t slotBytes, size_t trailerBytes = 0);
// Initializes a FIFO in zeroed memory of fifoBytes(...) bytes of the same geometry. nslots must be a power of
// two in [1, kMaxSlots] (the 32-bit counters wrap, and counter % nslots must not jump at the wrap); throws
// chorusInvalidArgument.
FifoControl* fifoInit(void* mem, int nslots, size_t slotBytes, size_t trailerBytes = 0);
// Marks the FIFO closed (this end goes away or failed) and wakes whoever sleeps on either counter, so that
// the far end's waits end with chorusRemoteError instead of their deadline.
void fifoClose(FifoControl* f);
// Writes every slot of the FIFO once (zeros; the slots carry nothing yet), from the producer's end as it connects: the
// shm FIFO's pages come zeroed from the kernel and out of this core's cache, so that without it the first pass of
// small transfers through the ring (a 1 KiB all-gather block takes slot k of 8 on the k-th call) missed to memory on
// every slot: 0.2-0.5 us per call in the first 8 calls, which were most of a 10-call benchmark row (issue 14).
void fifoWarmSlots(FifoControl* f);
// Payload of slot i of the FIFO at `mem`.
inline char* fifoSlot(FifoControl* f, uint32_t i) {
  return reinterpret_cast<char*>(f) + ((sizeof(FifoControl) + 4095) & ~size_t(4095)) + (i % f->nslots) * f->slotStride;
}

// A slot's size word: the payload bytes in the low 31 bits, bit 31 set when the slot holds a RemoteRef (the bytes
// are then those the reference covers), and in the high 32 bits the tag of the operation that wrote it
// (collectives/slot_tag.h: its sequence number and signature; 0 for untagged traffic). A receiver that compares
// the whole word with the one it expects checks bytes, kind and operation in one comparison. The host FIFOs
// (inproc, shm) carry the word as written; the network transport sends the tag after the payload, in the slot's
// trailer, and its receiving end puts the word back together.
constexpr uint64_t kSlotBytesMask = 0x7fffffffull;
constexpr uint64_t kSlotRemoteRef = 0x80000000ull;
inline uint64_t slotWord(size_t bytes, uint32_t tag) {
  return (static_cast<uint64_t>(tag) << 32) | bytes;
}
inline bool isRemoteRef(uint64_t word) {
  return (word & kSlotRemoteRef) != 0;
}
// The most bytes one RemoteRef covers (the size word's 31 bits).
constexpr size_t kMaxRemoteRefBytes = size_t{1} << 30;

// What a slot flagged kSlotRemoteRef holds: where the bytes are in the producer's process, and, where they lie in
// memory the producer allocated for its peers to map (chorusMemAlloc, base/shared_alloc.h), that allocation: the
// consumer then maps it and copies with memcpy instead of the kernel's Cross Memory Attach.
struct RemoteRef {
  uint64_t addr;                          // in the producer's address space
  uint64_t bytes;                         // equal to the size word's bytes
  int64_t pid;                            // the producer (checked by the consumer against the process it connected to)
  uint64_t allocBase;                     // the allocation holding [addr, addr + bytes), in the producer (0: none)
  uint64_t allocBytes;                    // its size
  char allocName[kSharedAllocNameBytes];  // its segment's name, NUL-terminated (empty: none)
};

// Checks the far end of a connection; throws chorus::Error (chorusRemoteError) when it is gone. Transports
// set one per connection (peer process liveness, proxy socket state).
using PeerCheck = std::function<void()>;

// A far end that the thread waiting on a FIFO may move itself. The network transport's far end is a proxy
// thread that calls the network plugin; with a driver, the waiting thread calls the plugin instead (no thread
// hand-off) and sleeps in poll() on the network, as MPI libraries progress from the calling thread. The
// in-process and shared-memory transports have none. Calls come from the FIFO end's own thread.
class FifoDriver {
 public:
  // Claims the far end for one wait of the calling thread; false when it is not to be driven from here now
  // (another thread drives it, or the transport keeps it on its own thread): the wait then sleeps on the FIFO.
  virtual bool claim() = 0;
  // Between claim and unclaim: moves what can move without blocking; true when anything moved.
  virtual bool drive() = 0;
  // Between claim and unclaim: sleeps until the far end may be able to move, or for at most `ns` nanoseconds.
  virtual void block(uint64_t ns) = 0;
  // Ends the claim.
  virtual void unclaim() = 0;
  // Outside a wait: one non-blocking attempt to move the far end, if no other thread is moving it (the
  // non-blocking tryAcquire/tryPeek found nothing).
  virtual void poke() = 0;

 protected:
  ~FifoDriver() = default;
};

// The producing end. Not thread-safe: one thread produces.
class SendConnection : public Connection {
 public:
  SendConnection(FifoControl* fifo, std::string what, PeerCheck check)
      : Connection(Kind::kHostSend, std::move(what)), fifo_(fifo), check_(std::move(check)) {}
  ~SendConnection() override;

  size_t slotBytes() const { return fifo_->slotBytes; }
  int nslots() const { return static_cast<int>(fifo_->nslots); }
  // A free slot to fill, or nullptr when all are in flight. Never blocks.
  void* tryAcquire() {
    uint32_t t = fifo_->tail.load(std::memory_order_relaxed);
    if (t - fifo_->head.load(std::memory_order_acquire) >= fifo_->nslots) {
      if (driver_ == nullptr) return nullptr;
      driver_->poke();
      if (t - fifo_->head.load(std::memory_order_acquire) >= fifo_->nslots) return nullptr;
    }
    return fifoSlot(fifo_, t);
  }
  // Waits for a free slot (watching ctx, the far end and the closed flag).
  void* acquire(const WaitContext& ctx);
  // Publishes the slot returned by the last acquire with `bytes` bytes of payload (bytes <= slotBytes()) and the
  // operation's tag (slotWord).
  void post(size_t bytes, uint32_t tag = 0) { publish(slotWord(bytes, tag)); }
  // Whether the consumer reads this process's memory, so that postRemote may be used: set by the transport (shm,
  // when the consumer's probe and this end's test read succeeded and CHORUS_CMA_DISABLE is not set).
  bool remoteRefs() const { return remoteRefs_; }
  // Whether the consumer reads this process's memory fast (FifoControl::consumerReadsFast; only with remoteRefs()).
  bool receiverReadsFast() const { return remoteRefs_ && fifo_->consumerReadsFast != 0; }
  // Publishes the slot returned by the last acquire as a reference to `bytes` bytes at `data` in this process
  // (0 < bytes <= kMaxRemoteRefBytes; remoteRefs() must be true). The consumer copies them from here: they must
  // stay unchanged until it has freed the slot (drain).
  void postRemote(const void* data, size_t bytes, uint32_t tag = 0);
  // Whether messages of at most kMailboxBytes bytes travel through the mailbox (both ends see the same answer).
  bool mailbox() const { return fifo_->mailbox != 0; }
  // Numbers the next transfer that does not travel in the mailbox (the receiver numbers its receives the same way:
  // RecvConnection::beginTransfer); numbers start at 1.
  uint32_t beginTransfer() { return ++transfers_; }
  // Whether the consumer has announced that it waits for transfer `number` (RecvConnection::announceReceiving).
  bool peerReceiving(uint32_t number) const { return fifo_->receiving.load(std::memory_order_acquire) == number; }
  // The payload of the next mailbox line, once the consumer has read the message that used it last.
  void* mailboxAcquire(const WaitContext& ctx) {
    if (mailboxSent_ - mailboxAcked_ >= kMailboxLines) waitMailboxLine(ctx);
    return fifo_->lines[mailboxSent_ % kMailboxLines].data;
  }
  // The same, or nullptr when every line is in flight. Never blocks.
  void* mailboxTryAcquire() {
    if (mailboxSent_ - mailboxAcked_ >= kMailboxLines) {
      mailboxAcked_ = fifo_->mailboxAck.load(std::memory_order_acquire);
      if (mailboxSent_ - mailboxAcked_ >= kMailboxLines) return nullptr;
    }
    return fifo_->lines[mailboxSent_ % kMailboxLines].data;
  }
  // Publishes the line returned by the last mailboxAcquire with `bytes` (<= kMailboxBytes) bytes and the tag.
  void mailboxPost(size_t bytes, uint32_t tag = 0) {
    MailboxLine& l = fifo_->lines[mailboxSent_ % kMailboxLines];
    l.tag = tag;
    ++mailboxSent_;
    l.seq.store(mailboxSeq(mailboxSent_, bytes), std::memory_order_seq_cst);
    if (fifo_->consumerSleeping.load(std::memory_order_seq_cst) != 0) wakeMailboxConsumer(l);
  }
  // The mailbox sequence word of message number `count` - 1 with `bytes` bytes.
  static uint32_t mailboxSeq(uint32_t count, size_t bytes) {
    return (count & kMailboxCountMask) << kMailboxSizeBits | static_cast<uint32_t>(bytes);
  }
  // Waits until the consumer has freed every posted slot and read every mailbox message.
  void drain(const WaitContext& ctx) override;
  void close() override { fifoClose(fifo_); }
  // Throws if the far end is gone (checks the closed flag, then the transport's probe).
  void checkPeer() const;
  FifoControl* fifo() const { return fifo_; }
  // For a thread that waits on several connections at once (the point-to-point engine sleeps in futexWaitAny):
  // raises this end's sleeping flag, so that the consumer's next release wakes it, and writes the two words that
  // release changes (head, mailboxAck) with their current values to words[0..1]; returns 2. The caller looks at
  // the connection again before it sleeps (a release in between is then seen) and lowers the flag after.
  // Not for a connection that the waiting thread drives (driven()): its far end moves only when driven.
  int raiseSleepFlag(FutexWord* words);
  void lowerSleepFlag() { fifo_->producerSleeping.store(0, std::memory_order_relaxed); }
  // Whether the waiting thread moves the far end itself (FifoDriver); a wait must then not sleep on a futex.
  bool driven() const { return driver_ != nullptr; }

 protected:
  void publish(uint64_t word) {
    uint32_t t = fifo_->tail.load(std::memory_order_relaxed);
    fifo_->sizes[t % fifo_->nslots] = word;
    fifo_->tail.store(t + 1, std::memory_order_seq_cst);
    if (fifo_->consumerSleeping.load(std::memory_order_seq_cst) != 0) wakeConsumer();
  }
  // Wakes the consumer sleeping on tail; virtual for the same reason as RecvConnection::wakeProducer.
  virtual void wakeConsumer();
  // For transports whose far end the waiting thread can move (FifoDriver); set once, before use.
  void setDriver(FifoDriver* driver) { driver_ = driver; }
  void enableRemoteRefs() { remoteRefs_ = true; }
  FifoControl* fifo_;
  PeerCheck check_;
  FifoDriver* driver_ = nullptr;
  bool remoteRefs_ = false;

 private:
  void waitMailboxLine(const WaitContext& ctx);
  void wakeMailboxConsumer(MailboxLine& l);
  uint32_t mailboxSent_ = 0;   // messages posted to the mailbox
  uint32_t mailboxAcked_ = 0;  // the consumer's acknowledgement, as last read
  uint32_t transfers_ = 0;     // transfers numbered by beginTransfer
};

// The consuming end. Not thread-safe: one thread consumes.
class RecvConnection : public Connection {
 public:
  RecvConnection(FifoControl* fifo, std::string what, PeerCheck check)
      : Connection(Kind::kHostRecv, std::move(what)), fifo_(fifo), check_(std::move(check)) {}
  ~RecvConnection() override;

  size_t slotBytes() const { return fifo_->slotBytes; }
  int nslots() const { return static_cast<int>(fifo_->nslots); }
  // The oldest published slot and its size, or nullptr when none is ready. Never blocks.
  const void* tryPeek(size_t* bytes) {
    uint64_t word = 0;
    const void* p = tryPeekWord(&word);
    *bytes = word & kSlotBytesMask;
    return p;
  }
  // The same with the slot's whole size word (bytes and tag, slotWord).
  const void* tryPeekWord(uint64_t* word) {
    uint32_t h = fifo_->head.load(std::memory_order_relaxed);
    if (fifo_->tail.load(std::memory_order_acquire) == h) {
      if (driver_ == nullptr) return nullptr;
      driver_->poke();
      if (fifo_->tail.load(std::memory_order_acquire) == h) return nullptr;
    }
    *word = fifo_->sizes[h % fifo_->nslots];
    return fifoSlot(fifo_, h);
  }
  // Waits for a published slot.
  const void* peek(size_t* bytes, const WaitContext& ctx) {
    uint64_t word = 0;
    const void* p = peekWord(&word, ctx);
    *bytes = word & kSlotBytesMask;
    return p;
  }
  // If a mailbox message arrives instead (the ranks disagree on what is sent), returns it and its word: the caller's
  // size check then fails instead of waiting for the deadline.
  const void* peekWord(uint64_t* word, const WaitContext& ctx);
  bool mailbox() const { return fifo_->mailbox != 0; }
  // The next mailbox message's payload, waiting for it; *word is its size word (slotWord: bytes and tag).
  // If a slot arrives instead (the ranks disagree on what is sent), returns that slot and its word: the caller's
  // size check then fails instead of waiting for the deadline.
  const void* mailboxPeekWord(uint64_t* word, const WaitContext& ctx) {
    MailboxLine& l = fifo_->lines[mailboxRead_ % kMailboxLines];
    if (!mailboxArrived(l)) return waitMailboxLine(l, word, ctx);
    *word = mailboxWord(l);
    return l.data;
  }
  // The next mailbox message's payload and word, or nullptr when it has not arrived. Never blocks.
  const void* mailboxTryPeekWord(uint64_t* word) {
    MailboxLine& l = fifo_->lines[mailboxRead_ % kMailboxLines];
    if (!mailboxArrived(l)) return nullptr;
    *word = mailboxWord(l);
    return l.data;
  }
  // Frees the line returned by the last mailboxPeekWord.
  void mailboxRelease() {
    ++mailboxRead_;
    fifo_->mailboxAck.store(mailboxRead_, std::memory_order_seq_cst);
    if (fifo_->producerSleeping.load(std::memory_order_seq_cst) != 0) wakeMailboxProducer();
  }
  // Whether the producer may post remote refs on this connection (readRemote takes them).
  bool takesRemoteRefs() const { return remotePid_ != 0; }
  // Whether this end reads the producer's memory fast (FifoControl::consumerReadsFast; only with takesRemoteRefs()).
  bool readsFast() const { return remotePid_ != 0 && fifo_->consumerReadsFast != 0; }
  // As SendConnection::beginTransfer, for the receives.
  uint32_t beginTransfer() { return ++transfers_; }
  // Tells the producer that this end waits for transfer `number` (beginTransfer), so that it may send it by
  // reference (fifo.h, top). Only where takesRemoteRefs().
  void announceReceiving(uint32_t number) { fifo_->receiving.store(number, std::memory_order_release); }
  // Copies bytes [offset, offset + bytes) of what the RemoteRef in `slot` (a slot whose word isRemoteRef) covers into
  // dst, from the producer's memory. Throws chorusRemoteError for a reference this connection cannot take (a
  // transport without remote refs, another process, a range outside it) or memory the producer no longer has.
  void readRemote(const void* slot, size_t offset, void* dst, size_t bytes) const;
  // Frees the slot returned by the last peek.
  void release() {
    uint32_t h = fifo_->head.load(std::memory_order_relaxed);
    fifo_->head.store(h + 1, std::memory_order_seq_cst);
    if (fifo_->producerSleeping.load(std::memory_order_seq_cst) != 0) wakeProducer();
  }
  void close() override { fifoClose(fifo_); }
  // Throws if the far end is gone and nothing it published is left to read (a published slot or mailbox message is
  // delivered first: the producer may go, or its proxy close the FIFO, right after publishing).
  void checkPeer() const;
  // Whether a slot or a mailbox message is published and not yet released. Never blocks.
  bool hasUnread() const {
    return fifo_->tail.load(std::memory_order_acquire) != fifo_->head.load(std::memory_order_relaxed) ||
           mailboxArrived(fifo_->lines[mailboxRead_ % kMailboxLines]);
  }
  FifoControl* fifo() const { return fifo_; }
  // As SendConnection::raiseSleepFlag, for the consumer: the words a publish changes are tail and the next
  // mailbox line's sequence word.
  int raiseSleepFlag(FutexWord* words);
  void lowerSleepFlag() { fifo_->consumerSleeping.store(0, std::memory_order_relaxed); }
  bool driven() const { return driver_ != nullptr; }

 protected:
  // Wakes the producer sleeping on head. Virtual so that a transport whose far end is not a futex sleeper
  // (the socket proxy sleeps in poll) can wake it its own way; only called when producerSleeping is set.
  virtual void wakeProducer();
  // As SendConnection::setDriver.
  void setDriver(FifoDriver* driver) { driver_ = driver; }
  // For transports whose producer may publish remote refs: the producer's process.
  void setRemotePid(pid_t pid) { remotePid_ = pid; }
  FifoControl* fifo_;
  PeerCheck check_;
  FifoDriver* driver_ = nullptr;
  pid_t remotePid_ = 0;  // 0: remote refs are a protocol error on this connection

 private:
  // The size word (slotWord: bytes and tag) of a line that has arrived.
  static uint64_t mailboxWord(const MailboxLine& l) {
    return slotWord(l.seq.load(std::memory_order_relaxed) & kMailboxSizeMask, l.tag);
  }
  bool mailboxArrived(const MailboxLine& l) const {
    return (l.seq.load(std::memory_order_acquire) >> kMailboxSizeBits) == ((mailboxRead_ + 1) & kMailboxCountMask);
  }
  const void* waitMailboxLine(MailboxLine& l, uint64_t* word, const WaitContext& ctx);
  void wakeMailboxProducer();
  uint32_t mailboxRead_ = 0;  // mailbox messages read
  uint32_t transfers_ = 0;    // transfers numbered by beginTransfer
};

}  // namespace chorus::transport
