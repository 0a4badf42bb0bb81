// StepRecorder: a Primitives type that runs nothing and records every call an algorithm makes.
//
// Tests instantiate the algorithms of src/collectives/algo with it to get each rank's schedule (the list of
// calls with their peers, offsets, sizes and postOp flags), then check the schedules of all ranks together
// (algo_sim.h executes them symbolically). Test-only code: host only, not an algorithm body, so it may use
// std::vector.
//
// Several recorders may share one log: a tree algorithm's `up` and `down` Primitives append to the same
// vector, so the log keeps the order in which the rank issues its calls across both.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <vector>

#include "collectives/primitives.h"

namespace chorus::coll {

enum class StepKind {
  kSend,
  kSendFromOutput,
  kRecv,
  kRecvReduceSend,
  kRecvReduceCopy,
  kRecvReduceCopySend,
  kRecvCopySend,
  kCopySend,
  kLocalCopy,
  kRecvReduceOutput,
  kLocalReduce,
};

const char* stepKindName(StepKind kind);

// What a call reads and writes, for a simulator or a printer.
struct StepTraits {
  bool recvs = false;         // consumes one message from every recv peer
  bool sends = false;         // produces one message for every send peer
  bool readsInput = false;    // reads input[inOff, inOff + n) (premultiplied)
  bool readsOutput = false;   // reads output[outOff, outOff + n) (sendFromOutput)
  bool writesOutput = false;  // writes output[outOff, outOff + n)
  bool reduces = false;       // combines the input with what it receives (else copies what it receives)
  bool accumulates = false;   // reduces into output[outOff, outOff + n), which an earlier call wrote
};

StepTraits stepTraits(StepKind kind);

struct Step {
  StepKind kind = StepKind::kSend;
  int recvPeers[kMaxRecvPeers] = {};
  int nRecvPeers = 0;  // the recorder's recv list, whether or not this kind receives
  int sendPeers[kMaxSendPeers] = {};
  int nSendPeers = 0;
  size_t inOff = 0;   // valid where the kind reads input
  size_t outOff = 0;  // valid where the kind reads or writes output
  size_t n = 0;
  bool postOp = false;
  bool inputCopy = false;  // the input is a copy the executor made (in place: not the output's alias)
};

class StepRecorder {
 public:
  // Appends to *log; receives from recvPeers and sends to sendPeers (ranks; at most kMaxRecvPeers and
  // kMaxSendPeers of them, extra ones are dropped).
  StepRecorder(std::vector<Step>* log, std::initializer_list<int> recvPeers, std::initializer_list<int> sendPeers)
      : log_(log) {
    for (int r : recvPeers) {
      if (nRecv_ < kMaxRecvPeers) recv_[nRecv_++] = r;
    }
    for (int r : sendPeers) {
      if (nSend_ < kMaxSendPeers) send_[nSend_++] = r;
    }
  }
  StepRecorder(std::vector<Step>* log, const int* recvPeers, int nRecv, const int* sendPeers, int nSend) : log_(log) {
    for (int i = 0; i < nRecv && nRecv_ < kMaxRecvPeers; ++i) recv_[nRecv_++] = recvPeers[i];
    for (int i = 0; i < nSend && nSend_ < kMaxSendPeers; ++i) send_[nSend_++] = sendPeers[i];
  }

  void send(size_t inOff, size_t n) { add(StepKind::kSend, inOff, 0, n, false); }
  void sendFromOutput(size_t outOff, size_t n) { add(StepKind::kSendFromOutput, 0, outOff, n, false); }
  void recv(size_t outOff, size_t n) { add(StepKind::kRecv, 0, outOff, n, false); }
  void recvReduceSend(size_t inOff, size_t n) { add(StepKind::kRecvReduceSend, inOff, 0, n, false); }
  void recvReduceCopy(size_t inOff, size_t outOff, size_t n, bool postOp) {
    add(StepKind::kRecvReduceCopy, inOff, outOff, n, postOp);
  }
  void recvReduceCopySend(size_t inOff, size_t outOff, size_t n, bool postOp) {
    add(StepKind::kRecvReduceCopySend, inOff, outOff, n, postOp);
  }
  void recvCopySend(size_t outOff, size_t n) { add(StepKind::kRecvCopySend, 0, outOff, n, false); }
  void copySend(size_t inOff, size_t outOff, size_t n, bool postOp) {
    add(StepKind::kCopySend, inOff, outOff, n, postOp);
  }
  void localCopy(size_t inOff, size_t outOff, size_t n, bool postOp) {
    add(StepKind::kLocalCopy, inOff, outOff, n, postOp);
  }
  void recvReduceOutput(size_t outOff, size_t n, bool postOp) {
    add(StepKind::kRecvReduceOutput, 0, outOff, n, postOp);
  }
  void localReduce(size_t inOff, size_t outOff, size_t n, bool postOp) {
    add(StepKind::kLocalReduce, inOff, outOff, n, postOp);
  }

  // Marks the calls recorded from now on as reading a copy of the input (the executor's in-place staging).
  void readCopyOfInput() { inputCopy_ = true; }

 private:
  void add(StepKind kind, size_t inOff, size_t outOff, size_t n, bool postOp) {
    Step s;
    s.kind = kind;
    for (int i = 0; i < nRecv_; ++i) s.recvPeers[i] = recv_[i];
    s.nRecvPeers = nRecv_;
    for (int i = 0; i < nSend_; ++i) s.sendPeers[i] = send_[i];
    s.nSendPeers = nSend_;
    s.inOff = inOff;
    s.outOff = outOff;
    s.n = n;
    s.postOp = postOp;
    s.inputCopy = inputCopy_;
    log_->push_back(s);
  }

  std::vector<Step>* log_;
  int recv_[kMaxRecvPeers] = {};
  int nRecv_ = 0;
  int send_[kMaxSendPeers] = {};
  int nSend_ = 0;
  bool inputCopy_ = false;
};

inline const char* stepKindName(StepKind kind) {
  switch (kind) {
    case StepKind::kSend: return "send";
    case StepKind::kSendFromOutput: return "sendFromOutput";
    case StepKind::kRecv: return "recv";
    case StepKind::kRecvReduceSend: return "recvReduceSend";
    case StepKind::kRecvReduceCopy: return "recvReduceCopy";
    case StepKind::kRecvReduceCopySend: return "recvReduceCopySend";
    case StepKind::kRecvCopySend: return "recvCopySend";
    case StepKind::kCopySend: return "copySend";
    case StepKind::kLocalCopy: return "localCopy";
    case StepKind::kRecvReduceOutput: return "recvReduceOutput";
    case StepKind::kLocalReduce: return "localReduce";
  }
  return "?";
}

inline StepTraits stepTraits(StepKind kind) {
  StepTraits t;
  switch (kind) {
    case StepKind::kSend: t.sends = t.readsInput = true; break;
    case StepKind::kSendFromOutput: t.sends = t.readsOutput = true; break;
    case StepKind::kRecv: t.recvs = t.writesOutput = true; break;
    case StepKind::kRecvReduceSend: t.recvs = t.sends = t.readsInput = t.reduces = true; break;
    case StepKind::kRecvReduceCopy: t.recvs = t.readsInput = t.writesOutput = t.reduces = true; break;
    case StepKind::kRecvReduceCopySend: t.recvs = t.sends = t.readsInput = t.writesOutput = t.reduces = true; break;
    case StepKind::kRecvCopySend: t.recvs = t.sends = t.writesOutput = true; break;
    case StepKind::kCopySend: t.sends = t.readsInput = t.writesOutput = true; break;
    case StepKind::kLocalCopy: t.readsInput = t.writesOutput = true; break;
    case StepKind::kRecvReduceOutput: t.recvs = t.writesOutput = t.reduces = t.accumulates = true; break;
    case StepKind::kLocalReduce: t.readsInput = t.writesOutput = t.reduces = t.accumulates = true; break;
  }
  return t;
}

}  // namespace chorus::coll
