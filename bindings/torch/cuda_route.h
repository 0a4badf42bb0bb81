// CUDA tensors: one CUDA communicator per device, made on the first collective over that device's tensors
// by splitting the group's host communicator (every rank makes that call together) with the device in its
// config. Operations are enqueued on the tensor's current CUDA stream, so they are ordered with the kernels
// around them and the host does not wait; a work completes through a CUDA event recorded after it, and its
// future is a CUDA-aware c10 future (as ProcessGroupNCCL's).
//
// Built (cuda_route.cc) when PyTorch itself has CUDA; against a CPU-only PyTorch such as Debian's, the
// stand-in (cuda_route_stub.cc) refuses CUDA tensors with a clear error. Neither has run on a GPU here.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <functional>
#include <map>

#include "chorus/chorus.h"
#include "op_plan.h"

namespace chorus_torch {

class CudaRoute {
 public:
  CudaRoute(int rank, std::chrono::milliseconds timeout);
  ~CudaRoute();
  CudaRoute(const CudaRoute&) = delete;
  CudaRoute& operator=(const CudaRoute&) = delete;

  // Runs plan on `device`'s communicator, splitting it from `host` first if this is the device's first
  // collective (`quiesceHost` is called before: the split is a call on the host communicator).
  c10::intrusive_ptr<c10d::Work> run(OpPlan plan, const at::Device& device, chorusComm_t host,
                                     const std::function<void()>& quiesceHost);

  // True when this build routes CUDA tensors (PyTorch with CUDA at build time).
  static bool built();

 private:
  const int rank_;
  const std::chrono::milliseconds timeout_;
  std::map<int, chorusComm_t> comms_;  // CUDA device index -> communicator
};

}  // namespace chorus_torch
