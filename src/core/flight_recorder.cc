#include "core/flight_recorder.h"

#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>

#include "base/logging.h"
#include "base/params.h"

namespace chorus::core {

// Fields are relaxed atomics: the thread that owns a phase of the operation writes them, a dump reads them
// from any thread. A dump taken while the ring wraps may pair one entry's fields with its successor's; the
// sequence number, written last, tells which entry a slot holds.
struct FlightRecorder::Slot {
  std::atomic<uint64_t> seqPlusOne{0};  // 0: empty
  std::atomic<uint64_t> desc{0};        // type | dtype << 8 | algo << 16 | channels << 24 | (root+1) << 32
  std::atomic<int32_t> peer{-1};
  std::atomic<uint64_t> count{0};
  std::atomic<uint32_t> state{0};
  std::atomic<int64_t> queuedUs{0}, startUs{0}, endUs{0};
};

namespace {

// The live recorders, for dumpAll.
struct Registry {
  std::mutex mu;
  std::set<const FlightRecorder*> live;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: a signal may ask for a dump during exit
  return *r;
}

// CHORUS_FR_SIGNAL: "USR1", "SIGUSR2", "10". 0 when unset or not understood.
int frSignal() {
  std::string s = param::FrSignal();
  if (s.empty()) return 0;
  if (s.compare(0, 3, "SIG") == 0) s.erase(0, 3);
  if (s == "USR1") return SIGUSR1;
  if (s == "USR2") return SIGUSR2;
  if (s == "HUP") return SIGHUP;
  if (s == "QUIT") return SIGQUIT;
  char* end = nullptr;
  const long n = strtol(s.c_str(), &end, 10);
  return end != s.c_str() && *end == '\0' && n > 0 && n < NSIG ? static_cast<int>(n) : 0;
}

int signalPipe[2] = {-1, -1};

// Async-signal-safe: one write to a pipe; the dumper thread does the rest.
void onDumpSignal(int) {
  const int saved = errno;
  char b = 1;
  ssize_t ignored = write(signalPipe[1], &b, 1);
  (void)ignored;
  errno = saved;
}

// Installs the CHORUS_FR_SIGNAL handler and its dumper thread, once per process.
void installSignalDump() {
  static std::once_flag once;
  std::call_once(once, [] {
    const int sig = frSignal();
    if (sig == 0) {
      if (!param::FrSignal().empty()) CHORUS_LOG_WARN(kEnv, "CHORUS_FR_SIGNAL=", param::FrSignal(), " is no signal");
      return;
    }
    if (pipe(signalPipe) != 0) return;
    std::thread([sig] {
      char b;
      for (;;) {
        const ssize_t n = read(signalPipe[0], &b, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        FlightRecorder::dumpAll(std::string("signal ") + strsignal(sig) + " (CHORUS_FR_SIGNAL)");
      }
    }).detach();
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = onDumpSignal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  });
}

}  // namespace

const char* frStateName(FrState s) {
  switch (s) {
    case FrState::kQueued: return "queued";
    case FrState::kRunning: return "running";
    case FrState::kDone: return "done";
    case FrState::kFailed: return "failed";
  }
  return "?";
}

namespace {

// The ring's size for `capacity` entries: the next power of two (at least 1).
uint64_t ringSize(int capacity) {
  uint64_t n = 1;
  while (n < static_cast<uint64_t>(capacity)) n <<= 1;
  return n;
}

}  // namespace

int64_t FlightRecorder::nowUs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

FlightRecorder::FlightRecorder(int capacity, int rank, int nranks, uint64_t commHash)
    : capacity_(capacity > 0 ? capacity : 0),
      slotMask_(ringSize(capacity_) - 1),
      rank_(rank),
      nranks_(nranks),
      commHash_(commHash) {
  if (capacity_ == 0) return;
  slots_.reset(new Slot[slotMask_ + 1]);
  installSignalDump();
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().live.insert(this);
}

FlightRecorder::~FlightRecorder() {
  if (capacity_ == 0) return;
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().live.erase(this);
}

FlightRecorder::Slot* FlightRecorder::slotOf(uint64_t seq) const {
  return &slots_[seq & slotMask_];
}

uint64_t FlightRecorder::queued(const coll::CollOp& op, bool running, int64_t now) {
  if (capacity_ == 0) return 0;
  // One thread at a time issues a communicator's operations (chorus.h: a communicator is not used from two threads
  // at once), so the number is read and written, not incremented with a locked instruction: that fetch_add was
  // the recorder's largest cost per operation (it orders every store before it).
  const uint64_t seq = next_.load(std::memory_order_relaxed);
  next_.store(seq + 1, std::memory_order_relaxed);
  Slot* s = slotOf(seq);
  s->seqPlusOne.store(0, std::memory_order_relaxed);
  const uint64_t root = coll::isRooted(op.type) ? static_cast<uint64_t>(op.root + 1) : 0;
  s->desc.store(static_cast<uint64_t>(op.type) | static_cast<uint64_t>(op.dtype) << 8 |
                    static_cast<uint64_t>(op.algo) << 16 | static_cast<uint64_t>(op.nChannels & 0xff) << 24 |
                    root << 32,
                std::memory_order_relaxed);
  s->peer.store(coll::isSendRecv(op.type) ? op.peer : -1, std::memory_order_relaxed);
  s->count.store(op.count, std::memory_order_relaxed);
  s->state.store(static_cast<uint32_t>(running ? FrState::kRunning : FrState::kQueued), std::memory_order_relaxed);
  s->queuedUs.store(now, std::memory_order_relaxed);
  s->startUs.store(running ? now : 0, std::memory_order_relaxed);
  s->endUs.store(0, std::memory_order_relaxed);
  s->seqPlusOne.store(seq + 1, std::memory_order_release);
  return seq;
}

void FlightRecorder::started(uint64_t seq, int64_t now) {
  if (capacity_ == 0) return;
  Slot* s = slotOf(seq);
  if (s->seqPlusOne.load(std::memory_order_relaxed) != seq + 1) return;  // overwritten: the ring wrapped
  s->startUs.store(now, std::memory_order_relaxed);
  s->state.store(static_cast<uint32_t>(FrState::kRunning), std::memory_order_release);
}

void FlightRecorder::finished(uint64_t seq, bool ok, int64_t now) {
  if (capacity_ == 0) return;
  Slot* s = slotOf(seq);
  if (s->seqPlusOne.load(std::memory_order_relaxed) != seq + 1) return;
  s->endUs.store(now, std::memory_order_relaxed);
  s->state.store(static_cast<uint32_t>(ok ? FrState::kDone : FrState::kFailed), std::memory_order_release);
}

std::vector<FrEntry> FlightRecorder::entries() const {
  std::vector<FrEntry> out;
  if (capacity_ == 0) return out;
  const uint64_t next = next_.load(std::memory_order_acquire);
  const uint64_t first = next > static_cast<uint64_t>(capacity_) ? next - capacity_ : 0;
  for (uint64_t seq = first; seq < next; ++seq) {
    const Slot* s = slotOf(seq);
    if (s->seqPlusOne.load(std::memory_order_acquire) != seq + 1) continue;  // being written
    FrEntry e;
    e.seq = seq;
    const uint64_t d = s->desc.load(std::memory_order_relaxed);
    e.type = static_cast<coll::CollType>(d & 0xff);
    e.dtype = static_cast<reduce::DType>((d >> 8) & 0xff);
    e.algo = static_cast<coll::Algo>((d >> 16) & 0xff);
    e.channels = static_cast<int>((d >> 24) & 0xff);
    e.root = static_cast<int>(d >> 32) - 1;
    e.peer = s->peer.load(std::memory_order_relaxed);
    e.count = s->count.load(std::memory_order_relaxed);
    // Bytes follow from the rest: computed here, not on the hot path.
    coll::CollOp op;
    op.type = e.type;
    op.dtype = e.dtype;
    op.count = e.count;
    e.bytes = coll::collBytes(op, nranks_);
    e.state = static_cast<FrState>(s->state.load(std::memory_order_acquire));
    e.queuedUs = s->queuedUs.load(std::memory_order_relaxed);
    e.startUs = s->startUs.load(std::memory_order_relaxed);
    e.endUs = s->endUs.load(std::memory_order_relaxed);
    out.push_back(e);
  }
  return out;
}

std::vector<std::string> FlightRecorder::dumpLines(const std::string& reason) const {
  std::vector<FrEntry> es = entries();
  std::vector<std::string> lines;
  char buf[512];
  std::string why = reason.substr(0, 300);
  for (char& c : why) {
    if (c == '"' || c == '\n') c = '\'';
  }
  snprintf(buf, sizeof(buf), "FR dump rank=%d nranks=%d comm=%016llx entries=%zu issued=%llu reason=\"%s\"", rank_,
           nranks_, static_cast<unsigned long long>(commHash_), es.size(),
           static_cast<unsigned long long>(next_.load(std::memory_order_relaxed)), why.c_str());
  lines.emplace_back(buf);
  for (const FrEntry& e : es) {
    snprintf(buf, sizeof(buf),
             "FR rank=%d comm=%016llx seq=%llu op=%s count=%llu dtype=%s root=%d peer=%d algo=%s channels=%d "
             "bytes=%llu state=%s queued_us=%lld start_us=%lld end_us=%lld",
             rank_, static_cast<unsigned long long>(commHash_), static_cast<unsigned long long>(e.seq),
             coll::collName(e.type), static_cast<unsigned long long>(e.count), reduce::dtypeName(e.dtype), e.root,
             e.peer, coll::isP2p(e.type) ? "P2P" : coll::algoName(e.algo), e.channels,
             static_cast<unsigned long long>(e.bytes), frStateName(e.state), static_cast<long long>(e.queuedUs),
             static_cast<long long>(e.startUs), static_cast<long long>(e.endUs));
    lines.emplace_back(buf);
  }
  return lines;
}

void FlightRecorder::dump(const std::string& reason) const {
  if (capacity_ == 0) return;
  (void)logLevel();  // opens CHORUS_DEBUG_FILE if this is the process's first line
  for (const std::string& line : dumpLines(reason)) logLine(LogLevel::kWarn, kColl, line);
}

int FlightRecorder::dumpAll(const std::string& reason) {
  std::lock_guard<std::mutex> lock(registry().mu);
  for (const FlightRecorder* r : registry().live) r->dump(reason);
  return static_cast<int>(registry().live.size());
}

}  // namespace chorus::core
