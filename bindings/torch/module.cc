// chorus_torch._C: the ProcessGroupChorus class for Python. torch.distributed must be imported first (the
// package's __init__.py does), so that c10d's ProcessGroup and Store types are registered with pybind11.
#include <pybind11/chrono.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include "chorus/chorus.h"
#include "cuda_route.h"
#include "process_group_chorus.h"

namespace py = pybind11;

PYBIND11_MODULE(_C, m) {
  m.doc() = "Chorus collectives as a torch.distributed backend";
  py::class_<chorus_torch::ProcessGroupChorus, c10d::ProcessGroup,
             c10::intrusive_ptr<chorus_torch::ProcessGroupChorus>>(m, "ProcessGroupChorus", R"(
A c10d process group whose operations run on a Chorus communicator of its own.

ProcessGroupChorus(store, rank, size, timeout) joins the group's communicator (collective over the group's
ranks); torch.distributed creates it through the registered backend "chorus".)")
      .def(py::init(
               [](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::milliseconds timeout) {
                 return c10::make_intrusive<chorus_torch::ProcessGroupChorus>(store, rank, size, timeout);
               }),
           py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("timeout_ms", &chorus_torch::ProcessGroupChorus::timeoutMs,
                             "The communicator's deadline in milliseconds (the group's timeout).")
      .def("synchronize", &chorus_torch::ProcessGroupChorus::synchronize, py::call_guard<py::gil_scoped_release>(),
           "Blocks until every operation issued on the group so far has completed.");

  m.def(
      "version",
      [] {
        int v = 0;
        chorusGetVersion(&v);
        return v;
      },
      "CHORUS_VERSION_CODE of the loaded Chorus library.");
  m.def("cuda_built", &chorus_torch::CudaRoute::built, "True when this build routes CUDA tensors to Chorus.");
}
