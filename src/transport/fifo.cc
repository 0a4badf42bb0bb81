// Blocking halves of the FIFO protocol (the non-blocking fast paths are inline in fifo.h).
//
// Sleeping without losing a wake-up (a Dekker handshake on two words, both sides seq_cst):
//   waiter:  sleeping = 1;  re-read counter;  if unchanged, futex-wait on the counter (1 ms slices)
//   other:   counter += 1;  if (sleeping) futex-wake the counter
// Either the waiter's re-read sees the new counter, or the other side's read of `sleeping` sees 1 and
// wakes it; the futex itself re-checks the counter in the kernel. The flag is cleared as soon as the wait
// ends, so a peer that keeps up never pays for a system call.
//
// A FIFO whose far end has a FifoDriver (the network transport) is waited on differently when the driver can
// be claimed: the waiting thread moves the far end itself and sleeps in the driver's block() (drivenWait).
#include "transport/fifo.h"

#include <sched.h>
#include <unistd.h>

#include <cstring>
#include <new>

#include "base/error.h"
#include "base/futex.h"
#include "base/shm.h"
#include "base/wait_observer.h"
#include "transport/cma.h"

namespace chorus::transport {
namespace {

constexpr size_t kHeaderBytes = (sizeof(FifoControl) + 4095) & ~size_t(4095);
constexpr uint64_t kPeerCheckNs = 2000000;    // probe the far end every 2 ms while waiting
constexpr uint64_t kDriverBlockNs = 1000000;  // a driven wait sleeps in 1 ms slices, as a futex wait
constexpr uint64_t kLivenessNs = 5000000;     // the wait context's liveness probe, as Waiter::pause

// Holds a sleeping flag for the duration of one wait and clears it however the wait ends.
class SleepFlag {
 public:
  explicit SleepFlag(std::atomic<uint32_t>* flag) : flag_(flag) {}
  ~SleepFlag() {
    if (set_) flag_->store(0, std::memory_order_relaxed);
  }
  SleepFlag(const SleepFlag&) = delete;
  SleepFlag& operator=(const SleepFlag&) = delete;
  void set() {
    if (!set_) flag_->store(1, std::memory_order_seq_cst);
    set_ = true;
  }
  void clear() {
    if (set_) flag_->store(0, std::memory_order_relaxed);
    set_ = false;
  }

 private:
  std::atomic<uint32_t>* flag_;
  bool set_ = false;
};

// Rate-limits the transport's probe (it may be a system call).
class ProbeTimer {
 public:
  bool due() {
    if ((++iter_ & 63) != 1) return false;
    uint64_t now = nowNs();
    if (last_ == 0) last_ = now;  // the first probe comes after kPeerCheckNs of waiting, not at once
    if (now - last_ < kPeerCheckNs) return false;
    last_ = now;
    return true;
  }

 private:
  uint64_t last_ = 0;
  uint32_t iter_ = 0;
};

// Waits until ready() holds, sleeping on `counter` (the far end's counter) with `flag` as our sleeping flag.
// check() runs when the FIFO is closed and every few milliseconds; it throws when the far end is gone.
// A deadline names what was waited for, on which connection: "waiting for data on rank 0 -> rank 1 lane 0 over
// shm" (the data path's ctx.what is only "rank R", to stay free of allocations). Only this wait's own deadline is
// renamed: a peer's failure notice may carry a timeout too (bootstrap/failure_notice.h), and names its cause.
[[noreturn]] void rethrowNamed(const Error& e, const WaitContext& ctx, const char* waitingFor,
                               const std::string& conn) {
  if (e.status() != Status::kTimeout || !ctx.deadline.expired()) throw;
  CHORUS_THROW(Status::kTimeout, conn, ": waiting for ", waitingFor, ": no progress before the deadline",
               " (CHORUS_TIMEOUT_MS)");
}

template <typename Ready, typename Check>
void waitOnUnnamed(FifoControl* f, const std::atomic<uint32_t>* counter, std::atomic<uint32_t>* flag,
                   FifoDriver* driver, const WaitContext& ctx, Ready ready, Check check);

template <typename Ready, typename Check>
void waitOn(FifoControl* f, const std::atomic<uint32_t>* counter, std::atomic<uint32_t>* flag, FifoDriver* driver,
            const WaitContext& ctx, Ready ready, Check check, const char* waitingFor, const std::string& conn) {
  WaitObserver* observer = currentWaitObserver();
  const uint64_t start = observer != nullptr ? nowNs() : 0;
  try {
    waitOnUnnamed(f, counter, flag, driver, ctx, ready, check);
  } catch (const Error& e) {
    rethrowNamed(e, ctx, waitingFor, conn);
  }
  if (observer != nullptr) observer->waited(waitingFor, conn, start, nowNs());
}

// Whether the far end failed: looks at the closed flag, and at the transport's probe every few milliseconds.
// Throws when it is gone, unless ready() holds after all (data published before the far end closed is still
// delivered, and a proxy may publish and close in between).
template <typename Ready, typename Check>
void checkFarEnd(FifoControl* f, ProbeTimer& probe, Ready& ready, Check& check) {
  if (f->closed.load(std::memory_order_acquire) == 0 && !probe.due()) return;
  try {
    check();
  } catch (const Error&) {
    if (ready()) return;
    throw;
  }
}

// The waiting thread moves the far end itself (FifoDriver::claim succeeded): it drives where another wait spins
// on the counter, for the same budget in time (waitBudget: spin plus yield), and then sleeps in the driver's
// block() (poll() on the network) instead of on the counter, so that the kernel wakes this thread when data
// arrives. It yields after every pass that moved nothing, from the first: a pass is already a system call, a
// yield returns at once when nothing else wants the core, and when the peer it waits for shares the core (a
// busy machine, more ranks than cores) a spin keeps that peer from sending. Measured between two simulated hosts
// on 2 cores at load 17-25, 8 B all-reduce: 550 us spinning 100 us first, 200 us spinning 20 us (checked every
// 64 passes), 95 us spinning 20 us, 9-40 us yielding from the first pass.
// Abort, deadline and liveness are looked at after every pass that moved nothing, every 64 passes that moved
// something, and after every block (as after a futex slice).
template <typename Ready, typename Check>
void drivenWait(FifoControl* f, FifoDriver* driver, const WaitContext& ctx, Ready& ready, Check& check) {
  struct Unclaim {
    FifoDriver* d;
    ~Unclaim() { d->unclaim(); }
  } unclaim{driver};
  const WaitBudget budget = waitBudget(ctx);
  const uint64_t start = nowNs();
  ProbeTimer probe;
  uint64_t lastLiveness = start;
  for (uint32_t pass = 1;; ++pass) {
    if (ready()) return;
    checkFarEnd(f, probe, ready, check);
    const bool moved = driver->drive();
    if ((pass & 63) == 0 || !moved) {
      const uint64_t now = nowNs();
      if (!moved && now - start >= budget.spinNs + budget.yieldNs) {
        driver->block(kDriverBlockNs);
      } else if (!moved) {
        sched_yield();
      }
      checkWaitInterrupted(ctx);
      if (ctx.liveness && now - lastLiveness > kLivenessNs) {
        lastLiveness = now;
        ctx.liveness();
      }
    }
  }
}

template <typename Ready, typename Check>
void waitOnUnnamed(FifoControl* f, const std::atomic<uint32_t>* counter, std::atomic<uint32_t>* flag,
                   FifoDriver* driver, const WaitContext& ctx, Ready ready, Check check) {
  if (driver != nullptr && driver->claim()) return drivenWait(f, driver, ctx, ready, check);
  Waiter waiter(ctx);
  SleepFlag sleeping(flag);
  ProbeTimer probe;
  for (;;) {
    if (ready()) return;
    checkFarEnd(f, probe, ready, check);
    if (!waiter.sleeping()) {
      waiter.pause();
      continue;
    }
    // The driver may be free now (another thread drove it, or the transport moved the FIFO on its own thread).
    if (driver != nullptr && driver->claim()) {
      sleeping.clear();
      return drivenWait(f, driver, ctx, ready, check);
    }
    sleeping.set();
    uint32_t observed = counter->load(std::memory_order_seq_cst);
    if (ready()) return;
    waiter.pause(counter, observed);
  }
}

}  // namespace

// A trailer keeps the next slot's payload on a cache line of its own.
static size_t strideOf(size_t slotBytes, size_t trailerBytes) {
  return slotBytes + ((trailerBytes + kCacheLine - 1) & ~(kCacheLine - 1));
}

size_t fifoBytes(int nslots, size_t slotBytes, size_t trailerBytes) {
  return kHeaderBytes + static_cast<size_t>(nslots) * strideOf(slotBytes, trailerBytes);
}

FifoControl* fifoInit(void* mem, int nslots, size_t slotBytes, size_t trailerBytes) {
  CHORUS_CHECK_ARG(nslots >= 1 && nslots <= kMaxSlots, "FIFO depth ", nslots, " is outside [1, ", kMaxSlots, "]");
  // Counters wrap at 2^32; counter % nslots stays continuous across the wrap only for powers of two.
  CHORUS_CHECK_ARG((nslots & (nslots - 1)) == 0, "FIFO depth ", nslots, " is not a power of two");
  CHORUS_CHECK_ARG(slotBytes > 0 && slotBytes <= kSlotBytesMask, "FIFO slot size must be in [1, 2 GiB), not ",
                   slotBytes);
  CHORUS_ENFORCE(reinterpret_cast<uintptr_t>(mem) % kCacheLine == 0, "FIFO memory must be cache-line aligned");
  auto* f = new (mem) FifoControl();
  f->nslots = static_cast<uint32_t>(nslots);
  f->slotBytes = slotBytes;
  f->slotStride = strideOf(slotBytes, trailerBytes);
  return f;
}

void fifoWarmSlots(FifoControl* f) {
  std::memset(fifoSlot(f, 0), 0, f->nslots * f->slotStride);
}

void fifoClose(FifoControl* f) {
  f->closed.store(1, std::memory_order_seq_cst);
  // Wake unconditionally: closing is rare, and a sleeper must not wait for its next 1 ms slice.
  futexWake(&f->tail);
  futexWake(&f->head);
}

Connection::~Connection() = default;

void Connection::drain(const WaitContext&) {}

// ---- SendConnection ----

SendConnection::~SendConnection() = default;

void* SendConnection::acquire(const WaitContext& ctx) {
  if (void* p = tryAcquire()) return p;
  const uint32_t t = fifo_->tail.load(std::memory_order_relaxed);
  auto ready = [&] { return t - fifo_->head.load(std::memory_order_acquire) < fifo_->nslots; };
  waitOn(
      fifo_, &fifo_->head, &fifo_->producerSleeping, driver_, ctx, ready, [&] { checkPeer(); },
      "a free slot (the receiver consumes nothing)", what_);
  return fifoSlot(fifo_, t);
}

void SendConnection::postRemote(const void* data, size_t bytes, uint32_t tag) {
  CHORUS_ENFORCE(remoteRefs_ && bytes > 0 && bytes <= kMaxRemoteRefBytes && fifo_->slotBytes >= sizeof(RemoteRef),
                 what_, ": a remote reference of ", bytes, " bytes cannot be posted here");
  const uint32_t t = fifo_->tail.load(std::memory_order_relaxed);
  RemoteRef ref{};
  ref.addr = reinterpret_cast<uintptr_t>(data);
  ref.bytes = bytes;
  ref.pid = static_cast<int64_t>(getpid());
  SharedAlloc alloc;
  if (findSharedAlloc(data, bytes, &alloc)) {
    ref.allocBase = alloc.base;
    ref.allocBytes = alloc.bytes;
    memcpy(ref.allocName, alloc.name, sizeof(ref.allocName));
  }
  memcpy(fifoSlot(fifo_, t), &ref, sizeof(ref));
  publish(slotWord(bytes, tag) | kSlotRemoteRef);
}

void SendConnection::drain(const WaitContext& ctx) {
  const uint32_t t = fifo_->tail.load(std::memory_order_relaxed);
  auto ready = [&] { return fifo_->head.load(std::memory_order_acquire) == t; };
  if (!ready()) {
    waitOn(
        fifo_, &fifo_->head, &fifo_->producerSleeping, driver_, ctx, ready, [&] { checkPeer(); },
        "the receiver to consume what was sent", what_);
  }
  auto read = [&] { return fifo_->mailboxAck.load(std::memory_order_acquire) == mailboxSent_; };
  if (!read()) {
    waitOn(
        fifo_, &fifo_->mailboxAck, &fifo_->producerSleeping, driver_, ctx, read, [&] { checkPeer(); },
        "the receiver to read the mailbox", what_);
  }
}

void SendConnection::waitMailboxLine(const WaitContext& ctx) {
  auto ready = [&] {
    mailboxAcked_ = fifo_->mailboxAck.load(std::memory_order_acquire);
    return mailboxSent_ - mailboxAcked_ < kMailboxLines;
  };
  if (ready()) return;
  waitOn(
      fifo_, &fifo_->mailboxAck, &fifo_->producerSleeping, driver_, ctx, ready, [&] { checkPeer(); },
      "a free mailbox line (the receiver reads nothing)", what_);
}

void SendConnection::wakeMailboxConsumer(MailboxLine& l) {
  futexWake(&l.seq);
  wakeConsumer();  // it may sleep on a slot instead: the order of messages is the receiver's to keep
}

int SendConnection::raiseSleepFlag(FutexWord* words) {
  fifo_->producerSleeping.store(1, std::memory_order_seq_cst);
  words[0] = {&fifo_->head, fifo_->head.load(std::memory_order_seq_cst)};
  words[1] = {&fifo_->mailboxAck, fifo_->mailboxAck.load(std::memory_order_seq_cst)};
  return 2;
}

void SendConnection::checkPeer() const {
  // The transport's probe first: it knows why the far end went away (socket error, process exit).
  if (check_) check_();
  if (fifo_->closed.load(std::memory_order_acquire) != 0) {
    CHORUS_THROW(Status::kRemoteError, what_, ": the receiving end closed the connection");
  }
}

void SendConnection::wakeConsumer() {
  futexWake(&fifo_->tail);
}

// ---- RecvConnection ----

RecvConnection::~RecvConnection() = default;

const void* RecvConnection::peekWord(uint64_t* word, const WaitContext& ctx) {
  if (const void* p = tryPeekWord(word)) return p;
  const uint32_t h = fifo_->head.load(std::memory_order_relaxed);
  MailboxLine& l = fifo_->lines[mailboxRead_ % kMailboxLines];
  const bool mailbox = fifo_->mailbox != 0;
  // A mailbox message counts as an arrival too (a mismatch, unless the slot was published before it: the tail is
  // looked at again once the message is seen, and the producer stored it first).
  auto ready = [&] { return fifo_->tail.load(std::memory_order_acquire) != h || (mailbox && mailboxArrived(l)); };
  waitOn(
      fifo_, &fifo_->tail, &fifo_->consumerSleeping, driver_, ctx, ready, [&] { checkPeer(); },
      "data (the sender publishes nothing)", what_);
  if (const void* p = tryPeekWord(word)) return p;
  *word = mailboxWord(l);
  return l.data;
}

void RecvConnection::readRemote(const void* slot, size_t offset, void* dst, size_t bytes) const {
  RemoteRef ref;
  memcpy(&ref, slot, sizeof(ref));
  if (remotePid_ == 0 || ref.pid != remotePid_ || offset > ref.bytes || bytes > ref.bytes - offset) {
    CHORUS_THROW(Status::kRemoteError, what_, ": received a remote reference (pid ", ref.pid, ", ", ref.bytes,
                 " bytes) that this connection cannot take (", bytes, " bytes at offset ", offset, " wanted)");
  }
  if (ref.allocName[0] != '\0') {
    // From the producer's allocation, mapped here: checked to lie inside it, so that a bad reference fails, never
    // faults.
    const uint64_t at = ref.addr + offset;
    if (at < ref.allocBase || at - ref.allocBase > ref.allocBytes || bytes > ref.allocBytes - (at - ref.allocBase)) {
      CHORUS_THROW(Status::kRemoteError, what_, ": received a remote reference outside the allocation it names (",
                   bytes, " bytes at ", at - ref.allocBase, " of ", ref.allocBytes, ")");
    }
    const std::shared_ptr<const ShmSegment> alloc = mapPeerAlloc(ref.allocName, ref.allocBytes, ref.pid);
    memcpy(dst, static_cast<const char*>(alloc->data()) + (at - ref.allocBase), bytes);
    notePeerAllocRead();
    return;
  }
  // Through the kernel even from this process (ranks as threads over shm): a bad reference fails, never faults.
  const void* src = reinterpret_cast<const char*>(static_cast<uintptr_t>(ref.addr)) + offset;
  cmaRead(static_cast<pid_t>(ref.pid), src, dst, bytes, what_);
}

const void* RecvConnection::waitMailboxLine(MailboxLine& l, uint64_t* word, const WaitContext& ctx) {
  const uint32_t h = fifo_->head.load(std::memory_order_relaxed);
  // A slot counts as an arrival too (a mismatch, unless the message was posted before it: the line is looked at
  // again once the slot is seen).
  auto ready = [&] { return mailboxArrived(l) || fifo_->tail.load(std::memory_order_acquire) != h; };
  waitOn(
      fifo_, &l.seq, &fifo_->consumerSleeping, driver_, ctx, ready, [&] { checkPeer(); },
      "data (the sender publishes nothing)", what_);
  if (mailboxArrived(l)) {
    *word = mailboxWord(l);
    return l.data;
  }
  return tryPeekWord(word);
}

void RecvConnection::wakeMailboxProducer() {
  futexWake(&fifo_->mailboxAck);
}

int RecvConnection::raiseSleepFlag(FutexWord* words) {
  fifo_->consumerSleeping.store(1, std::memory_order_seq_cst);
  MailboxLine& l = fifo_->lines[mailboxRead_ % kMailboxLines];
  words[0] = {&fifo_->tail, fifo_->tail.load(std::memory_order_seq_cst)};
  words[1] = {&l.seq, l.seq.load(std::memory_order_seq_cst)};
  return 2;
}

void RecvConnection::checkPeer() const {
  // What the producer published before it went is still delivered: a proxy publishes the messages that arrived and
  // then closes the FIFO in the same pass when the stream ends after them, and a peer that exits right after its
  // last send is gone before its receiver looks. The far end is a failure only once nothing of it is left to read.
  if (hasUnread()) return;
  if (check_) check_();
  if (fifo_->closed.load(std::memory_order_acquire) != 0) {
    CHORUS_THROW(Status::kRemoteError, what_, ": the sending end closed the connection");
  }
}

void RecvConnection::wakeProducer() {
  futexWake(&fifo_->head);
}

}  // namespace chorus::transport
