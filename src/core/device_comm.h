// A CUDA communicator's device state (issue 6): the device FIFOs of its connections, its rings in device
// memory, the abort word and per-block reports in mapped host memory, an internal stream, and a watchdog
// thread. Made by the first device launch of the communicator; owned by Comm (comm.h) and destroyed before
// everything else in it.
//
// The watchdog, every few milliseconds:
//   - mirrors Comm::aborted() (chorusCommAbort, shrink with abort) into the mapped abort word that every
//     kernel wait loop polls, so an abort ends kernels waiting on a peer that never comes;
//   - retires finished launches (cudaEventQuery) and turns a non-zero block status into the communicator's
//     asynchronous error (chorusCommGetAsyncError);
//   - compares the blocks' progress counters with their last values: a launch in flight whose counters have
//     not moved for CHORUS_TIMEOUT_MS (the communicator's timeout) raises the abort word and records
//     chorusTimeout.
#pragma once

#include "chorus_build_config.h"

#if CHORUS_BUILD_CUDA

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collectives/conn_key.h"
#include "collectives/device/device_executor.h"
#include "core/comm.h"

namespace chorus::core {

class Comm;

class DeviceComm : public coll::device::DevConnProvider {
 public:
  explicit DeviceComm(Comm& comm);
  ~DeviceComm() override;
  DeviceComm(const DeviceComm&) = delete;
  DeviceComm& operator=(const DeviceComm&) = delete;

  // Connection set-up in the two deadlock-free phases of Comm::ensureConnected, split so that one thread can
  // run phase 1 for every communicator of a group before phase 2 for any. Collective between the peers named.
  void postReceivers(const std::vector<coll::ConnKey>& keys);
  void connectSenders(const std::vector<coll::ConnKey>& keys);

  coll::device::DevConn devSendConn(int peer, int lane) override;
  coll::device::DevConn devRecvConn(int peer, int lane) override;
  coll::device::DevExecEnv env();

  // The stream kernels run on (non-blocking, so the legacy NULL stream of another rank never serializes it).
  void* internalStream() const { return stream_; }
  // Registers the launch just enqueued on internalStream() for the watchdog.
  void trackLaunch(std::string what);

 private:
  struct Fifo {
    void* alloc = nullptr;   // what to free or close
    bool ownsAlloc = false;  // deviceAlloc here (receiver) vs. a mapping of the peer's (sender)
    bool ipcMapped = false;
    coll::device::DevConn conn;
  };
  struct InFlight {
    void* event = nullptr;  // cudaEvent_t
    std::string what;
  };

  void watchdogLoop();
  void checkReports(const std::string& what);
  void releaseFifo(Fifo& f);

  Comm& comm_;
  int device_;
  uint64_t tagBase_;
  volatile uint32_t* abortHost_ = nullptr;  // mapped: [0] abort word, then the block reports
  void* abortDev_ = nullptr;
  coll::device::DevBlockReport* reportsHost_ = nullptr;
  coll::device::DevBlockReport* reportsDev_ = nullptr;
  void* mapped_ = nullptr;
  std::vector<int*> deviceRings_;
  void* stream_ = nullptr;

  std::mutex connMu_;
  std::map<coll::ConnKey, Fifo> sends_;
  std::map<coll::ConnKey, Fifo> recvs_;

  std::mutex flightMu_;
  std::deque<InFlight> inFlight_;
  std::atomic<bool> stop_{false};
  std::mutex stopMu_;
  std::condition_variable stopCv_;
  std::thread watchdog_;
};

// DeviceCommDeleter (declared in comm.h, which sees DeviceComm incomplete) is defined in device_comm.cc.

}  // namespace chorus::core

#endif  // CHORUS_BUILD_CUDA
