// A CUDA communicator's device state: its rings in device memory, the abort word and per-block reports in
// mapped host memory, an internal stream, and a watchdog thread. Made by the first device launch of the
// communicator; owned by Comm (comm.h) and destroyed before everything else in it, the device connections
// (core/connections.h, made by the CUDA transport) included, which its kernels use.
//
// The watchdog, every few milliseconds:
//   - mirrors Comm::aborted() (chorusCommAbort, shrink with abort) into the mapped abort word that every
//     kernel wait loop polls, so an abort ends kernels waiting on a peer that never comes;
//   - retires finished launches (cudaEventQuery) and turns a non-zero block status into the communicator's
//     asynchronous error (chorusCommGetAsyncError);
//   - compares the blocks' progress counters with their last values: a launch that has started (its start
//     event, recorded on the internal stream after the wait for the caller's stream, has completed) and whose
//     counters have not moved for CHORUS_TIMEOUT_MS (the communicator's timeout) raises the abort word and
//     records chorusTimeout. Time spent queued behind the caller's own work does not count.
// A reported block status is recorded once and the slot is cleared for the next launch.
#pragma once

#include "chorus_build_config.h"

#if CHORUS_BUILD_CUDA

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collectives/device/device_executor.h"
#include "core/comm.h"

namespace chorus::core {

class Comm;

class DeviceComm {
 public:
  explicit DeviceComm(Comm& comm);
  ~DeviceComm();
  DeviceComm(const DeviceComm&) = delete;
  DeviceComm& operator=(const DeviceComm&) = delete;

  // The communicator as the device executor sees it.
  coll::device::DevExecEnv env();

  // The stream kernels run on (non-blocking, so the legacy NULL stream of another rank never serializes it).
  void* internalStream() const { return stream_; }
  // Records the start event of the next launch on internalStream(): called after the internal stream was
  // made to wait for the caller's, before the launch's kernels. The watchdog's clock for that launch starts
  // when this event completes.
  void markStart();
  // Registers the launch just enqueued on internalStream() for the watchdog.
  void trackLaunch(std::string what);

 private:
  struct InFlight {
    void* event = nullptr;  // cudaEvent_t: the launch has finished
    void* start = nullptr;  // cudaEvent_t or nullptr: the launch may run (its predecessors on the stream are done)
    std::string what;
  };

  void watchdogLoop();
  void checkReports(const std::string& what);

  Comm& comm_;
  int device_;
  volatile uint32_t* abortHost_ = nullptr;  // mapped: [0] abort word, then the block reports
  void* abortDev_ = nullptr;
  coll::device::DevBlockReport* reportsHost_ = nullptr;
  coll::device::DevBlockReport* reportsDev_ = nullptr;
  void* mapped_ = nullptr;
  std::vector<int*> deviceRings_;
  void* stream_ = nullptr;

  std::mutex flightMu_;
  std::deque<InFlight> inFlight_;
  void* pendingStart_ = nullptr;  // from markStart, handed to the next trackLaunch
  std::atomic<bool> stop_{false};
  std::mutex stopMu_;
  std::condition_variable stopCv_;
  std::thread watchdog_;
};

// DeviceCommDeleter (declared in comm.h, which sees DeviceComm incomplete) is defined in device_comm.cc.

}  // namespace chorus::core

#endif  // CHORUS_BUILD_CUDA
