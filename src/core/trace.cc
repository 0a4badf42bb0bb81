#include "core/trace.h"

#include <time.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "base/logging.h"
#include "base/params.h"
#include "base/wait.h"

namespace chorus::core {
namespace {

// Microseconds since the epoch of a nowNs() reading: events of all ranks on one time line (the Chrome format
// counts in microseconds).
double epochUs(uint64_t monoNs) {
  static const int64_t offsetNs = [] {
    timespec rt, mono;
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    return (static_cast<int64_t>(rt.tv_sec) - mono.tv_sec) * 1000000000 + (rt.tv_nsec - mono.tv_nsec);
  }();
  return (static_cast<double>(static_cast<int64_t>(monoNs) + offsetNs)) / 1000.0;
}

// The process's trace file, opened by the first event. Events are appended as "{...},\n"; the file closes
// with a metadata event and "]" at exit (a trace cut short by a crash is still read by Perfetto and by
// scripts/chorus_trace.py, which accept the array without its end).
class TraceFile {
 public:
  void write(int rank, const std::string& events) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!open(rank)) return;
    fwrite(events.data(), 1, events.size(), f_);
    if (namedRanks_.insert(rank)) {
      fprintf(f_, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"rank %d\"}},\n", rank, rank);
    }
  }

  void flush() {
    std::lock_guard<std::mutex> lock(mu_);
    if (f_ != nullptr) fflush(f_);
  }

  // Ends the array and closes the file (at exit); events written after it are dropped.
  void close() {
    std::lock_guard<std::mutex> lock(mu_);
    failed_ = true;
    if (f_ == nullptr) return;
    fprintf(f_, "{\"name\":\"chorus\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"end\":true}}\n]\n", firstRank_);
    fclose(f_);
    f_ = nullptr;
  }

 private:
  // A small set of the ranks named so far (threads of one process may be several ranks).
  struct RankSet {
    bool insert(int r) {
      for (int x : ranks) {
        if (x == r) return false;
      }
      ranks.push_back(r);
      return true;
    }
    std::vector<int> ranks;
  };

  bool open(int rank) {
    if (f_ != nullptr) return true;
    if (failed_) return false;
    const std::string path = expand(param::TraceFile(), rank);
    f_ = fopen(path.c_str(), "w");
    if (f_ == nullptr) {
      failed_ = true;
      CHORUS_LOG_WARN(kEnv, "CHORUS_TRACE_FILE: cannot write ", path, ": no trace");
      return false;
    }
    firstRank_ = rank;
    fputs("[\n", f_);
    CHORUS_LOG_INFO(kEnv, "writing the trace to ", path);
    return true;
  }

  static std::string expand(const std::string& name, int rank) {
    std::string out;
    bool perRank = false;
    for (size_t i = 0; i < name.size(); ++i) {
      if (name[i] == '%' && i + 1 < name.size()) {
        const char c = name[i + 1];
        if (c == 'r' || c == 'p' || c == 'h') {
          ++i;
          perRank = perRank || c != 'h';
          if (c == 'r') out += std::to_string(rank);
          if (c == 'p') out += std::to_string(getpid());
          if (c == 'h') {
            char host[256] = {0};
            gethostname(host, sizeof(host) - 1);
            out += host;
          }
          continue;
        }
      }
      out += name[i];
    }
    if (perRank) return out;
    const size_t slash = out.rfind('/');
    const size_t dot = out.rfind('.');
    const std::string tag = ".rank" + std::to_string(rank);
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return out + tag;
    return out.substr(0, dot) + tag + out.substr(dot);
  }

  std::mutex mu_;
  FILE* f_ = nullptr;
  bool failed_ = false;
  int firstRank_ = 0;
  RankSet namedRanks_;
};

// Never destroyed: a stream thread may still finish an operation while the process exits; the file is
// closed by an exit handler instead, after which events are dropped.
TraceFile& traceFile() {
  static TraceFile* file = [] {
    auto* f = new TraceFile;
    std::atexit([] { traceFile().close(); });
    return f;
  }();
  return *file;
}

// Escapes what JSON needs in a connection name (they hold only printable ASCII, but be safe).
std::string jsonText(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += (c >= 0x20 ? c : ' ');
  }
  return out;
}

}  // namespace

bool traceRequested() {
  return !param::TraceFile().empty();
}

OpTrace::OpTrace(int rank, uint64_t commHash) : rank_(rank), commHash_(commHash), startNs_(nowNs()) {
  saved_ = currentWaitObserver();
  currentWaitObserver() = this;
}

OpTrace::~OpTrace() {
  currentWaitObserver() = saved_;
}

void OpTrace::waited(const char* what, const std::string& where, uint64_t startNs, uint64_t endNs) {
  if (endNs - startNs < 1000 || waits_ >= kMaxWaitsPerOp) return;
  ++waits_;
  char buf[512];
  snprintf(buf, sizeof(buf),
           "{\"name\":\"wait\",\"cat\":\"wait\",\"ph\":\"X\",\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"dur\":%.3f,"
           "\"args\":{\"for\":\"%s\",\"connection\":\"%s\"}},\n",
           rank_, epochUs(startNs), static_cast<double>(endNs - startNs) / 1000.0, jsonText(what).c_str(),
           jsonText(where).c_str());
  events_ += buf;
}

void OpTrace::finish(const coll::CollOp& op, size_t nops, int nranks, bool ok) {
  const uint64_t end = nowNs();
  char buf[768];
  const bool send = coll::isSendRecv(op.type);
  snprintf(buf, sizeof(buf),
           "{\"name\":\"%s%s\",\"cat\":\"op\",\"ph\":\"X\",\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"dur\":%.3f,"
           "\"args\":{\"seq\":%" PRIu64 ",\"comm\":\"%016" PRIx64
           "\",\"count\":%zu,\"dtype\":\"%s\",\"bytes\":%zu,\"algo\":\"%s\",\"channels\":%d,\"%s\":%d,\"ops\":%zu,"
           "\"ok\":%s}},\n",
           coll::collName(op.type), nops > 1 ? "+group" : "", rank_, epochUs(startNs_),
           static_cast<double>(end - startNs_) / 1000.0, op.recordSeq, commHash_, op.count, reduce::dtypeName(op.dtype),
           coll::collBytes(op, nranks), coll::isP2p(op.type) ? "P2P" : coll::algoName(op.algo), op.nChannels,
           send ? "peer" : "root", send ? op.peer : (coll::isRooted(op.type) ? op.root : -1), nops,
           ok ? "true" : "false");
  // The operation first: a viewer nests the waits that follow inside it.
  std::string all = buf;
  all += events_;
  traceFile().write(rank_, all);
}

void flushTrace() {
  traceFile().flush();
}

}  // namespace chorus::core
